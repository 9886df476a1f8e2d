package main

import (
	"bytes"
	"context"
	"path/filepath"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/godbus/dbus/v5"

	"github.com/antidrift/antidrift/internal/testsupport/testenv"
	"github.com/antidrift/antidrift/service"
)

// setClock is the system clock with a date that can be set: its wall time
// runs offset ahead of the machine's, while the monotonic and boot clocks
// are the machine's own.
type setClock struct {
	service.SystemClock
	mu     sync.Mutex
	offset time.Duration
}

func (c *setClock) Now() time.Time {
	c.mu.Lock()
	defer c.mu.Unlock()
	return time.Now().Add(c.offset)
}

func (c *setClock) set(d time.Duration) {
	c.mu.Lock()
	defer c.mu.Unlock()
	c.offset += d
}

// syncBuffer is a log sink the test reads while the daemon writes.
type syncBuffer struct {
	mu sync.Mutex
	b  bytes.Buffer
}

func (s *syncBuffer) Write(p []byte) (int, error) {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.b.Write(p)
}

func (s *syncBuffer) String() string {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.b.String()
}

// The daemon's own Main, in this process, on a private bus, with a clock
// whose date is set two hours forward in the middle of a locked session:
// the session stays active, Abandon stays refused, the deadline moves with
// the date so the time left is unchanged, and the log says what happened.
func TestALockedSessionSurvivesTheDateSetForward(t *testing.T) {
	testenv.Need(t, "dbus-daemon", "dbus-send")
	t.Setenv("DBUS_SYSTEM_BUS_ADDRESS", "unix:path=/nonexistent/antidrift-test")
	bus := testenv.StartBus(t)
	clock := &setClock{}
	var log syncBuffer
	m := &Main{
		StateDir:   t.TempDir(),
		ConfigPath: filepath.Join(t.TempDir(), "none.toml"),
		Stderr:     &log,
		Version:    "test",
		Clock:      clock,
		BusAddress: bus.Address,
	}
	if err := m.Run(context.Background()); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { m.Close() })
	conn := bus.Dial(t)
	c := &client{conn: conn, obj: conn.Object(busName, objectPath)}

	c.start(t, 3600, "locked")
	before := c.view(t)
	clock.set(2 * time.Hour)

	call := c.call("Abandon", "the clock says the hour is over")
	if call.Err == nil {
		t.Fatal("Abandon went through at locked after the date was set 2 h forward")
	}
	if e, ok := call.Err.(dbus.Error); !ok || e.Name != "org.antidrift.Error.NotPermitted" {
		t.Fatalf("Abandon: got %v, want org.antidrift.Error.NotPermitted", call.Err)
	}
	v := c.view(t)
	if v.State != "active" || v.SessionID != before.SessionID {
		t.Fatalf("after the date was set forward: State, SessionId: got %s %q, want active %q", v.State, v.SessionID, before.SessionID)
	}
	if moved := v.Deadline - before.Deadline; moved < 7200-2 || moved > 7200+2 {
		t.Errorf("the deadline moved by %d s, want the 7200 s the date was set by", moved)
	}
	if !strings.Contains(log.String(), "the wall clock was set") {
		t.Errorf("the log: got\n%s\nwant it to note the jump (%q)", log.String(), "the wall clock was set")
	}
}
