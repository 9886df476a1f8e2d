package wayland

import (
	"bytes"
	"testing"

	"github.com/antidrift/antidrift/wayland/wire"
)

// FuzzToplevelEvents feeds arbitrary bytes to the sensor's event handling as
// a stream of messages from the compositor: whatever it sends, the state is
// updated or an error ends the connection, and the focused window can always
// be read; never a panic. testdata/fuzz/FuzzToplevelEvents holds seeds that
// go test runs every time.
func FuzzToplevelEvents(f *testing.F) {
	var seed []byte
	for _, m := range window(f, serverIDMin, "Editor", "notes", stateActivated) {
		seed = append(seed, frame(m)...)
	}
	f.Add(seed)
	f.Add([]byte{testManager, 0, 0, 0, managerToplevel, 0, 12, 0, 0, 0, 0, 0xff})
	f.Fuzz(func(t *testing.T, data []byte) {
		tops := newToplevels(1, testManager)
		r := bytes.NewReader(data)
		for {
			m, err := wire.Read(r)
			if err != nil {
				return
			}
			if _, err := tops.event(m); err != nil {
				return
			}
			if w := tops.focused(); w.Available == (w.Reason != "") {
				t.Fatalf("inconsistent window: got %+v, want Available exactly when Reason is empty", w)
			}
		}
	})
}

// frame is m as bytes on the wire (little-endian, like the hosts the seeds
// are meant for).
func frame(m wire.Message) []byte {
	b := make([]byte, wire.HeaderSize, wire.HeaderSize+len(m.Body))
	b[0], b[1], b[2], b[3] = byte(m.Object), byte(m.Object>>8), byte(m.Object>>16), byte(m.Object>>24)
	size := uint32(wire.HeaderSize+len(m.Body))<<16 | uint32(m.Opcode)
	b[4], b[5], b[6], b[7] = byte(size), byte(size>>8), byte(size>>16), byte(size>>24)
	return append(b, m.Body...)
}
