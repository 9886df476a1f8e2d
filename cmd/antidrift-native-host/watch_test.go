package main

import (
	"bytes"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/godbus/dbus/v5"

	"github.com/antidrift/antidrift/internal/busname"
	"github.com/antidrift/antidrift/internal/testsupport/testenv"
)

// lockedBuffer is a bytes.Buffer safe for the watcher's goroutine.
type lockedBuffer struct {
	mu sync.Mutex
	b  bytes.Buffer
}

func (l *lockedBuffer) Write(p []byte) (int, error) {
	l.mu.Lock()
	defer l.mu.Unlock()
	return l.b.Write(p)
}

func (l *lockedBuffer) String() string {
	l.mu.Lock()
	defer l.mu.Unlock()
	return l.b.String()
}

// busEvidence takes the host's reports on the bus, as antidriftd's
// Evidence1 would.
type busEvidence struct{ reports chan int64 }

func (e *busEvidence) ReportTab(browser string, tabID int64, scheme, host, path, title string, private bool) *dbus.Error {
	e.reports <- tabID
	return nil
}

// The host learns who owns org.antidrift as every watcher does
// (internal/busname): a peer's forged NameOwnerChanged changes nothing (no
// resend to a daemon that is not there), and only the owner's signals
// reach the extension; the bus's own news of a new owner makes the host
// send the last report again.
func TestTheHostBelievesOnlyTheBusOfWhoOwnsTheDaemonsName(t *testing.T) {
	bus := testenv.StartBus(t)
	conn := bus.Dial(t)
	var log, out lockedBuffer
	d := &busDaemon{conn: conn, log: &log}
	h := &host{browser: "firefox", d: d, log: &log, out: &out}
	d.browser, d.last = "firefox", &report{TabID: 7, Scheme: "https", Host: "example.org", Title: "Example"}
	if err := d.watch(h); err != nil {
		t.Fatal(err)
	}

	forger := bus.Dial(t)
	me := conn.Names()[0]
	testenv.SendSignalTo(t, forger, me, busname.BusPath, busname.Bus+".NameOwnerChanged", busName, "", forger.Names()[0])
	testenv.SendSignalTo(t, forger, me, objectPath, evidenceAPI+".BlockTab", "firefox", int64(7), "example.org", "n", "d", int64(0))

	daemon := bus.Dial(t)
	ev := &busEvidence{reports: make(chan int64, 4)}
	if err := daemon.Export(ev, objectPath, evidenceAPI); err != nil {
		t.Fatal(err)
	}
	if reply, err := daemon.RequestName(busName, dbus.NameFlagDoNotQueue); err != nil || reply != dbus.RequestNameReplyPrimaryOwner {
		t.Fatalf("taking %s: %v %v", busName, reply, err)
	}
	select {
	case id := <-ev.reports:
		if id != 7 {
			t.Fatalf("the resent report: got tab %d, want 7", id)
		}
	case <-time.After(10 * time.Second):
		t.Fatalf("the daemon came and no report was resent; the host said: %s", log.String())
	}
	// The signals are handled in order: the forgery was read before the
	// bus's news of the real owner.
	if strings.Contains(log.String(), "did not take") {
		t.Errorf("after a forged NameOwnerChanged: got the host resending to no daemon (%q), want the forgery ignored", log.String())
	}

	testenv.SendSignalTo(t, forger, me, busname.BusPath, busname.Bus+".NameOwnerChanged", busName, daemon.Names()[0], forger.Names()[0])
	testenv.SendSignalTo(t, forger, me, objectPath, evidenceAPI+".BlockTab", "firefox", int64(8), "forged.example", "n", "d", int64(0))
	if err := daemon.Emit(objectPath, evidenceAPI+".BlockTab", "firefox", int64(7), "example.org", "write", "done", int64(0)); err != nil {
		t.Fatal(err)
	}
	testenv.WaitFor(t, 10*time.Second, "the daemon's BlockTab relayed to the extension",
		func() string { return out.String() }, func(s string) bool { return strings.Contains(s, `"tab_id":7`) })
	if s := out.String(); strings.Contains(s, "forged.example") || strings.Count(s, `"type":"block"`) != 1 {
		t.Errorf("to the extension: got %q, want the daemon's one block and nothing of the forger's", s)
	}
}
