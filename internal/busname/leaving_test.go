package busname_test

import (
	"context"
	"testing"
	"time"

	"github.com/antidrift/antidrift/internal/busname"
	"github.com/antidrift/antidrift/internal/testsupport/testenv"
)

// Leaving says once that a watched connection left the bus, and says
// nothing of one it was not asked to watch; a connection already gone when
// it is watched is reported as not alive.
func TestLeavingSaysWhenAWatchedConnectionLeaves(t *testing.T) {
	testenv.Need(t, "dbus-daemon")
	bus := testenv.StartBus(t)
	self := bus.Dial(t)
	gone := make(chan string, 4)
	l := busname.NewLeaving(self, nil, func(u string) { gone <- u })
	defer l.Close()

	watched, other := bus.Dial(t), bus.Dial(t)
	alive, err := l.Watch(context.Background(), watched.Names()[0])
	if !alive || err != nil {
		t.Fatalf("Watch of a live connection: got %v, %v; want alive", alive, err)
	}
	other.Close()
	watched.Close()
	select {
	case u := <-gone:
		if u != watched.Names()[0] {
			t.Fatalf("gone: got %s, want the watched %s (not %s, which nobody watched)", u, watched.Names()[0], other.Names()[0])
		}
	case <-time.After(10 * time.Second):
		t.Fatal("gone: got nothing within 10s of the watched connection leaving")
	}
	select {
	case u := <-gone:
		t.Fatalf("gone again: got %s, want it said once", u)
	case <-time.After(200 * time.Millisecond):
	}
	if alive, _ := l.Watch(context.Background(), watched.Names()[0]); alive {
		t.Fatal("Watch of a connection that already left: got alive, want not")
	}
}
