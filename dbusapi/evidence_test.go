package dbusapi

import (
	"errors"
	"strings"
	"testing"
	"time"

	"github.com/godbus/dbus/v5"

	"github.com/antidrift/antidrift/internal/testsupport/testenv"
)

// focus is one report as the gate hands it on.
type focus struct{ handle, app, title string }

// compositorConn is a connection that owns name, as KWin owns org.kde.KWin.
func compositorConn(t *testing.T, bus *testenv.Bus, name string) *dbus.Conn {
	t.Helper()
	conn := bus.Dial(t)
	if reply, err := conn.RequestName(name, dbus.NameFlagDoNotQueue); err != nil || reply != dbus.RequestNameReplyPrimaryOwner {
		t.Fatalf("owning %s: got %v %v, want primary owner", name, reply, err)
	}
	return conn
}

func reportFocus(conn *dbus.Conn, handle, appID, title string) error {
	return conn.Object(BusName, ObjectPath).Call(EvidenceInterface+".ReportFocus", 0, handle, appID, title).Err
}

// believe makes the server believe the owner of name, collecting what it
// hands on.
func believe(srv *Server, source, name string) (got chan focus, stop func()) {
	got = make(chan focus, 16)
	stop = srv.BelieveEvidenceFrom(source, name, func(handle, app, title string) { got <- focus{handle, app, title} })
	return got, stop
}

func next(t *testing.T, got chan focus) focus {
	t.Helper()
	select {
	case f := <-got:
		return f
	case <-time.After(10 * time.Second):
		t.Fatal("a report handed on: got none within 10 s, want one")
		return focus{}
	}
}

func nothingMore(t *testing.T, got chan focus) {
	t.Helper()
	select {
	case f := <-got:
		t.Fatalf("a refused report: got it handed on, %+v; want nothing", f)
	default:
	}
}

// refusedByRule checks that err is the bus's AccessDenied and names the
// rule: only the owner of name is believed.
func refusedByRule(t *testing.T, err error, name string) {
	t.Helper()
	if errorName(err) != "org.freedesktop.DBus.Error.AccessDenied" ||
		!strings.Contains(err.Error(), "only from the compositor: the connection that owns "+name) {
		t.Fatalf("ReportFocus = %v, want org.freedesktop.DBus.Error.AccessDenied naming the rule for %s", err, name)
	}
}

// The compositors that push, by the source that believes them.
var pushers = []struct{ source, name string }{{"kwin", "org.kde.KWin"}, {"gnome-shell", "org.gnome.Shell"}}

// forEachPusher runs scene for each compositor that pushes, on a served
// core believing it, with a connection a that owns its name and has
// reported n times (each report believed).
func forEachPusher(t *testing.T, n int, scene func(t *testing.T, bus *testenv.Bus, name string, a *dbus.Conn, got chan focus)) {
	for _, p := range pushers {
		t.Run(p.source, func(t *testing.T) {
			bus, _, srv := serve(t)
			got, stop := believe(srv, p.source, p.name)
			defer stop()
			a := compositorConn(t, bus, p.name)
			for i := range n {
				if err := reportFocus(a, "a", "org.example.Editor", string(rune('a'+i))); err != nil {
					t.Fatalf("ReportFocus from the owner: got %v, want success", err)
				}
				next(t, got)
			}
			scene(t, bus, p.name, a, got)
		})
	}
}

// Only the compositor is believed: the owner of the source's bus name,
// while that source is in use. A process of the same user that is not the
// compositor cannot feed the core windows.
func TestReportFocusIsBelievedOnlyFromTheCompositor(t *testing.T) {
	bus, _, srv := serve(t)
	srv.SetEvidenceSource("x11")
	kwin := compositorConn(t, bus, "org.kde.KWin")

	// No pushing source in use: even KWin is refused, and told why.
	err := reportFocus(kwin, "1", "org.kde.konsole", "~")
	if errorName(err) != "org.freedesktop.DBus.Error.AccessDenied" || !strings.Contains(err.Error(), "evidence source is x11, which takes no focus reports") {
		t.Fatalf("ReportFocus with x11 in use = %v, want AccessDenied naming the source", err)
	}

	got, stop := believe(srv, "kwin", "org.kde.KWin")
	if err := reportFocus(kwin, "{abc}", "org.kde.konsole", "build log"); err != nil {
		t.Fatalf("ReportFocus from KWin's connection: got %v, want success", err)
	}
	if f := next(t, got); f != (focus{"{abc}", "org.kde.konsole", "build log"}) {
		t.Fatalf("handed on: got %+v, want {{abc} org.kde.konsole build log}", f)
	}

	// A forger: gdbus, another connection of the same user.
	_, err = bus.Run(t, "gdbus", "call", "--session", "--dest", BusName, "--object-path", string(ObjectPath),
		"--method", EvidenceInterface+".ReportFocus", "{forged}", "steam", "a game")
	if err == nil || !strings.Contains(err.Error(), "org.freedesktop.DBus.Error.AccessDenied") || !strings.Contains(err.Error(), "only from the compositor: the connection that owns org.kde.KWin") {
		t.Fatalf("forged ReportFocus = %v, want AccessDenied naming the rule", err)
	}

	// KWin restarts: the new owner is believed from its first call.
	kwin.Close()
	kwin2 := compositorConn(t, bus, "org.kde.KWin")
	if err := reportFocus(kwin2, "{def}", "firefox", "docs"); err != nil {
		t.Fatalf("ReportFocus from the restarted KWin: got %v, want success", err)
	}
	if f := next(t, got); f.handle != "{def}" {
		t.Fatalf("handed on after the restart: got %+v, want handle {def}", f)
	}

	stop()
	if err := reportFocus(kwin2, "{ghi}", "firefox", "docs"); errorName(err) != "org.freedesktop.DBus.Error.AccessDenied" {
		t.Fatalf("ReportFocus after stop = %v, want AccessDenied", err)
	}
	nothingMore(t, got)
}

// A compositor that gave up its name (and stays connected) is not
// believed from that moment: not its very next report, sent right after
// ReleaseName, while the bus's NameOwnerChanged may still be on its way.
func TestReportFocusAfterReleaseNameIsRefused(t *testing.T) {
	forEachPusher(t, 1, func(t *testing.T, _ *testenv.Bus, name string, a *dbus.Conn, got chan focus) {
		if reply, err := a.ReleaseName(name); err != nil || reply != dbus.ReleaseNameReplyReleased {
			t.Fatalf("ReleaseName: got %v %v, want released", reply, err)
		}
		refusedByRule(t, reportFocus(a, "2", "org.example.Game", "a game"), name)
		nothingMore(t, got)
	})
}

// A releases, B takes the name, A reports once more, B reports: A is
// refused, and B is believed from its first report though its connection
// has numbered far fewer messages than A's (ordering is per connection,
// and starts afresh with the new owner).
func TestReportFocusFollowsTheNameToItsNewOwner(t *testing.T) {
	forEachPusher(t, 20, func(t *testing.T, bus *testenv.Bus, name string, a *dbus.Conn, got chan focus) {
		// A's serials now run well ahead of B's.
		b := bus.Dial(t)
		if reply, err := b.RequestName(name, 0); err != nil || reply != dbus.RequestNameReplyInQueue {
			t.Fatalf("B queueing for %s: got %v %v, want in queue", name, reply, err)
		}
		if _, err := a.ReleaseName(name); err != nil {
			t.Fatal(err)
		}
		// The bus handed the name to B when A released it.
		refusedByRule(t, reportFocus(a, "a", "org.example.Game", "one more"), name)
		if err := reportFocus(b, "b", "org.example.Terminal", "make"); err != nil {
			t.Fatalf("ReportFocus from the new owner: got %v, want success", err)
		}
		if f := next(t, got); f != (focus{"b", "org.example.Terminal", "make"}) {
			t.Fatalf("handed on %+v, want B's first report", f)
		}
		nothingMore(t, got)
	})
}

// A disconnected owner's trust ends with it; its successor is believed.
func TestReportFocusAfterTheOwnerDisconnects(t *testing.T) {
	forEachPusher(t, 1, func(t *testing.T, bus *testenv.Bus, name string, a *dbus.Conn, got chan focus) {
		a.Close()
		refusedByRule(t, reportFocus(bus.Dial(t), "2", "steam", "a game"), name)
		nothingMore(t, got)
	})
}

// Reports of one connection are taken in the order it numbered them, across
// the wrap of its serials; a new owner starts a new order.
func TestReportOrder(t *testing.T) {
	var o reportOrder
	for _, step := range []struct {
		serial uint32
		newer  bool
	}{
		{20, true},
		{19, false}, // overtaken by 20 on its way
		{20, false}, // the same message twice is not news
		{21, true},
		{0xfffffffe, false}, // far behind 21, by the connection's count
	} {
		if got := o.newer(step.serial); got != step.newer {
			t.Fatalf("newer(%#x) = %v, want %v", step.serial, got, step.newer)
		}
	}
	o = reportOrder{}
	for _, step := range []struct {
		serial uint32
		newer  bool
	}{
		{0xfffffffe, true}, // a new owner: its first report, whatever its number
		{1, true},          // after the wrap
		{0xffffffff, false},
	} {
		if got := o.newer(step.serial); got != step.newer {
			t.Fatalf("after a new owner, newer(%#x) = %v, want %v", step.serial, got, step.newer)
		}
	}
}

// errorName is the D-Bus error name of err ("" when it is none).
func errorName(err error) string {
	var e dbus.Error
	if errors.As(err, &e) {
		return e.Name
	}
	return ""
}

// A stop called late, after the source was believed again under the same
// name (a source restarted), does not end the new belief: the compositor
// is still believed.
func TestLateStopLeavesTheNextBeliefAlone(t *testing.T) {
	bus, _, srv := serve(t)
	_, stale := believe(srv, "kwin", "org.kde.KWin")
	got, stop := believe(srv, "kwin", "org.kde.KWin")
	defer stop()
	stale()
	kwin := compositorConn(t, bus, "org.kde.KWin")
	if err := reportFocus(kwin, "{abc}", "org.kde.konsole", "build log"); err != nil {
		t.Fatalf("ReportFocus after a stale stop: got %v, want success", err)
	}
	if f := next(t, got); f.handle != "{abc}" {
		t.Fatalf("handed on: got %+v, want handle {abc}", f)
	}
}
