package wire

import (
	"bytes"
	"encoding/binary"
	"errors"
	"testing"

	"github.com/godbus/dbus/v5"
)

// getAllCall is a Properties.GetAll call as the bus delivers it: godbus
// encodes it, in the given byte order.
func getAllCall(t testing.TB, order binary.ByteOrder, arg string) []byte {
	t.Helper()
	msg := &dbus.Message{Type: dbus.TypeMethodCall, Headers: map[dbus.HeaderField]dbus.Variant{
		dbus.FieldPath:        dbus.MakeVariant(dbus.ObjectPath("/org/antidrift/Session1")),
		dbus.FieldInterface:   dbus.MakeVariant("org.freedesktop.DBus.Properties"),
		dbus.FieldMember:      dbus.MakeVariant("GetAll"),
		dbus.FieldDestination: dbus.MakeVariant("org.antidrift"),
		dbus.FieldSender:      dbus.MakeVariant(":1.42"),
		dbus.FieldSignature:   dbus.MakeVariant(dbus.SignatureOf(arg)),
	}, Body: []any{arg}}
	var buf bytes.Buffer
	if err := msg.EncodeTo(&buf, order); err != nil {
		t.Fatal(err)
	}
	b := buf.Bytes()
	order.PutUint32(b[8:12], 5) // the serial the sender's connection would give it
	return b
}

func TestParseACallGodbusEncoded(t *testing.T) {
	for _, order := range []binary.ByteOrder{binary.LittleEndian, binary.BigEndian} {
		msg := getAllCall(t, order, "org.antidrift.Session1")
		if n, err := Len(msg[:fixedHeader-1]); n != 0 || err != nil {
			t.Errorf("%v: Len of a short prefix = %d, %v; want 0 (read more)", order, n, err)
		}
		if n, err := Len(msg); n != len(msg) || err != nil {
			t.Fatalf("%v: Len = %d, %v; want %d", order, n, err, len(msg))
		}
		h, err := ParseHeader(msg)
		if err != nil {
			t.Fatalf("%v: %v", order, err)
		}
		want := Header{Type: TypeMethodCall, Serial: h.Serial, Path: "/org/antidrift/Session1", Interface: "org.freedesktop.DBus.Properties",
			Member: "GetAll", Destination: "org.antidrift", Sender: ":1.42", Signature: "s", order: order, bodyAt: h.bodyAt}
		if h != want {
			t.Errorf("%v: header\n got %+v\nwant %+v", order, h, want)
		}
		if s, err := FirstString(msg, h); s != "org.antidrift.Session1" || err != nil {
			t.Errorf("%v: first argument %q, %v", order, s, err)
		}
	}
}

func TestMalformedIsRefusedNotGuessed(t *testing.T) {
	good := getAllCall(t, binary.LittleEndian, "x")
	for name, mutate := range map[string]func([]byte) []byte{
		"bad endianness":  func(b []byte) []byte { b[0] = 'x'; return b },
		"truncated":       func(b []byte) []byte { return b[:len(b)-1] },
		"zero serial":     func(b []byte) []byte { binary.LittleEndian.PutUint32(b[8:], 0); return b },
		"version 2":       func(b []byte) []byte { b[3] = 2; return b },
		"unknown field":   func(b []byte) []byte { b[16] = 200; return b },
		"nonzero padding": func(b []byte) []byte { b[len(b)-len("x")-5-1] = 7; return b }, // between the fields and the body
	} {
		msg := mutate(bytes.Clone(good))
		if _, err := ParseHeader(msg); !errors.Is(err, ErrMalformed) {
			t.Errorf("%s: ParseHeader = %v, want ErrMalformed", name, err)
		}
	}
	huge := bytes.Clone(good)
	binary.LittleEndian.PutUint32(huge[4:], MaxMessage)
	if _, err := Len(huge); !errors.Is(err, ErrMalformed) {
		t.Errorf("a body of 128 MiB: Len = %v, want ErrMalformed", err)
	}
}

// The reply the fast path builds must be what godbus (and so any client)
// reads as an ordinary method return.
func TestMethodReturnReadsBackInGodbus(t *testing.T) {
	props := map[string]dbus.Variant{"State": dbus.MakeVariant("active"), "Buckets": dbus.MakeVariant([]struct {
		C, T string
		S    uint64
	}{{"Editor", "main.go", 7}})}
	sig, body, err := Body(props)
	if err != nil || sig != "a{sv}" {
		t.Fatalf("Body = %q, %v", sig, err)
	}
	msg := AppendMethodReturn([]byte("prefix"), 9, 77, ":1.42", sig, body)[len("prefix"):]
	if n, err := Len(msg); n != len(msg) || err != nil {
		t.Fatalf("Len = %d, %v; want %d", n, err, len(msg))
	}
	got, err := dbus.DecodeMessage(bytes.NewReader(msg))
	if err != nil {
		t.Fatal(err)
	}
	if got.Type != dbus.TypeMethodReply || got.Headers[dbus.FieldReplySerial].Value() != uint32(77) ||
		got.Headers[dbus.FieldDestination].Value() != ":1.42" {
		t.Fatalf("decoded %v", got)
	}
	var back map[string]dbus.Variant
	if err := dbus.Store(got.Body, &back); err != nil {
		t.Fatal(err)
	}
	if back["State"].Value() != "active" || len(back) != 2 {
		t.Errorf("body read back as %v", back)
	}

	empty, err := dbus.DecodeMessage(bytes.NewReader(AppendMethodReturn(nil, 10, 78, ":1.42", "", nil)))
	if err != nil || len(empty.Body) != 0 {
		t.Errorf("an empty return: %v, %v", empty, err)
	}
}

// Whatever arrives, the parser answers without panicking, and what it
// reads from a message godbus can decode is what godbus reads.
func FuzzParseHeader(f *testing.F) {
	f.Add(getAllCall(f, binary.LittleEndian, "org.antidrift.Session1"))
	f.Add(getAllCall(f, binary.BigEndian, ""))
	f.Add(AppendMethodReturn(nil, 1, 2, ":1.1", "s", []byte{1, 0, 0, 0, 'x', 0}))
	f.Fuzz(func(t *testing.T, msg []byte) {
		n, err := Len(msg)
		if err != nil || n != len(msg) {
			return
		}
		h, err := ParseHeader(msg)
		if err != nil {
			return
		}
		first, ferr := FirstString(msg, h)
		theirs, derr := dbus.DecodeMessage(bytes.NewReader(msg))
		if derr != nil {
			return
		}
		str := func(f dbus.HeaderField) string {
			v, _ := theirs.Headers[f].Value().(string)
			if p, ok := theirs.Headers[f].Value().(dbus.ObjectPath); ok {
				v = string(p)
			}
			return v
		}
		if h.Member != str(dbus.FieldMember) || h.Interface != str(dbus.FieldInterface) || h.Path != str(dbus.FieldPath) || h.Sender != str(dbus.FieldSender) {
			t.Fatalf("parsed %+v, godbus read %v", h, theirs.Headers)
		}
		if ferr == nil && len(theirs.Body) > 0 && theirs.Body[0] != first {
			t.Fatalf("first argument %q, godbus read %v", first, theirs.Body[0])
		}
	})
}
