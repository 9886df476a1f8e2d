// Package wire reads and writes the few pieces of the D-Bus wire format
// that dbusapi's reply fast path needs: where a message ends in a byte
// stream, a method call's header fields and its first string argument, and
// a method return around a body already encoded. Everything else about a
// message is godbus's business; whatever this package is unsure of it
// reports as an error, and the caller leaves that message to godbus.
package wire

import (
	"bytes"
	"encoding/binary"
	"errors"
	"fmt"

	"github.com/godbus/dbus/v5"
)

// Message types and flags (D-Bus specification, "Message Format").
const (
	TypeMethodCall   = 1
	TypeMethodReturn = 2

	FlagNoReplyExpected = 0x1
)

// MaxMessage is the largest message the specification allows (128 MiB).
const MaxMessage = 1 << 27

const fixedHeader = 16 // endianness, type, flags, version, body length, serial, fields length

// Header field codes.
const (
	fieldPath        = 1
	fieldInterface   = 2
	fieldMember      = 3
	fieldErrorName   = 4
	fieldReplySerial = 5
	fieldDestination = 6
	fieldSender      = 7
	fieldSignature   = 8
	fieldUnixFDs     = 9
)

// ErrMalformed says a message breaks the wire format, or uses a part of it
// this package does not read.
var ErrMalformed = errors.New("malformed or unsupported D-Bus message")

// Header is what a message's fixed header and header fields say.
type Header struct {
	Type, Flags byte
	Serial      uint32
	Path        string
	Interface   string
	Member      string
	Destination string
	Sender      string
	Signature   string
	UnixFDs     uint32
	order       binary.ByteOrder
	bodyAt      int
}

// Len is the length of the message at the start of buf: 0 while buf holds
// less than its fixed header and fields length, else its full length
// (which may exceed len(buf): read more). It fails on a byte stream that
// is not a D-Bus message.
func Len(buf []byte) (int, error) {
	if len(buf) < fixedHeader {
		return 0, nil
	}
	order, err := byteOrder(buf[0])
	if err != nil {
		return 0, err
	}
	body := uint64(order.Uint32(buf[4:8]))
	fields := uint64(order.Uint32(buf[12:16]))
	n := align(fixedHeader+fields, 8) + body
	if n > MaxMessage {
		return 0, fmt.Errorf("%w: %d bytes, more than the specification's 128 MiB", ErrMalformed, n)
	}
	return int(n), nil
}

// ParseHeader reads the header of msg, one whole message (see Len).
func ParseHeader(msg []byte) (Header, error) {
	n, err := Len(msg)
	if err != nil {
		return Header{}, err
	}
	if n == 0 || n != len(msg) || msg[3] != 1 {
		return Header{}, ErrMalformed
	}
	h := Header{Type: msg[1], Flags: msg[2], order: mustOrder(msg[0])}
	h.Serial = h.order.Uint32(msg[8:12])
	end := fixedHeader + int(h.order.Uint32(msg[12:16]))
	h.bodyAt = int(align(uint64(end), 8))
	r := reader{buf: msg[:end], off: fixedHeader, order: h.order}
	for r.off < end {
		r.align(8)
		code := r.byte()
		sig := r.signature()
		switch {
		case sig == "s" || sig == "o":
			v := r.string()
			switch code {
			case fieldPath:
				h.Path = v
			case fieldInterface:
				h.Interface = v
			case fieldMember:
				h.Member = v
			case fieldErrorName:
			case fieldDestination:
				h.Destination = v
			case fieldSender:
				h.Sender = v
			default:
				r.fail()
			}
		case sig == "g" && code == fieldSignature:
			h.Signature = r.signature()
		case sig == "u" && (code == fieldReplySerial || code == fieldUnixFDs):
			if v := r.uint32(); code == fieldUnixFDs {
				h.UnixFDs = v
			}
		default:
			r.fail() // a field this package does not know how to skip
		}
		if r.err != nil {
			return Header{}, r.err
		}
	}
	if r.off != end || h.Serial == 0 || !allZero(msg[end:h.bodyAt]) {
		return Header{}, ErrMalformed
	}
	return h, nil
}

// FirstString is the first argument of msg, whose header is h, when the
// body's signature starts with a string.
func FirstString(msg []byte, h Header) (string, error) {
	if len(h.Signature) == 0 || h.Signature[0] != 's' {
		return "", ErrMalformed
	}
	r := reader{buf: msg, off: h.bodyAt, order: h.order}
	s := r.string()
	return s, r.err
}

// AppendMethodReturn appends to dst a little-endian method return with
// serial, answering replySerial, addressed to destination, whose body is
// body: values of signature already encoded little-endian, as from the
// start of an 8-aligned message body.
func AppendMethodReturn(dst []byte, serial, replySerial uint32, destination, signature string, body []byte) []byte {
	w := writer{buf: dst, start: len(dst)}
	w.buf = append(w.buf, 'l', TypeMethodReturn, 0, 1)
	w.uint32(uint32(len(body)))
	w.uint32(serial)
	lenAt := len(w.buf)
	w.uint32(0) // fields length, filled in below
	w.align(8)
	w.buf = append(w.buf, fieldReplySerial, 1, 'u', 0)
	w.uint32(replySerial)
	w.align(8)
	w.buf = append(w.buf, fieldDestination, 1, 's', 0)
	w.string(destination)
	if len(body) > 0 {
		w.align(8)
		w.buf = append(w.buf, fieldSignature, 1, 'g', 0, byte(len(signature)))
		w.buf = append(w.buf, signature...)
		w.buf = append(w.buf, 0)
	}
	binary.LittleEndian.PutUint32(w.buf[lenAt:], uint32(len(w.buf)-w.start-fixedHeader))
	w.align(8)
	return append(w.buf, body...)
}

// Body encodes values, with godbus, as the body of a little-endian
// message, and returns it with its signature.
func Body(values ...any) (signature string, body []byte, err error) {
	sig := dbus.SignatureOf(values...)
	msg := &dbus.Message{Type: dbus.TypeMethodReply, Headers: map[dbus.HeaderField]dbus.Variant{
		dbus.FieldReplySerial: dbus.MakeVariant(uint32(1)),
		dbus.FieldSignature:   dbus.MakeVariant(sig),
	}, Body: values}
	var buf bytes.Buffer
	if err := msg.EncodeTo(&buf, binary.LittleEndian); err != nil {
		return "", nil, err
	}
	b := buf.Bytes()
	return sig.String(), b[len(b)-int(binary.LittleEndian.Uint32(b[4:8])):], nil
}

func byteOrder(b byte) (binary.ByteOrder, error) {
	switch b {
	case 'l':
		return binary.LittleEndian, nil
	case 'B':
		return binary.BigEndian, nil
	}
	return nil, fmt.Errorf("%w: endianness byte %q", ErrMalformed, b)
}

func mustOrder(b byte) binary.ByteOrder {
	o, _ := byteOrder(b)
	return o
}

func align(n, to uint64) uint64 { return (n + to - 1) &^ (to - 1) }

// allZero says whether padding is all zero bytes, as it must be.
func allZero(padding []byte) bool {
	for _, b := range padding {
		if b != 0 {
			return false
		}
	}
	return true
}

// reader walks a message; the first problem sticks in err.
type reader struct {
	buf   []byte
	off   int
	order binary.ByteOrder
	err   error
}

func (r *reader) fail() {
	if r.err == nil {
		r.err = ErrMalformed
	}
	r.off = len(r.buf)
}

func (r *reader) align(to int) {
	next := int(align(uint64(r.off), uint64(to)))
	if next > len(r.buf) {
		r.fail()
		return
	}
	if !allZero(r.buf[r.off:next]) {
		r.fail()
		return
	}
	r.off = next
}

func (r *reader) take(n int) []byte {
	if r.err != nil || n < 0 || n > len(r.buf)-r.off {
		r.fail()
		return nil
	}
	b := r.buf[r.off : r.off+n]
	r.off += n
	return b
}

func (r *reader) byte() byte {
	if b := r.take(1); b != nil {
		return b[0]
	}
	return 0
}

func (r *reader) uint32() uint32 {
	r.align(4)
	if b := r.take(4); b != nil {
		return r.order.Uint32(b)
	}
	return 0
}

// string reads a STRING or OBJECT_PATH: length, bytes, a nul.
func (r *reader) string() string {
	n := r.uint32()
	if n > MaxMessage {
		r.fail()
		return ""
	}
	return r.terminated(int(n))
}

// signature reads a SIGNATURE: a one-byte length, bytes, a nul.
func (r *reader) signature() string {
	return r.terminated(int(r.byte()))
}

func (r *reader) terminated(n int) string {
	b := r.take(n + 1)
	if b == nil || b[n] != 0 {
		r.fail()
		return ""
	}
	return string(b[:n])
}

// writer builds a little-endian message starting at buf[start].
type writer struct {
	buf   []byte
	start int
}

func (w *writer) align(to int) {
	for (len(w.buf)-w.start)%to != 0 {
		w.buf = append(w.buf, 0)
	}
}

func (w *writer) uint32(v uint32) {
	w.align(4)
	w.buf = binary.LittleEndian.AppendUint32(w.buf, v)
}

func (w *writer) string(s string) {
	w.uint32(uint32(len(s)))
	w.buf = append(w.buf, s...)
	w.buf = append(w.buf, 0)
}
