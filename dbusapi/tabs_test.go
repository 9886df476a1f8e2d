package dbusapi

import (
	"fmt"
	"net/url"
	"os"
	"strings"
	"testing"
	"time"

	"github.com/godbus/dbus/v5"

	"github.com/antidrift/antidrift/internal/testsupport/testenv"
	"github.com/antidrift/antidrift/service"
)

// reportTab calls ReportTab as a native host does, rawURL split as the
// browser's parser splits it (Go's stands in for it on these plain
// addresses).
func reportTab(conn *dbus.Conn, browser, rawURL, title string, private bool) error {
	u, err := url.Parse(rawURL)
	if err != nil {
		return err
	}
	return conn.Object(BusName, ObjectPath).Call(EvidenceInterface+".ReportTab", 0, browser, int64(1), u.Scheme, u.Hostname(), u.EscapedPath(), title, private).Err
}

func siteProp(t *testing.T, conn *dbus.Conn) string {
	t.Helper()
	v, err := conn.Object(BusName, ObjectPath).GetProperty(Interface + ".CurrentSite")
	if err != nil {
		t.Fatal(err)
	}
	s, _ := v.Value().(string)
	return s
}

// trustThisProcess makes the server believe its own process's connections
// as native hosts Firefox started, and nobody else (gdbus): the
// HostIdentifier is the daemon's port; the real one (/proc) is tested with
// the real host in cmd/antidriftd.
func trustThisProcess(srv *Server) {
	srv.TrustTabHosts(func(pid int) (string, int, error) {
		if pid != os.Getpid() {
			return "", 0, fmt.Errorf("process %d is not the test's", pid)
		}
		return service.BrowserFirefox, 4242, nil
	})
}

// A tab report is believed only from a native host (here: this process's
// connections), and then only for the window the compositor (KWin's
// connection) says has focus, when its title is the tab's. A report from
// another client (gdbus) is refused, named, and changes nothing; so is its
// ForgetTabs. Two hosts of one family keep their own claims: one leaving
// the bus, or forgetting, ends its own only.
func TestATabReportIsBelievedOnlyFromAHostForTheCompositorsFocusedWindow(t *testing.T) {
	bus, svc, srv := serve(t)
	windows := make(chan service.Window, 16)
	go func() {
		for w := range windows {
			svc.RecordWindow(w)
		}
	}()
	stop := srv.BelieveEvidenceFrom("kwin", "org.kde.KWin", func(handle, app, title string) {
		windows <- service.ReportedWindow(handle, app, title)
	})
	defer stop()
	defer close(windows)
	trustThisProcess(srv)
	kwin := compositorConn(t, bus, "org.kde.KWin")
	if err := reportFocus(kwin, "{ff}", "firefox-esr", "Tabs, not windows #3 — Mozilla Firefox"); err != nil {
		t.Fatal(err)
	}
	// The core, polled (the property cache is the server's business), for
	// what a client would read.
	testenv.WaitForValue(t, 10*time.Second, "CurrentClass", "firefox-esr", func() string { return svc.View().CurrentClass })
	if _, err := svc.Start("review the PR", "approved", 600, "block", []string{"url:github.com/antidrift/*"}); err != nil {
		t.Fatal(err)
	}

	host := bus.Dial(t)
	if err := reportTab(host, "firefox", "https://github.com/antidrift/antidrift/pull/3?token=SECRET#x", "Tabs, not windows #3", false); err != nil {
		t.Fatalf("ReportTab: got %v, want success", err)
	}
	if got := siteProp(t, host); got != "github.com/antidrift/antidrift/pull/3" {
		t.Fatalf("CurrentSite: got %q, want github.com/antidrift/antidrift/pull/3", got)
	}
	before := svc.View()
	if before.Drift != service.DriftOnTask {
		t.Fatalf("on the pull request: got drift %s (%s), want on_task", before.Drift, before.DriftReason)
	}
	unchanged := func(after string) {
		t.Helper()
		time.Sleep(50 * time.Millisecond)
		if v := svc.View(); v.CurrentSite != before.CurrentSite || v.Drift != before.Drift || v.DriftReason != before.DriftReason || v.MinimizeCount != 0 {
			t.Fatalf("after %s: got %q %s (%s), minimized %d; want the judgement unchanged, %q %s (%s), none minimized", after, v.CurrentSite, v.Drift, v.DriftReason, v.MinimizeCount, before.CurrentSite, before.Drift, before.DriftReason)
		}
	}

	// A forger (gdbus, another process) names the page in front's title
	// with a distraction's address: refused, and nothing changes.
	_, err := bus.Run(t, "gdbus", "call", "--session", "--dest", BusName, "--object-path", string(ObjectPath),
		"--method", EvidenceInterface+".ReportTab", "firefox", "2", "https", "www.youtube.com", "/watch", "Tabs, not windows #3", "false")
	if err == nil || !strings.Contains(err.Error(), "AccessDenied") || !strings.Contains(err.Error(), "only from antidrift-native-host started by a browser") {
		t.Fatalf("forged ReportTab: got %v, want AccessDenied saying tab reports are believed only from antidrift-native-host started by a browser", err)
	}
	unchanged("a forged tab report")
	_, err = bus.Run(t, "gdbus", "call", "--session", "--dest", BusName, "--object-path", string(ObjectPath),
		"--method", EvidenceInterface+".ForgetTabs", "firefox")
	if err == nil || !strings.Contains(err.Error(), "AccessDenied") {
		t.Fatalf("forged ForgetTabs: got %v, want AccessDenied", err)
	}
	unchanged("a forged ForgetTabs")
	_, err = bus.Run(t, "gdbus", "call", "--session", "--dest", BusName, "--object-path", string(ObjectPath),
		"--method", EvidenceInterface+".TabBlocked", "firefox", "1")
	if err == nil || !strings.Contains(err.Error(), "AccessDenied") {
		t.Fatalf("forged TabBlocked: got %v, want AccessDenied", err)
	}
	unchanged("a forged TabBlocked")
	if strings.Contains(siteProp(t, host), "SECRET") {
		t.Fatalf("CurrentSite: got %q, want no query (SECRET)", siteProp(t, host))
	}

	// A second host of the same family (another profile) comes and goes:
	// its ForgetTabs and its leaving the bus end its own claims only.
	second := bus.Dial(t)
	if err := reportTab(second, "firefox", "https://www.youtube.com/watch", "Cats - YouTube", false); err != nil {
		t.Fatalf("the second host's ReportTab: got %v, want success", err)
	}
	if err := second.Object(BusName, ObjectPath).Call(EvidenceInterface+".ForgetTabs", 0, "firefox").Err; err != nil {
		t.Fatalf("the second host's ForgetTabs: got %v, want success", err)
	}
	unchanged("a second host's ForgetTabs")
	if err := reportTab(second, "firefox", "https://www.youtube.com/watch", "Cats - YouTube", false); err != nil {
		t.Fatalf("the second host's ReportTab: got %v, want success", err)
	}
	second.Close()
	unchanged("a second host leaving the bus")

	// A peer forges the bus's NameOwnerChanged, sent straight to the
	// daemon, saying the host left: only the bus's own counts.
	forger := bus.Dial(t)
	forged := &dbus.Message{Type: dbus.TypeSignal, Headers: map[dbus.HeaderField]dbus.Variant{
		dbus.FieldPath:        dbus.MakeVariant(dbus.ObjectPath("/org/freedesktop/DBus")),
		dbus.FieldInterface:   dbus.MakeVariant("org.freedesktop.DBus"),
		dbus.FieldMember:      dbus.MakeVariant("NameOwnerChanged"),
		dbus.FieldDestination: dbus.MakeVariant(srv.conn.Names()[0]),
		dbus.FieldSignature:   dbus.MakeVariant(dbus.SignatureOf("", "", "")),
	}, Body: []any{host.Names()[0], host.Names()[0], ""}}
	if call := <-forger.Send(forged, make(chan *dbus.Call, 1)).Done; call.Err != nil {
		t.Fatalf("sending the forged NameOwnerChanged: %v", call.Err)
	}
	unchanged("a NameOwnerChanged forged by a peer")

	// A host reports only its own browser's tabs.
	err = reportTab(host, "chromium", "https://example.com", "", false)
	if errorName(err) != "org.freedesktop.DBus.Error.AccessDenied" || !strings.Contains(err.Error(), "started by a firefox browser") {
		t.Fatalf("ReportTab of another browser: got %v, want AccessDenied saying the host was started by a firefox browser", err)
	}
	// Its own claims end when it leaves the bus.
	host.Close()
	testenv.WaitForValue(t, 10*time.Second, "SiteReason says no extension", true, func() bool {
		v := svc.View()
		return v.CurrentSite == "" && strings.Contains(v.SiteReason, "no antidrift extension")
	})
}

// A BlockTab goes to the one host whose report named the tab (a unicast
// signal: it arrives without a match rule), never to another host or
// client, even one listening for every Evidence1 signal: no other browser
// or profile acts on another's tab id, and no one else hears the site. A
// RestoreTabs goes to all.
func TestBlockTabGoesOnlyToTheHostWhoseTabItNames(t *testing.T) {
	bus, _, srv := serve(t)
	host, other := bus.Dial(t), bus.Dial(t)
	if err := other.AddMatchSignal(dbus.WithMatchInterface(EvidenceInterface)); err != nil {
		t.Fatal(err)
	}
	if err := host.AddMatchSignal(dbus.WithMatchInterface(EvidenceInterface), dbus.WithMatchMember("RestoreTabs")); err != nil {
		t.Fatal(err)
	}
	hostSig, otherSig := make(chan *dbus.Signal, 8), make(chan *dbus.Signal, 8)
	host.Signal(hostSig)
	other.Signal(otherSig)
	next := func(ch chan *dbus.Signal, who string) *dbus.Signal {
		t.Helper()
		for {
			select {
			case s := <-ch:
				if strings.HasPrefix(s.Name, EvidenceInterface+".") {
					return s
				}
			case <-time.After(5 * time.Second):
				t.Fatalf("%s: got no Evidence1 signal within 5 s, want one", who)
				return nil
			}
		}
	}
	srv.TabOrder(service.TabOrder{Conn: host.Names()[0], Browser: service.BrowserFirefox, TabID: 42, Site: "www.youtube.com/watch", NextAction: "review", Done: "approved", DeadlineUnix: 1})
	srv.TabOrder(service.TabOrder{Restore: true})
	if s := next(hostSig, "the host"); s.Name != EvidenceInterface+".BlockTab" || len(s.Body) != 6 || s.Body[1] != int64(42) || s.Body[2] != "www.youtube.com/watch" {
		t.Fatalf("the host: got %s %v, want BlockTab(firefox, 42, www.youtube.com/watch, …)", s.Name, s.Body)
	}
	if s := next(hostSig, "the host"); s.Name != EvidenceInterface+".RestoreTabs" {
		t.Fatalf("the host: got %s, want RestoreTabs", s.Name)
	}
	// Signals arrive in order: the other connection's first is the restore.
	if s := next(otherSig, "another client"); s.Name != EvidenceInterface+".RestoreTabs" {
		t.Fatalf("another client listening to Evidence1: got %s %v first, want RestoreTabs (the BlockTab was not its)", s.Name, s.Body)
	}
}

// A host's calls are taken in the order it sent them: one overtaken by a
// newer call of the same host (its resend after a daemon restart crossing
// its next report) is dropped; after the host left, nothing is taken.
func TestAHostsCallsAreTakenInTheOrderItSentThem(t *testing.T) {
	var h tabHost
	var took []uint32
	take := func(serial uint32) {
		t.Helper()
		if err := h.recordInOrder(serial, func() error { took = append(took, serial); return nil }); err != nil {
			t.Fatalf("call %d: got %v, want it answered", serial, err)
		}
	}
	take(5)
	take(4)
	take(6)
	if fmt.Sprint(took) != "[5 6]" {
		t.Fatalf("calls taken: got %v, want [5 6] (4 came after 5)", took)
	}
	h.gone = true
	if err := h.recordInOrder(7, func() error { took = append(took, 7); return nil }); err == nil || len(took) != 2 {
		t.Fatalf("after the host left: got %v, took %v; want a refusal and nothing taken", err, took)
	}
}
