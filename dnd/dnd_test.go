package dnd

import (
	"testing"

	"github.com/antidrift/antidrift/internal/testsupport/testenv"
)

// Close twice (a daemon stopping on a signal and on its deferred cleanup)
// does nothing the second time: no panic, no second putting-back; a
// decision after Close never blocks.
func TestCloseTwice(t *testing.T) {
	testenv.Need(t, "dbus-daemon")
	bus := testenv.StartBus(t)
	m, err := New(Options{Conn: bus.Dial(t), Dir: t.TempDir()})
	if err != nil {
		t.Fatal(err)
	}
	m.Close()
	defer func() {
		if r := recover(); r != nil {
			t.Fatalf("the second Close: got a panic (%v), want nothing", r)
		}
	}()
	m.Close()
	m.Quiet(true)
}
