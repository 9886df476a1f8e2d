package wire

import (
	"encoding/binary"
	"errors"
	"fmt"
	"io"
)

// HeaderSize is the size of a message header in bytes.
const HeaderSize = 8

// MaxMessageSize is the largest message libwayland sends or accepts by
// default; a compositor that sends a larger size field is talking garbage.
const MaxMessageSize = 4096

// ErrMalformed is wrapped by every error about bytes that do not make a
// well-formed message or argument.
var ErrMalformed = errors.New("malformed Wayland message")

// Message is one request or event: the object it is addressed to, its
// opcode, and its argument bytes (after the header).
type Message struct {
	Object uint32
	Opcode uint16
	Body   []byte
}

// ParseHeader reads a message header. size is the whole message's size,
// header included. A size below the header's own, above MaxMessageSize, or
// not a multiple of 4 is an error: every argument is 4-byte aligned.
func ParseHeader(h []byte) (object uint32, opcode uint16, size int, err error) {
	if len(h) < HeaderSize {
		return 0, 0, 0, fmt.Errorf("%w: header of %d bytes", ErrMalformed, len(h))
	}
	object = binary.NativeEndian.Uint32(h[0:4])
	word := binary.NativeEndian.Uint32(h[4:8])
	size, opcode = int(word>>16), uint16(word)
	if size < HeaderSize || size > MaxMessageSize || size%4 != 0 {
		return 0, 0, 0, fmt.Errorf("%w: size %d", ErrMalformed, size)
	}
	return object, opcode, size, nil
}

// Read reads one message from a byte stream. The body is the caller's to
// keep. A header that makes no sense is an error wrapping ErrMalformed: the
// stream has no way to find the next message after it, so it is done for.
func Read(r io.Reader) (Message, error) {
	var h [HeaderSize]byte
	if _, err := io.ReadFull(r, h[:]); err != nil {
		return Message{}, err
	}
	object, opcode, size, err := ParseHeader(h[:])
	if err != nil {
		return Message{}, err
	}
	body := make([]byte, size-HeaderSize)
	if _, err := io.ReadFull(r, body); err != nil {
		if errors.Is(err, io.EOF) {
			err = io.ErrUnexpectedEOF
		}
		return Message{}, err
	}
	return Message{Object: object, Opcode: opcode, Body: body}, nil
}

// Fixed is the protocol's signed 24.8 fixed-point number.
type Fixed int32

// Float64 is f as a float.
func (f Fixed) Float64() float64 { return float64(f) / 256 }

// Args reads a message's arguments in order. The first error sticks: every
// later read returns a zero value, and Err reports it, so a decoder reads all
// its arguments and checks once.
type Args struct {
	b   []byte
	err error
}

// Args starts reading m's arguments.
func (m Message) Args() *Args { return &Args{b: m.Body} }

// Err is the first error met, or nil.
func (a *Args) Err() error { return a.err }

func (a *Args) fail(format string, v ...any) {
	if a.err == nil {
		a.err = fmt.Errorf("%w: "+format, append([]any{ErrMalformed}, v...)...)
	}
	a.b = nil
}

// word reads one 32-bit word.
func (a *Args) word(what string) uint32 {
	if a.err != nil {
		return 0
	}
	if len(a.b) < 4 {
		a.fail("%s argument cut short", what)
		return 0
	}
	v := binary.NativeEndian.Uint32(a.b)
	a.b = a.b[4:]
	return v
}

// Uint reads a uint argument.
func (a *Args) Uint() uint32 { return a.word("uint") }

// Int reads an int argument.
func (a *Args) Int() int32 { return int32(a.word("int")) }

// Fixed reads a fixed argument.
func (a *Args) Fixed() Fixed { return Fixed(a.word("fixed")) }

// Object reads an object argument (0 is the null object).
func (a *Args) Object() uint32 { return a.word("object") }

// NewID reads a new_id argument of a known interface.
func (a *Args) NewID() uint32 { return a.word("new_id") }

// Array reads an array argument. The bytes alias the message body.
func (a *Args) Array() []byte {
	n := a.word("array length")
	return a.padded(n, "array")
}

// String reads a string argument. The null string reads as "". A string
// must end in its NUL terminator; the terminator is not returned.
func (a *Args) String() string {
	n := a.word("string length")
	if n == 0 {
		return ""
	}
	b := a.padded(n, "string")
	if a.err != nil {
		return ""
	}
	if b[len(b)-1] != 0 {
		a.fail("string without its NUL terminator")
		return ""
	}
	return string(b[:len(b)-1])
}

// padded takes n bytes and the padding up to the next 4-byte boundary.
func (a *Args) padded(n uint32, what string) []byte {
	if a.err != nil {
		return nil
	}
	p := pad(uint64(n))
	if p > uint64(len(a.b)) {
		a.fail("%s of %d bytes in %d", what, n, len(a.b))
		return nil
	}
	v := a.b[:n:n]
	a.b = a.b[p:]
	return v
}

// pad rounds n up to a multiple of 4.
func pad(n uint64) uint64 { return (n + 3) &^ 3 }

// Uints reads an array argument as the u32 values the protocol's
// "array of enum" arguments (a toplevel's states) carry. A length that is
// not a multiple of 4 is an error.
func (a *Args) Uints() []uint32 {
	b := a.Array()
	if a.err != nil {
		return nil
	}
	if len(b)%4 != 0 {
		a.fail("array of %d bytes is not of u32", len(b))
		return nil
	}
	v := make([]uint32, len(b)/4)
	for i := range v {
		v[i] = binary.NativeEndian.Uint32(b[4*i:])
	}
	return v
}
