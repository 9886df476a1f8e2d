package busconn

import (
	"bytes"
	"encoding/binary"
	"errors"
	"io"
	"slices"
	"testing"

	"github.com/godbus/dbus/v5"
)

// encode is a message as godbus writes it, in order.
func encode(t testing.TB, order binary.ByteOrder, serial uint32, sender, member string, body ...any) []byte {
	t.Helper()
	m := &dbus.Message{Type: dbus.TypeMethodCall, Headers: map[dbus.HeaderField]dbus.Variant{
		dbus.FieldPath:        dbus.MakeVariant(dbus.ObjectPath("/org/antidrift/Session1")),
		dbus.FieldInterface:   dbus.MakeVariant("org.antidrift.Session1"),
		dbus.FieldMember:      dbus.MakeVariant(member),
		dbus.FieldDestination: dbus.MakeVariant("org.antidrift"),
		dbus.FieldSender:      dbus.MakeVariant(sender),
	}, Body: body}
	if len(body) > 0 {
		m.Headers[dbus.FieldSignature] = dbus.MakeVariant(dbus.SignatureOf(body...))
	}
	// godbus numbers what it sends; set the serial in the bytes.
	var buf bytes.Buffer
	if err := m.EncodeTo(&buf, order); err != nil {
		t.Fatal(err)
	}
	b := buf.Bytes()
	order.PutUint32(b[8:12], serial)
	return b
}

// chunked reads src in the sizes sizes gives, cycling, to try every way
// the socket may split the stream.
type chunked struct {
	src   []byte
	sizes []byte
	i     int
	read  int // bytes handed out so far
}

func (c *chunked) Read(p []byte) (int, error) {
	if len(c.src) == 0 {
		return 0, io.EOF
	}
	n := len(p)
	if len(c.sizes) > 0 {
		n = min(n, int(c.sizes[c.i%len(c.sizes)])+1)
		c.i++
	}
	n = copy(p, c.src[:min(n, len(c.src))])
	c.src = c.src[n:]
	c.read += n
	return n, nil
}

// boundaries are where messages start in stream, by their declared
// lengths, up to the first fixed header that does not start one, and the
// length each declares.
func boundaries(stream []byte) map[int]uint64 {
	at := map[int]uint64{}
	for off := 0; off+fixedHeader <= len(stream); {
		h, err := readFixed(stream[off:])
		if err != nil {
			break
		}
		at[off] = h.size
		if h.size > uint64(len(stream)) {
			break
		}
		off += int(h.size)
	}
	return at
}

// frameAll runs the framer over stream, read in sizes, and checks what it
// yields: exactly the messages that start where a message starts by the
// declared lengths, fit the limit and the stream, and godbus decodes —
// each whole, in order, none left out. It returns them and the skipped.
func frameAll(t testing.TB, stream, sizes []byte, limit int) (msgs [][]byte, skipped []Skipped) {
	src := &chunked{src: stream, sizes: sizes}
	at := boundaries(stream)
	var want []int
	for off, size := range at {
		if size <= uint64(limit) && off+int(size) <= len(stream) && decodable(stream[off:off+int(size)]) == nil {
			want = append(want, off)
		}
	}
	slices.Sort(want)
	f := newFramer(src, limit, func(s Skipped) { skipped = append(skipped, s) })
	f.begin()
	var got []int
	for {
		msg, err := f.next()
		if err != nil {
			if !errors.Is(err, io.EOF) && !errors.Is(err, io.ErrUnexpectedEOF) && !errors.Is(err, ErrLostFraming) {
				t.Fatalf("framer error: got %v, want EOF, an unexpected EOF or ErrLostFraming", err)
			}
			break
		}
		end := src.read - len(f.in)
		start := end - len(msg)
		if _, ok := at[start]; !ok {
			t.Fatalf("yielded %d bytes from offset %d: got an offset that does not start a message, want one of the boundaries %v", len(msg), start, at)
		}
		if !bytes.Equal(msg, stream[start:end]) {
			t.Fatalf("yielded bytes at %d: got %x, want the stream's %x", start, msg, stream[start:end])
		}
		got = append(got, start)
		msgs = append(msgs, bytes.Clone(msg)) // msg is the framer's buffer, read over next
	}
	if !slices.Equal(got, want) {
		t.Fatalf("yielded the messages at %v; want those at %v", got, want)
	}
	return msgs, skipped
}

// A message over the limit is counted past — the messages inside its body
// never surface — and the next one is read; so is one godbus cannot
// decode. Either byte order.
func TestFramerSkipsByDeclaredLength(t *testing.T) {
	for _, order := range []binary.ByteOrder{binary.LittleEndian, binary.BigEndian} {
		t.Run(order.String(), func(t *testing.T) {
			forged := encode(t, order, 7, ":1.1", "Abandon", "forged")
			carrier := encode(t, order, 2, ":1.66", "Start", append(bytes.Repeat(forged, 4000), make([]byte, 16)...))
			undecodable := encode(t, order, 3, ":1.67", "Allow", true)
			order.PutUint32(undecodable[len(undecodable)-4:], 2) // a boolean is 0 or 1
			var stream []byte
			stream = append(stream, encode(t, order, 1, ":1.5", "Complete")...)
			stream = append(stream, carrier...)
			stream = append(stream, undecodable...)
			stream = append(stream, encode(t, order, 4, ":1.5", "Refocus")...)

			for _, sizes := range [][]byte{nil, {0}, {6, 200, 15}} {
				msgs, skipped := frameAll(t, stream, sizes, 4096)
				var members []string
				for _, m := range msgs {
					msg, _ := dbus.DecodeMessage(bytes.NewReader(m))
					members = append(members, msg.Headers[dbus.FieldMember].Value().(string))
				}
				if len(members) != 2 || members[0] != "Complete" || members[1] != "Refocus" {
					t.Fatalf("read %v; want Complete, Refocus (nothing of the carrier's body)", members)
				}
				if len(skipped) != 2 {
					t.Fatalf("skipped %+v; want the carrier and the undecodable", skipped)
				}
				big, bad := skipped[0], skipped[1]
				if big.Serial != 2 || big.Sender != ":1.66" || big.Member != "Start" || big.Size != uint64(len(carrier)) || big.Unreadable != nil || !big.WantsReply() {
					t.Errorf("the carrier: got it described as %+v, want serial 2 from :1.66, Start, %d bytes, readable, wanting a reply", big, len(carrier))
				}
				if bad.Serial != 3 || bad.Sender != ":1.67" || bad.Unreadable == nil {
					t.Errorf("the undecodable: got it described as %+v, want serial 3 from :1.67, unreadable", bad)
				}
			}
		})
	}
}

// A fixed header that does not start a message ends the stream: nothing
// after it is guessed at.
func TestFramerStopsAtALostFraming(t *testing.T) {
	good := encode(t, binary.LittleEndian, 1, ":1.5", "Complete")
	stream := append(append([]byte{}, good...), append([]byte("Xgarbage-garbage"), good...)...)
	f := newFramer(bytes.NewReader(stream), 4096, func(s Skipped) { t.Fatalf("got %+v skipped, want the framer to stop instead", s) })
	f.begin()
	if _, err := f.next(); err != nil {
		t.Fatal(err)
	}
	for range 2 {
		if _, err := f.next(); !errors.Is(err, ErrLostFraming) {
			t.Fatalf("after garbage: %v; want ErrLostFraming, for good", err)
		}
	}
}

// The framer never holds more than its buffer, however long the message
// it counts past.
func TestFramerSkipsWithoutHoldingTheMessage(t *testing.T) {
	huge := encode(t, binary.LittleEndian, 9, ":1.9", "Start", make([]byte, 8<<20))
	stream := append(huge, encode(t, binary.LittleEndian, 10, ":1.9", "Complete")...)
	f := newFramer(bytes.NewReader(stream), MaxMessage, func(Skipped) {})
	f.begin()
	if _, err := f.next(); err != nil {
		t.Fatal(err)
	}
	if cap(f.buf) > 2*MaxMessage {
		t.Fatalf("the framer's buffer: got %d bytes, want at most %d", cap(f.buf), 2*MaxMessage)
	}
}

// FuzzFramer feeds the framer random streams, split at random: whatever it
// yields starts where a message starts by the declared lengths, is that
// message whole, and decodes. The seeds (run by plain go test) are
// messages of both byte orders, one over the limit with messages in its
// body, one godbus cannot decode, and a stream that loses its framing.
func FuzzFramer(f *testing.F) {
	for _, order := range []binary.ByteOrder{binary.LittleEndian, binary.BigEndian} {
		msg := encode(f, order, 1, ":1.5", "Allow", "Editor")
		big := encode(f, order, 2, ":1.6", "Start", bytes.Repeat(msg, 20))
		bad := encode(f, order, 3, ":1.5", "Allow", true)
		order.PutUint32(bad[len(bad)-4:], 2)
		f.Add(append(append(append([]byte{}, msg...), big...), msg...), []byte{3, 7})
		// Read whole: the overlong message lies entirely in the buffer
		// (limit 512 < buffer 4096), and what follows it must stay there.
		f.Add(append(append(append([]byte{}, msg...), big...), msg...), []byte{})
		f.Add(append(append(append([]byte{}, bad...), msg...), "lzzzzzzzzzzzzzzzzzzzz"...), []byte{})
		f.Add(big[:40], []byte{0})
	}
	f.Fuzz(func(t *testing.T, stream, sizes []byte) {
		frameAll(t, stream, sizes, 512)
	})
}
