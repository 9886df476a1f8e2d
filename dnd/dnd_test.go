package dnd

import (
	"context"
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

// A dunst value from quiet.json is data: one that is not a pause level or
// a boolean is refused before dunst is asked anything (the record is kept
// and named, as for any failed putting-back), never sent as it is.
func TestDunstValuesRefused(t *testing.T) {
	d := dunstPaused{} // no connection: a value that reached the bus would panic
	for _, v := range []string{"level:101", "level:-1", "level:", "level:1e3", "maybe", "", "TRUE"} {
		if err := d.set(context.Background(), v); err == nil {
			t.Errorf("set(%q): got success, want a refusal", v)
		}
	}
	for v, want := range map[string]bool{"true": true, "level:60": true, "level:1": true, "false": false, "level:0": false} {
		if got := d.isQuiet(v); got != want {
			t.Errorf("isQuiet(%q): got %v, want %v", v, got, want)
		}
	}
}
