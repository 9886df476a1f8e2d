package wire

import (
	"bytes"
	"encoding/binary"
	"errors"
	"io"
	"slices"
	"testing"
)

// The expected bytes below are written out by hand from the protocol XML,
// in little-endian order (the wire uses the host's).
func needLittleEndian(t *testing.T) {
	if binary.NativeEndian.Uint16([]byte{1, 0}) != 1 {
		t.Skip("the hand-written bytes are little-endian; this host is not")
	}
}

// wl_registry.bind (object 2, opcode 0): name 23, then the untyped new_id
// as interface "zwlr_foreign_toplevel_manager_v1" (32 bytes + NUL, padded
// to 36), version 3, id 4.
var bindBytes = slices.Concat(
	[]byte{2, 0, 0, 0, 0, 0, 60, 0}, // object 2; size 60 << 16 | opcode 0
	[]byte{23, 0, 0, 0},
	[]byte{33, 0, 0, 0}, []byte("zwlr_foreign_toplevel_manager_v1"), []byte{0, 0, 0, 0},
	[]byte{3, 0, 0, 0},
	[]byte{4, 0, 0, 0},
)

func TestBuildRegistryBind(t *testing.T) {
	needLittleEndian(t)
	got, err := NewMessage(2, 0).Uint(23).String("zwlr_foreign_toplevel_manager_v1").Uint(3).NewID(4).Bytes()
	if err != nil {
		t.Fatal(err)
	}
	if !bytes.Equal(got, bindBytes) {
		t.Fatalf("bind:\n got % x\nwant % x", got, bindBytes)
	}
}

func TestReadRegistryBindBack(t *testing.T) {
	needLittleEndian(t)
	m, err := Read(bytes.NewReader(bindBytes))
	if err != nil {
		t.Fatal(err)
	}
	a := m.Args()
	name, iface, version, id := a.Uint(), a.String(), a.Uint(), a.NewID()
	if err := a.Err(); err != nil {
		t.Fatal(err)
	}
	if m.Object != 2 || m.Opcode != 0 || name != 23 || iface != "zwlr_foreign_toplevel_manager_v1" || version != 3 || id != 4 {
		t.Fatalf("read back: got %d.%d(%d, %q, %d, %d), want 2.0(23, %q, 3, 4)", m.Object, m.Opcode, name, iface, version, id, "zwlr_foreign_toplevel_manager_v1")
	}
}

// Two events back to back, as a compositor sends them: a toplevel handle's
// state (opcode 4; array of u32 [2 activated, 3 fullscreen]) and its title
// (opcode 0; "vim", 3 bytes + NUL, no padding needed), then its done.
func TestReadEventStream(t *testing.T) {
	needLittleEndian(t)
	stream := slices.Concat(
		[]byte{0, 0, 0, 0xff, 4, 0, 20, 0}, []byte{8, 0, 0, 0, 2, 0, 0, 0, 3, 0, 0, 0},
		[]byte{0, 0, 0, 0xff, 0, 0, 16, 0}, []byte{4, 0, 0, 0, 'v', 'i', 'm', 0},
		[]byte{0, 0, 0, 0xff, 5, 0, 8, 0},
	)
	r := bytes.NewReader(stream)
	m, err := Read(r)
	if err != nil {
		t.Fatal(err)
	}
	a := m.Args()
	if states := a.Uints(); a.Err() != nil || m.Object != 0xff000000 || m.Opcode != 4 || !slices.Equal(states, []uint32{2, 3}) {
		t.Fatalf("state event: got %d.%d %v, error %v, want %d.4 [2 3], no error", m.Object, m.Opcode, states, a.Err(), uint32(0xff000000))
	}
	m, err = Read(r)
	if err != nil {
		t.Fatal(err)
	}
	if a := m.Args(); a.String() != "vim" || a.Err() != nil || m.Opcode != 0 {
		t.Fatalf("title event: got opcode %d, body %q, want opcode 0 with the string %q", m.Opcode, m.Body, "vim")
	}
	m, err = Read(r)
	if err != nil || m.Opcode != 5 || len(m.Body) != 0 {
		t.Fatalf("done event: %+v %v", m, err)
	}
	if _, err := Read(r); err != io.EOF {
		t.Fatalf("after the last message: %v, want EOF", err)
	}
}

// Null strings and empty arrays have a zero length and no bytes.
func TestNullStringAndEmptyArray(t *testing.T) {
	b, err := NewMessage(7, 1).Array(nil).Uint(9).Bytes()
	if err != nil {
		t.Fatal(err)
	}
	m, err := Read(bytes.NewReader(b))
	if err != nil {
		t.Fatal(err)
	}
	a := m.Args()
	if arr := a.Uints(); len(arr) != 0 || a.Uint() != 9 || a.Err() != nil {
		t.Fatalf("an empty array then 9: got array %v, error %v, want an empty array, 9, no error", arr, a.Err())
	}
	null := Message{Body: make([]byte, 4)}
	if a := null.Args(); a.String() != "" || a.Err() != nil {
		t.Fatalf("null string: got error %v, want \"\" and no error", a.Err())
	}
}

// Every way a message can lie about itself is an error, never a panic or a
// read past the body.
func TestMalformed(t *testing.T) {
	needLittleEndian(t)
	headers := map[string][]byte{
		"size below the header": {1, 0, 0, 0, 0, 0, 4, 0},
		"size not aligned":      {1, 0, 0, 0, 0, 0, 10, 0},
		"size over the limit":   {1, 0, 0, 0, 0, 0, 0x04, 0x10}, // 4100
	}
	for name, h := range headers {
		if _, err := Read(bytes.NewReader(h)); !errors.Is(err, ErrMalformed) {
			t.Errorf("%s: %v, want ErrMalformed", name, err)
		}
	}
	if _, err := Read(bytes.NewReader([]byte{1, 0, 0, 0, 0, 0, 16, 0, 1, 2})); err != io.ErrUnexpectedEOF {
		t.Errorf("body cut short: %v, want io.ErrUnexpectedEOF", err)
	}
	bodies := map[string]struct {
		body []byte
		read func(*Args)
	}{
		"string longer than the body": {[]byte{9, 0, 0, 0, 'a', 'b', 'c', 0}, func(a *Args) { _ = a.String() }},
		"string without NUL":          {[]byte{4, 0, 0, 0, 'a', 'b', 'c', 'd'}, func(a *Args) { _ = a.String() }},
		"huge array length":           {[]byte{0xff, 0xff, 0xff, 0xff}, func(a *Args) { a.Array() }},
		"states not of u32":           {[]byte{3, 0, 0, 0, 1, 2, 3, 0}, func(a *Args) { a.Uints() }},
		"uint past the end":           {[]byte{1, 0}, func(a *Args) { a.Uint() }},
	}
	for name, c := range bodies {
		a := Message{Body: c.body}.Args()
		c.read(a)
		if v := a.Uint(); v != 0 || !errors.Is(a.Err(), ErrMalformed) {
			t.Errorf("%s: %v (then read %d), want ErrMalformed", name, a.Err(), v)
		}
	}
}

func TestBuildRefusesOversizedMessages(t *testing.T) {
	if _, err := NewMessage(1, 0).Array(make([]byte, MaxMessageSize)).Bytes(); err == nil {
		t.Fatal("built a message over the size limit")
	}
}

func TestSocketPath(t *testing.T) {
	for _, c := range []struct{ display, dir, want string }{
		{"wayland-1", "/run/user/1000", "/run/user/1000/wayland-1"},
		{"/tmp/w/sock", "", "/tmp/w/sock"},
	} {
		if got, err := SocketPath(c.display, c.dir); err != nil || got != c.want {
			t.Errorf("SocketPath(%q, %q) = %q, %v; want %q", c.display, c.dir, got, err, c.want)
		}
	}
	for _, c := range [][2]string{{"", "/run/user/1000"}, {"wayland-0", ""}} {
		if got, err := SocketPath(c[0], c[1]); err == nil {
			t.Errorf("SocketPath(%q, %q) = %q, want an error", c[0], c[1], got)
		}
	}
}
