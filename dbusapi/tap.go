package dbusapi

import (
	"strings"
	"sync"
	"sync/atomic"

	"github.com/antidrift/antidrift/dbusapi/wire"
)

// An answerer replies to a method call where it is read, or returns ok
// false to leave it to godbus. It runs in the connection's reading
// goroutine: it must not call the bus and wait (the reply would never be
// read).
type answerer func(call wire.Header, msg []byte) (signature string, body []byte, ok bool)

// tap is the bus socket as godbus sees it, with one difference: a call the
// answerer takes is answered where it is read, from godbus's reading
// goroutine, and never reaches godbus. That saves what dominates a
// property read's round trip in godbus — a goroutine per call and
// reflection to decode, dispatch and encode. Everything else passes
// through byte for byte, including all of the authentication exchange.
type tap struct {
	sock    *quietSocket
	serials serials
	answer  atomic.Pointer[answerer]
	began   atomic.Bool // godbus sent BEGIN: from here on the stream is messages

	wmu     sync.Mutex // a message is written whole, ours or godbus's
	scratch []byte     // the reply being written, under wmu

	// Read state, used only by the goroutine that reads.
	buf    []byte // what in and out point into
	in     []byte // read from the socket, not yet sorted
	out    []byte // the message godbus is reading, or the rest of an opaque stream
	opaque bool   // the stream stopped parsing as messages: pass the rest through
}

// Read gives godbus the messages the answerer does not take.
func (t *tap) Read(p []byte) (int, error) {
	if !t.began.Load() {
		return t.sock.Read(p)
	}
	for len(t.out) == 0 {
		if err := t.next(); err != nil {
			return 0, err
		}
	}
	n := copy(p, t.out)
	t.out = t.out[n:]
	return n, nil
}

// next makes out the next message for godbus, answering on the way the
// ones the answerer takes. Messages are sorted in order, one at a time, so
// nothing godbus reads is overtaken by a reply to a later call.
func (t *tap) next() error {
	for {
		if t.opaque && len(t.in) > 0 {
			t.out, t.in = t.in, t.in[len(t.in):]
			return nil
		}
		size, err := wire.Len(t.in)
		switch {
		case err != nil:
			t.opaque = true // godbus reads the same bytes and says what is wrong
			continue
		case size > 0 && size <= len(t.in):
			msg := t.in[:size]
			t.in = t.in[size:]
			answered, err := t.tryAnswer(msg)
			if err != nil {
				return err
			}
			if !answered {
				t.out = msg
				return nil
			}
			continue
		}
		if err := t.read(max(size-len(t.in), 4096)); err != nil {
			return err
		}
	}
}

// readBuffer is the read buffer's usual size. A bigger message gets a
// buffer of its size, given back once it has been read: under the
// daemon's memory limit one 10 MiB message must not stay resident.
const readBuffer = 64 << 10

// read reads from the socket once, with room for at least n more bytes.
// Only next calls it, while godbus has nothing left to read in out, so
// moving in within buf moves nothing godbus still reads.
func (t *tap) read(n int) error {
	if cap(t.in)-len(t.in) < n {
		need := len(t.in) + n
		if need > len(t.buf) || (len(t.buf) > readBuffer && need <= readBuffer) {
			t.buf = make([]byte, max(need, readBuffer))
		}
		t.in = t.buf[:copy(t.buf, t.in)]
	}
	k, err := t.sock.Read(t.in[len(t.in):cap(t.in)])
	t.in = t.in[:len(t.in)+k]
	if k > 0 {
		return nil // an error comes again on the next read
	}
	return err
}

// tryAnswer answers msg if the answerer takes it.
func (t *tap) tryAnswer(msg []byte) (bool, error) {
	answer := t.answer.Load()
	if answer == nil || msg[1] != wire.TypeMethodCall {
		return false, nil
	}
	call, err := wire.ParseHeader(msg)
	if err != nil || call.Flags&wire.FlagNoReplyExpected != 0 || call.UnixFDs != 0 {
		return false, nil
	}
	sig, body, ok := (*answer)(call, msg)
	if !ok {
		return false, nil
	}
	t.wmu.Lock()
	defer t.wmu.Unlock()
	t.scratch = wire.AppendMethodReturn(t.scratch[:0], t.serials.GetSerial(), call.Serial, call.Sender, sig, body)
	_, err = t.sock.Write(t.scratch)
	return true, err
}

// Write sends what godbus writes: authentication lines, then one whole
// message per call (godbus encodes a message into one buffer first).
func (t *tap) Write(p []byte) (int, error) {
	t.wmu.Lock()
	defer t.wmu.Unlock()
	if !t.began.Load() && strings.HasPrefix(string(p), "BEGIN\r\n") {
		t.began.Store(true)
	}
	return t.sock.Write(p)
}

func (t *tap) Close() error { return t.sock.Close() }

// serials numbers the connection's messages, godbus's and the tap's alike:
// a reply the tap writes must not take a serial a pending call of godbus's
// waits on.
type serials struct{ last atomic.Uint32 }

func (s *serials) GetSerial() uint32 {
	for {
		if n := s.last.Add(1); n != 0 { // 0 is not a serial; skip it on wrap
			return n
		}
	}
}

func (s *serials) RetireSerial(uint32) {}
