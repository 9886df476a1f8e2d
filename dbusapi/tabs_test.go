package dbusapi

import (
	"net/url"
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

// A tab report from any client is believed only for the window the
// compositor (here KWin's connection) says has focus, when its title is the
// tab's: a forged report for a page that is not in front, from another
// connection, changes nothing a client can read.
func TestATabReportIsBelievedOnlyForTheCompositorsFocusedWindow(t *testing.T) {
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

	host := bus.Dial(t) // the native host: a client like any other
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

	// A forger (gdbus, another connection) names a page that is not in front.
	if _, err := bus.Run(t, "gdbus", "call", "--session", "--dest", BusName, "--object-path", string(ObjectPath),
		"--method", EvidenceInterface+".ReportTab", "firefox", "2", "https", "www.youtube.com", "/watch", "Cats - YouTube", "false"); err != nil {
		t.Fatalf("forged ReportTab: got %v, want it answered (and then ignored)", err)
	}
	time.Sleep(50 * time.Millisecond)
	if v := svc.View(); v.CurrentSite != before.CurrentSite || v.Drift != before.Drift || v.DriftReason != before.DriftReason || v.MinimizeCount != 0 {
		t.Fatalf("after a forged tab report: got %q %s (%s), minimized %d; want the judgement unchanged, %q %s (%s), none minimized", v.CurrentSite, v.Drift, v.DriftReason, v.MinimizeCount, before.CurrentSite, before.Drift, before.DriftReason)
	}
	if strings.Contains(siteProp(t, host), "SECRET") {
		t.Fatalf("CurrentSite: got %q, want no query (SECRET)", siteProp(t, host))
	}

	// Bad reports are refused with a named error a person reads.
	err := reportTab(host, "opera", "https://example.com", "", false)
	if errorName(err) != "org.antidrift.Error.InvalidArgument" || !strings.Contains(err.Error(), "browser must be firefox or chromium") {
		t.Fatalf("ReportTab from an unknown browser: got %v, want InvalidArgument saying the browser must be firefox or chromium", err)
	}
	err = host.Object(BusName, ObjectPath).Call(EvidenceInterface+".ForgetTabs", 0, "firefox").Err
	if err != nil {
		t.Fatalf("ForgetTabs: got %v, want success", err)
	}
	if v := svc.View(); v.CurrentSite != "" || !strings.Contains(v.SiteReason, "no antidrift extension") {
		t.Fatalf("after ForgetTabs: got %q (%s), want no site and a reason saying there is no antidrift extension", v.CurrentSite, v.SiteReason)
	}
}
