package wayland

import (
	"bytes"
	"encoding/binary"
	"errors"
	"testing"

	"github.com/antidrift/antidrift/internal/testsupport/testenv"
	"github.com/antidrift/antidrift/service"
	"github.com/antidrift/antidrift/wayland/wire"
)

const testManager = 4

// The expected handles and the hand-made array bytes below are
// little-endian, as the wire is on the hosts antidrift runs on.
func needLittleEndian(t *testing.T) {
	if binary.NativeEndian.Uint16([]byte{1, 0}) != 1 {
		t.Skip("the hand-made bytes are little-endian; this host is not")
	}
}

// ev builds an event the way a compositor sends it, and reads it back
// through the framing, so these tests run the same bytes as the wire.
func ev(t testing.TB, b *wire.Builder) wire.Message {
	raw, err := b.Bytes()
	if err != nil {
		t.Fatal(err)
	}
	m, err := wire.Read(bytes.NewReader(raw))
	if err != nil {
		t.Fatal(err)
	}
	return m
}

func states(s ...uint32) []byte {
	var b []byte
	for _, v := range s {
		b = append(b, byte(v), byte(v>>8), byte(v>>16), byte(v>>24))
	}
	return b
}

// window is the events announcing a new toplevel id with its first state.
func window(t testing.TB, id uint32, appID, title string, st ...uint32) []wire.Message {
	return []wire.Message{
		ev(t, wire.NewMessage(testManager, managerToplevel).NewID(id)),
		ev(t, wire.NewMessage(id, handleTitle).String(title)),
		ev(t, wire.NewMessage(id, handleAppID).String(appID)),
		ev(t, wire.NewMessage(id, handleState).Array(states(st...))),
		ev(t, wire.NewMessage(id, handleDone)),
	}
}

func apply(t *testing.T, tops *toplevels, msgs ...wire.Message) {
	t.Helper()
	for _, m := range msgs {
		if _, err := tops.event(m); err != nil {
			t.Fatalf("event %d.%d: %v", m.Object, m.Opcode, err)
		}
	}
}

func TestToplevelsApplyOnDone(t *testing.T) {
	needLittleEndian(t)
	tops := newToplevels(7, testManager)
	if w := tops.focused(); w.Available || w.Reason != service.ReasonNoFocus {
		t.Fatalf("no toplevels: got %+v, want unavailable with reason %q", w, service.ReasonNoFocus)
	}
	const a, b = serverIDMin, serverIDMin + 1
	apply(t, tops, window(t, a, "Editor", "notes", stateActivated)...)
	if w := tops.focused(); w != (service.Window{ID: "wl:7:4278190080", Class: "Editor", Title: "notes", Available: true}) {
		t.Fatalf("one activated toplevel: got %+v, want %+v", w, service.Window{ID: "wl:7:4278190080", Class: "Editor", Title: "notes", Available: true})
	}

	// Title and state change without done: nothing changes yet.
	apply(t, tops,
		ev(t, wire.NewMessage(a, handleTitle).String("draft")),
		ev(t, wire.NewMessage(a, handleState).Array(nil)))
	if w := tops.focused(); w.Title != "notes" || !w.Available {
		t.Fatalf("before done: got %+v, want the available title %q unchanged", w, "notes")
	}
	apply(t, tops, ev(t, wire.NewMessage(a, handleDone)))
	if w := tops.focused(); w.Available {
		t.Fatalf("after done, nothing activated: got %+v, want unavailable", w)
	}

	// Two seats: the latest to become activated is the focus.
	apply(t, tops, window(t, b, "Browser", "news", stateActivated, stateMaximized)...)
	apply(t, tops, ev(t, wire.NewMessage(a, handleState).Array(states(stateActivated))), ev(t, wire.NewMessage(a, handleDone)))
	if w := tops.focused(); w.Class != "Editor" || w.Title != "draft" {
		t.Fatalf("latest activation: got %+v, want Class %q, Title %q", w, "Editor", "draft")
	}
	closed, err := tops.event(ev(t, wire.NewMessage(a, handleClosed)))
	if err != nil || closed != a {
		t.Fatalf("closed: %d, %v", closed, err)
	}
	if w := tops.focused(); w.Class != "Browser" {
		t.Fatalf("after the editor closed: got %+v, want Class %q", w, "Browser")
	}
	// Late events to the closed handle, and events of later versions, are
	// ignored; a state with minimized is read as such.
	apply(t, tops,
		ev(t, wire.NewMessage(a, handleTitle).String("gone")),
		ev(t, wire.NewMessage(b, 99).Uint(1)),
		ev(t, wire.NewMessage(b, handleState).Array(states(stateMinimized))),
		ev(t, wire.NewMessage(b, handleDone)))
	if s, ok, _ := tops.lookup(b); !ok || !s.minimized || s.activated {
		t.Fatalf("minimized browser: got %+v, found %v, want found, minimized and not activated", s, ok)
	}
}

func TestToplevelsRefuseLies(t *testing.T) {
	needLittleEndian(t)
	for name, m := range map[string]wire.Message{
		"a client-range id": ev(t, wire.NewMessage(testManager, managerToplevel).NewID(5)),
		"a cut title":       {Object: serverIDMin, Opcode: handleTitle, Body: []byte{9, 0, 0, 0}},
		"finished":          ev(t, wire.NewMessage(testManager, managerFinished)),
	} {
		tops := newToplevels(1, testManager)
		apply(t, tops, window(t, serverIDMin, "a", "b")...)
		if _, err := tops.event(m); err == nil {
			t.Errorf("%s: got no error, want one", name)
		}
	}
	tops := newToplevels(1, testManager)
	apply(t, tops, window(t, serverIDMin, "a", "b")...)
	if _, err := tops.event(window(t, serverIDMin, "a", "b")[0]); !errors.Is(err, wire.ErrMalformed) {
		t.Errorf("the same id twice: %v", err)
	}
}

func TestHandles(t *testing.T) {
	tops := newToplevels(12, testManager)
	gen, id, err := parseHandle(tops.handle(serverIDMin + 3))
	if err != nil || gen != 12 || id != serverIDMin+3 {
		t.Fatalf("round trip: %d %d %v", gen, id, err)
	}
	for _, h := range []string{"", "0x1e00003", "wl:", "wl:1", "wl:x:1", "wl:1:99999999999", "kwin:{abc}"} {
		if _, _, err := parseHandle(h); err == nil {
			t.Errorf("parseHandle(%q): got no error, want one", h)
		}
	}
}

// Invalid UTF-8 from a compositor is made valid before it goes anywhere.
func TestTitlesAreValidUTF8(t *testing.T) {
	needLittleEndian(t)
	tops := newToplevels(1, testManager)
	apply(t, tops, window(t, serverIDMin, "App\xff", "caf\xe9", stateActivated)...)
	if w := tops.focused(); w.Class != "App\uFFFD" || w.Title != "caf\uFFFD" {
		t.Fatalf("Class, Title: got %q %q, want %q %q", w.Class, w.Title, "App\uFFFD", "caf\uFFFD")
	}
}

// The evidence contract's scenarios, as a wlroots compositor tells them:
// a toplevel activated, then closed.
func TestEvidenceContract(t *testing.T) {
	needLittleEndian(t)
	for _, sc := range testenv.EvidenceScenarios {
		t.Run(sc.Name, func(t *testing.T) {
			tops := newToplevels(1, testManager)
			apply(t, tops, window(t, serverIDMin, sc.App, sc.Title, stateActivated)...)
			if sc.Closed {
				apply(t, tops, ev(t, wire.NewMessage(serverIDMin, handleClosed)))
			}
			testenv.CheckEvidence(t, sc, tops.focused())
		})
	}
}
