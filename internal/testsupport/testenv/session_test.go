package testenv

import (
	"os"
	"path/filepath"
	"slices"
	"testing"
	"time"
)

func TestMain(m *testing.M) { os.Exit(Main(m)) }

// Session decodes the daemon's properties into Go values, says what it
// last saw when a wait times out, and hands back a refusal's name and
// message.
func TestSessionReadsTheDaemonInGoValues(t *testing.T) {
	Need(t, "dbus-daemon")
	d := StartDaemon(t, StartBus(t), filepath.Join(t.TempDir(), "state"))
	s := d.Session(t)
	if got := s.String(t, "State"); got != "locked" {
		t.Errorf("State: got %q, want %q", got, "locked")
	}
	var id string
	s.Call(t, "Start", Args("write code", "tests pass", uint64(600), "observe", []string{"Editor"}), &id)
	if id == "" {
		t.Error("Start: got an empty session id")
	}
	WaitForProp(t, time.Second, s, "State", "active")
	if got, want := s.Strings(t, "AllowedClasses"), []string{"Editor"}; !slices.Equal(got, want) {
		t.Errorf("AllowedClasses: got %q, want %q", got, want)
	}
	if got := s.Uint32(t, "SwitchCount"); got != 0 {
		t.Errorf("SwitchCount: got %d, want 0", got)
	}
	if got := failure(t, func(tb testing.TB) { WaitForProp(tb, 50*time.Millisecond, s, "State", "review") }); got != `timed out after 50ms waiting for State to be "review"; last saw "active"` {
		t.Errorf("a wait that timed out: got %q, want it to name the wait, the wanted value and the last seen", got)
	}
	if got := failure(t, func(tb testing.TB) { Prop[uint32](tb, s, "State") }); got == "" {
		t.Error("reading a string property as a uint32 did not fail")
	}
	name, msg := Refused(t, s.Try("Extend", Args(uint64(0))))
	if name != "org.antidrift.Error.InvalidArgument" || msg == "" {
		t.Errorf("Extend(0): got %s %q, want org.antidrift.Error.InvalidArgument and a message", name, msg)
	}
}
