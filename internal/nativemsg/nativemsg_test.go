package nativemsg

import (
	"bytes"
	"encoding/binary"
	"errors"
	"io"
	"testing"
)

func frame(n uint32, body []byte) []byte {
	b := binary.NativeEndian.AppendUint32(nil, n)
	return append(b, body...)
}

func TestReadFramesAsTheBrowsersDo(t *testing.T) {
	var buf bytes.Buffer
	for _, m := range []string{`{"type":"tab"}`, ``, `{"a":1}`} {
		if err := Write(&buf, []byte(m)); err != nil {
			t.Fatal(err)
		}
	}
	for _, want := range []string{`{"type":"tab"}`, ``, `{"a":1}`} {
		got, err := Read(&buf)
		if err != nil || string(got) != want {
			t.Fatalf("Read = %q, %v; want %q", got, err, want)
		}
	}
	if _, err := Read(&buf); err != io.EOF {
		t.Fatalf("at the end: %v, want io.EOF", err)
	}
	for name, c := range map[string]struct {
		in   []byte
		want error
	}{
		"torn length":      {[]byte{1, 0}, io.ErrUnexpectedEOF},
		"torn body":        {frame(10, []byte("abc")), io.ErrUnexpectedEOF},
		"over 1 MiB":       {frame(MaxIn+1, nil), ErrTooLarge},
		"4 GiB":            {frame(0xffffffff, nil), ErrTooLarge},
		"exactly 1 MiB ok": {frame(MaxIn, make([]byte, MaxIn)), nil},
	} {
		_, err := Read(bytes.NewReader(c.in))
		if !errors.Is(err, c.want) {
			t.Errorf("%s: %v, want %v", name, err, c.want)
		}
	}
	if err := Write(io.Discard, make([]byte, MaxOut+1)); err == nil {
		t.Error("Write of a message over the browser's limit: got it taken, want a refusal")
	}
}

// FuzzRead: any bytes on stdin are a sequence of messages, a clean end, or
// one named error; never a panic, never a message longer than MaxIn, and
// what Write framed reads back the same.
func FuzzRead(f *testing.F) {
	f.Add(frame(14, []byte(`{"type":"tab"}`)))
	f.Add(frame(MaxIn+1, nil))
	f.Add([]byte{0xff, 0xff, 0xff, 0xff})
	f.Add([]byte{3, 0, 0, 0, '{', '}'})
	f.Add(append(frame(2, []byte("{}")), frame(5, []byte(`{"a":`))...))
	f.Fuzz(func(t *testing.T, in []byte) {
		r := bytes.NewReader(in)
		for {
			msg, err := Read(r)
			if err != nil {
				if err != io.EOF && !errors.Is(err, io.ErrUnexpectedEOF) && !errors.Is(err, ErrTooLarge) {
					t.Fatalf("Read: got the unnamed error %v, want EOF, an unexpected EOF or ErrTooLarge", err)
				}
				break
			}
			if len(msg) > MaxIn {
				t.Fatalf("a message read: got %d bytes, want at most %d", len(msg), MaxIn)
			}
			var buf bytes.Buffer
			if err := Write(&buf, msg); err != nil {
				t.Fatal(err)
			}
			if back, err := Read(&buf); err != nil || !bytes.Equal(back, msg) {
				t.Fatalf("round trip: got %q, %v; want %q", back, err, msg)
			}
		}
	})
}
