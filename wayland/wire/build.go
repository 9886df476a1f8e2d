package wire

import (
	"encoding/binary"
	"fmt"
	"strings"
)

// Builder writes one message: NewMessage starts it, the argument methods
// append in the order the protocol XML lists them, and Bytes frames it.
type Builder struct {
	b []byte
}

// NewMessage starts a message to object with opcode.
func NewMessage(object uint32, opcode uint16) *Builder {
	b := &Builder{b: make([]byte, HeaderSize, 64)}
	binary.NativeEndian.PutUint32(b.b[0:4], object)
	binary.NativeEndian.PutUint32(b.b[4:8], uint32(opcode))
	return b
}

func (b *Builder) word(v uint32) *Builder {
	b.b = binary.NativeEndian.AppendUint32(b.b, v)
	return b
}

// Uint appends a uint argument.
func (b *Builder) Uint(v uint32) *Builder { return b.word(v) }

// Int appends an int argument.
func (b *Builder) Int(v int32) *Builder { return b.word(uint32(v)) }

// Fixed appends a fixed argument.
func (b *Builder) Fixed(v Fixed) *Builder { return b.word(uint32(v)) }

// Object appends an object argument (0 for null).
func (b *Builder) Object(id uint32) *Builder { return b.word(id) }

// NewID appends a new_id argument. wl_registry.bind's untyped new_id is
// String(interface), Uint(version), NewID(id).
func (b *Builder) NewID(id uint32) *Builder { return b.word(id) }

// String appends a string argument with its NUL terminator. A string cannot
// carry a NUL of its own: anything from the first NUL on is dropped.
func (b *Builder) String(s string) *Builder {
	if i := strings.IndexByte(s, 0); i >= 0 {
		s = s[:i]
	}
	b.word(uint32(len(s) + 1))
	b.b = append(b.b, s...)
	b.b = append(b.b, 0)
	return b.align()
}

// Array appends an array argument.
func (b *Builder) Array(v []byte) *Builder {
	b.word(uint32(len(v)))
	b.b = append(b.b, v...)
	return b.align()
}

func (b *Builder) align() *Builder {
	for len(b.b)%4 != 0 {
		b.b = append(b.b, 0)
	}
	return b
}

// Bytes is the framed message. It fails when the arguments make a message
// larger than MaxMessageSize.
func (b *Builder) Bytes() ([]byte, error) {
	if len(b.b) > MaxMessageSize {
		return nil, fmt.Errorf("wayland: a message of %d bytes is over the %d-byte limit", len(b.b), MaxMessageSize)
	}
	word := binary.NativeEndian.Uint32(b.b[4:8])
	binary.NativeEndian.PutUint32(b.b[4:8], uint32(len(b.b))<<16|word&0xffff)
	return b.b, nil
}
