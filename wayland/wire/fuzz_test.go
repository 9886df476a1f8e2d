package wire

import (
	"bytes"
	"errors"
	"io"
	"testing"
)

// FuzzRead feeds arbitrary bytes to the framing and to every argument
// reader: whatever a compositor sends, reading it returns an error or
// values, never a panic, and never takes more than the body holds.
// testdata/fuzz/FuzzRead holds seeds that go test runs every time.
func FuzzRead(f *testing.F) {
	f.Add(bindBytes)
	f.Add([]byte{0, 0, 0, 0xff, 4, 0, 20, 0, 8, 0, 0, 0, 2, 0, 0, 0, 3, 0, 0, 0})
	f.Add([]byte{1, 0, 0, 0, 0, 0, 0xff, 0xff})
	f.Fuzz(func(t *testing.T, data []byte) {
		r := bytes.NewReader(data)
		for {
			m, err := Read(r)
			if err != nil {
				if err != io.EOF && err != io.ErrUnexpectedEOF && !errors.Is(err, ErrMalformed) {
					t.Fatalf("unexpected error %v", err)
				}
				return
			}
			if len(m.Body)%4 != 0 || len(m.Body)+HeaderSize > MaxMessageSize {
				t.Fatalf("body: got %d bytes, want a multiple of 4 of at most %d", len(m.Body), MaxMessageSize-HeaderSize)
			}
			// Read the body as each kind of argument, chosen by the
			// opcode, until the arguments run out.
			a := m.Args()
			for i := 0; a.Err() == nil && i < 64; i++ {
				switch (int(m.Opcode) + i) % 5 {
				case 0:
					a.Uint()
				case 1:
					if s := a.String(); s != "" && len(s) >= len(m.Body) {
						t.Fatalf("a string: got %d bytes, want fewer than the body's %d", len(s), len(m.Body))
					}
				case 2:
					a.Array()
				case 3:
					a.Uints()
				case 4:
					a.Fixed().Float64()
				}
			}
		}
	})
}
