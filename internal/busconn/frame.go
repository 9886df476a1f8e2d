package busconn

import (
	"bytes"
	"encoding/binary"
	"errors"
	"fmt"
	"io"

	"github.com/godbus/dbus/v5"
)

// MaxMessage is the largest message a connection hands to godbus. No call
// the daemon serves, and no reply or signal it waits for, comes near it:
// the largest, a Start with its allowed classes, is a few KiB.
const MaxMessage = 64 << 10

const fixedHeader = 16 // endianness, type, flags, version, body length, serial, fields length

// ErrLostFraming says the bus sent bytes that do not start a message where
// one must start. The bus checks every message it relays, so this means a
// broken bus; the only safe answer is to drop the connection.
var ErrLostFraming = errors.New("the bus sent a message with an unreadable fixed header; the connection cannot be read on safely")

// Skipped is a message the framer did not hand to godbus, described from
// its fixed header and, where they were small enough to read, its header
// fields. Its body is never read, only counted past.
type Skipped struct {
	Type, Flags byte
	Serial      uint32
	Size        uint64 // as its header declares it
	Sender      string
	Path        string
	Interface   string
	Member      string
	// Unreadable: godbus could not decode it (it was not too long). A
	// message the bus relayed and godbus cannot read would otherwise
	// close the connection.
	Unreadable error
}

// WantsReply says whether the sender waits for an answer to it.
func (s Skipped) WantsReply() bool {
	return s.Type == byte(dbus.TypeMethodCall) && s.Flags&byte(dbus.FlagNoReplyExpected) == 0 && s.Sender != "" && s.Serial != 0
}

// framer is the read side of a bus connection as godbus sees it. It finds
// where each message ends from its fixed header alone, and hands godbus
// only whole messages it has checked godbus can decode, so godbus can
// never stop inside one and take the rest for the next. Everything before
// the authentication's BEGIN passes through as it is.
type framer struct {
	src   io.Reader
	limit int
	skip  func(Skipped) // called from the reading goroutine; must not block

	began bool   // the byte stream is messages from here on
	buf   []byte // holds in and cur; at least limit long
	in    []byte // read, not yet framed
	cur   []byte // the rest of the message godbus is reading
	err   error  // sticky: after a lost framing nothing more is read
}

func newFramer(src io.Reader, limit int, skip func(Skipped)) *framer {
	return &framer{src: src, limit: limit, skip: skip, buf: make([]byte, max(limit, 4096))}
}

// Read gives godbus the bytes of one checked message after another.
func (f *framer) Read(p []byte) (int, error) {
	if !f.began {
		return f.src.Read(p)
	}
	if len(f.cur) == 0 {
		msg, err := f.next()
		if err != nil {
			return 0, err
		}
		f.cur = msg
	}
	n := copy(p, f.cur)
	f.cur = f.cur[n:]
	return n, nil
}

// begin switches to framing: the authentication is over.
func (f *framer) begin() { f.began = true }

// next returns the next message godbus can read, skipping every one that is
// too long or that godbus could not decode. Only a broken fixed header, or
// the socket's end, stops it.
func (f *framer) next() ([]byte, error) {
	for f.err == nil {
		if f.err = f.fill(fixedHeader); f.err != nil {
			break
		}
		h, err := readFixed(f.in)
		if err != nil {
			f.err = err
			break
		}
		if h.size <= uint64(f.limit) {
			if f.err = f.fill(int(h.size)); f.err != nil {
				break
			}
			msg := f.in[:h.size]
			f.in = f.in[h.size:]
			bad := decodable(msg)
			if bad == nil {
				return msg, nil
			}
			s := h.skipped(msg)
			s.Unreadable = bad
			f.skip(s)
			continue
		}
		s := h.skipped(nil)
		if h.fieldsEnd <= uint64(f.limit) {
			if f.err = f.fill(int(h.fieldsEnd)); f.err != nil {
				break
			}
			s = h.skipped(f.in[:h.fieldsEnd])
		}
		if f.err = f.discard(h.size); f.err != nil {
			break
		}
		f.skip(s)
	}
	return nil, f.err
}

// fill reads until in holds at least n bytes (n <= len(buf)).
func (f *framer) fill(n int) error {
	for len(f.in) < n {
		if cap(f.in) < n { // in starts too far into buf: move it to the front
			f.in = f.buf[:copy(f.buf, f.in)]
		}
		k, err := f.src.Read(f.in[len(f.in):cap(f.in)])
		f.in = f.in[:len(f.in)+k]
		if k == 0 && err != nil {
			if err == io.EOF && len(f.in) > 0 {
				err = io.ErrUnexpectedEOF
			}
			return err
		}
	}
	return nil
}

// discard counts n bytes past, reading them through buf, never holding
// more than buf of them.
func (f *framer) discard(n uint64) error {
	if n <= uint64(len(f.in)) {
		f.in = f.in[n:]
		return nil
	}
	n -= uint64(len(f.in))
	f.in = f.buf[:0]
	for n > 0 {
		r, err := f.src.Read(f.buf)
		if uint64(r) > n { // the start of the next message
			f.in = f.buf[n:r]
			return nil
		}
		n -= uint64(r)
		if r == 0 && err != nil {
			if err == io.EOF {
				err = io.ErrUnexpectedEOF
			}
			return err
		}
	}
	return nil
}

// decodable says why godbus cannot decode msg, one whole message, or nil.
// It asks godbus itself: what it reads here it reads again from the
// stream, so it will not fail there halfway (which would desynchronize the
// stream) or on the body (which would close the connection).
func decodable(msg []byte) error {
	r := bytes.NewReader(msg)
	if _, err := dbus.DecodeMessage(r); err != nil {
		return err
	}
	if r.Len() != 0 {
		return fmt.Errorf("%d bytes left after the message", r.Len())
	}
	return nil
}

// fixed is what a message's fixed header says.
type fixed struct {
	order       binary.ByteOrder
	typ, flags  byte
	serial      uint32
	fieldsEnd   uint64 // where the header fields end, padded to 8
	size        uint64 // the whole message
	fieldsBytes uint32
}

// readFixed reads the 16-byte fixed header at the start of b. Lengths may
// be anything a uint32 holds: a message the bus relayed is as long as it
// says, whatever that is; it is the endianness and version bytes that say
// whether b starts a message at all.
func readFixed(b []byte) (fixed, error) {
	var h fixed
	switch b[0] {
	case 'l':
		h.order = binary.LittleEndian
	case 'B':
		h.order = binary.BigEndian
	default:
		return h, fmt.Errorf("%w (endianness byte %#x)", ErrLostFraming, b[0])
	}
	if b[3] != 1 {
		return h, fmt.Errorf("%w (protocol version %d)", ErrLostFraming, b[3])
	}
	h.typ, h.flags = b[1], b[2]
	h.serial = h.order.Uint32(b[8:12])
	h.fieldsBytes = h.order.Uint32(b[12:16])
	h.fieldsEnd = align8(fixedHeader + uint64(h.fieldsBytes))
	h.size = h.fieldsEnd + uint64(h.order.Uint32(b[4:8]))
	return h, nil
}

func align8(n uint64) uint64 { return (n + 7) &^ 7 }

// skipped describes the message; fields, when not nil, holds its fixed
// header and header fields, from which it takes what it can read.
func (h fixed) skipped(fields []byte) Skipped {
	s := Skipped{Type: h.typ, Flags: h.flags, Serial: h.serial, Size: h.size}
	if fields == nil {
		return s
	}
	end := min(uint64(len(fields)), fixedHeader+uint64(h.fieldsBytes))
	r := fieldReader{b: fields[:end], off: fixedHeader, order: h.order}
	for r.ok() {
		r.align(8)
		code := r.byte()
		sig := r.signature()
		if sig == "u" {
			r.uint32()
			continue
		}
		if sig == "g" {
			r.signature()
			continue
		}
		if sig != "s" && sig != "o" {
			break // a field of a type not read here ends the reading
		}
		v := r.string()
		switch code {
		case byte(dbus.FieldPath):
			s.Path = v
		case byte(dbus.FieldInterface):
			s.Interface = v
		case byte(dbus.FieldMember):
			s.Member = v
		case byte(dbus.FieldSender):
			s.Sender = v
		}
	}
	return s
}

// fieldReader walks header fields; a read past the end stops it.
type fieldReader struct {
	b     []byte
	off   int
	order binary.ByteOrder
	bad   bool
}

func (r *fieldReader) ok() bool { return !r.bad && r.off < len(r.b) }

func (r *fieldReader) take(n int) []byte {
	if r.bad || n < 0 || n > len(r.b)-r.off {
		r.bad = true
		return nil
	}
	r.off += n
	return r.b[r.off-n : r.off]
}

func (r *fieldReader) align(to int) { r.take((to - r.off%to) % to) }

func (r *fieldReader) byte() byte {
	if b := r.take(1); b != nil {
		return b[0]
	}
	return 0
}

func (r *fieldReader) uint32() uint32 {
	r.align(4)
	if b := r.take(4); b != nil {
		return r.order.Uint32(b)
	}
	return 0
}

func (r *fieldReader) string() string { return r.terminated(int(r.uint32())) }

func (r *fieldReader) signature() string { return r.terminated(int(r.byte())) }

func (r *fieldReader) terminated(n int) string {
	b := r.take(n + 1)
	if b == nil || b[n] != 0 {
		r.bad = true
		return ""
	}
	return string(b[:n])
}
