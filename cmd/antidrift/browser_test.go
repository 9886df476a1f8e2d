package main

import (
	"strings"
	"testing"

	"github.com/antidrift/antidrift/internal/testsupport/testenv"
)

// A browser window (an xterm named like Firefox, titled as Firefox titles
// its windows, with the hyphen: xterm sets a title beyond Latin-1 as
// escapes) and its extension's native host: switching tabs changes the
// site status shows, a url: rule makes one tab on task and another drift in
// the same window, at block the drifting tab is replaced (through the host)
// while the window stays, and restored after the session, the host tells a
// restarted daemon the page in front
// again, and closing the browser leaves status saying the extension is gone.
func TestStatusShowsTheSiteTheBrowsersExtensionReports(t *testing.T) {
	testenv.Need(t, "dbus-daemon", "dbus-send", "Xvfb", "openbox", "xterm", "xdotool", "xprop")
	x := testenv.StartX(t)
	browser := x.XTerm(t, "firefox-esr", "Tabs, not windows #3 - Mozilla Firefox")
	x.Activate(t, browser)
	s := startDaemon(t, "drift_grace = \"0s\"\ndistractions = [\"url:*.youtube.com\"]\n", "DISPLAY="+x.Name)
	s.waitForStatus(t, "antidriftd to see the browser window", map[string]any{"current_class": "firefox-esr"})
	if text := s.ok(t, "status"); !strings.Contains(lineWith(text, "site "), "Firefox has no antidrift extension connected") {
		t.Errorf("status: got\n%s\nwant its site line to say Firefox has no extension connected", text)
	}

	host := testenv.StartNativeHost(t, s.d.Bus.Env(), "firefox-esr")
	host.Send(t, map[string]any{"type": "tab", "tab_id": 1, "scheme": "https", "host": "github.com", "path": "/antidrift/antidrift/pull/3", "title": "Tabs, not windows #3"})
	s.waitForStatus(t, "the pull request as the current site", map[string]any{"current_site": "github.com/antidrift/antidrift/pull/3"})
	s.ok(t, "start", "review the PR", "--done-when", "approved", "--for", "10m", "--allow", "url:github.com/antidrift/*", "--enforce", "block")
	if st := s.status(t); st["drift"] != "on_task" {
		t.Fatalf("on the pull request, status --json drift: got %v (%v), want on_task", st["drift"], st["drift_reason"])
	}
	text := s.ok(t, "status")
	contains(t, "status on the pull request", text, "site         github.com/antidrift/antidrift/pull/3", "matches allowed url:github.com/antidrift/*")

	// Another tab of the same window.
	host.Send(t, map[string]any{"type": "tab", "tab_id": 2, "scheme": "https", "host": "www.youtube.com", "path": "/watch", "title": "Cats - YouTube"})
	x.SetTitle(t, browser, "Cats - YouTube - Mozilla Firefox")
	s.waitForStatus(t, "drift on the YouTube tab", map[string]any{"current_site": "www.youtube.com/watch", "drift": "drifting"})
	if st := s.status(t); st["drift_reason"] != "matches distraction url:*.youtube.com" {
		t.Errorf("status --json drift_reason: got %v, want \"matches distraction url:*.youtube.com\"", st["drift_reason"])
	}
	// At block the daemon has the extension replace the tab's page; the
	// window stays.
	if m := host.Next(t, wait, "a block"); m["type"] != "block" || m["tab_id"] != float64(2) || m["site"] != "www.youtube.com/watch" || m["next_action"] != "review the PR" || m["done_when"] != "approved" {
		t.Fatalf("the host relayed: got %v, want a block of tab 2 (www.youtube.com/watch) with the commitment", m)
	}
	host.Send(t, map[string]any{"type": "blocked", "tab_id": 2}) // the extension replaced the page
	if state := x.WMState(t, browser); state != "Normal" {
		t.Errorf("the browser window's WM_STATE: got %s, want Normal (not minimized)", state)
	}
	host.Send(t, map[string]any{"type": "tab", "tab_id": 2, "scheme": "antidrift", "title": "antidrift: back to work"})
	x.SetTitle(t, browser, "antidrift: back to work - Mozilla Firefox")
	testenv.WaitFor(t, wait, "the extension's page (current_site \"antidrift:\") to end the drift", func() map[string]any {
		return pick(s.status(t), "current_site", "drift")
	}, func(st map[string]any) bool { return st["current_site"] == "antidrift:" && st["drift"] != "drifting" })
	s.ok(t, "complete")
	if m := host.Next(t, wait, "a restore"); m["type"] != "restore" {
		t.Fatalf("the host relayed after the session: got %v, want a restore", m)
	}
	host.Send(t, map[string]any{"type": "tab", "tab_id": 2, "scheme": "https", "host": "www.youtube.com", "path": "/watch", "title": "Cats - YouTube"})
	x.SetTitle(t, browser, "Cats - YouTube - Mozilla Firefox")

	// The daemon restarts: the host tells the new one at once.
	s.d.Stop(t)
	s.d.Start(t)
	s.waitForStatus(t, "the restarted daemon to know the page in front", map[string]any{"current_site": "www.youtube.com/watch"})

	// The browser closes: its windows are judged by the window alone again.
	host.Close()
	testenv.WaitFor(t, wait, "the extension to be gone (no current_site, a site_reason saying \"no antidrift extension\")", func() map[string]any {
		return pick(s.status(t), "current_site", "site_reason")
	}, func(st map[string]any) bool {
		return st["current_site"] == "" && strings.Contains(st["site_reason"].(string), "no antidrift extension")
	})
	if text := s.ok(t, "status"); strings.Contains(text, "SECRET") {
		t.Errorf("status: got\n%s\nwant no URL query (SECRET)", text)
	}
}

// A block the extension never confirms (an older extension, one that found
// the tab changed, a host that lost its browser) is not left undone: after
// its short wait the daemon minimizes the browser window, as for a browser
// without the extension, and counts it as a minimize. A confirmation that
// comes after that changes nothing.
func TestAnUnconfirmedTabBlockMinimizesTheBrowserWindow(t *testing.T) {
	testenv.Need(t, "dbus-daemon", "dbus-send", "Xvfb", "openbox", "xterm", "xdotool", "xprop")
	x := testenv.StartX(t)
	browser := x.XTerm(t, "chromium", "Tabs, not windows #3 - Chromium")
	x.Activate(t, browser)
	s := startDaemon(t, "drift_grace = \"0s\"\ndistractions = [\"url:*.youtube.com\"]\n", "DISPLAY="+x.Name)
	s.waitForStatus(t, "antidriftd to see the browser window", map[string]any{"current_class": "chromium"})
	host := testenv.StartNativeHost(t, s.d.Bus.Env(), "chromium")
	host.Send(t, map[string]any{"type": "tab", "tab_id": 1, "scheme": "https", "host": "github.com", "path": "/antidrift/antidrift/pull/3", "title": "Tabs, not windows #3"})
	s.waitForStatus(t, "the pull request as the current site", map[string]any{"current_site": "github.com/antidrift/antidrift/pull/3"})
	s.ok(t, "start", "review the PR", "--done-when", "approved", "--for", "10m", "--allow", "url:github.com/antidrift/*", "--enforce", "block")

	host.Send(t, map[string]any{"type": "tab", "tab_id": 2, "scheme": "https", "host": "www.youtube.com", "path": "/watch", "title": "Cats - YouTube"})
	x.SetTitle(t, browser, "Cats - YouTube - Chromium")
	if m := host.Next(t, wait, "a block"); m["type"] != "block" || m["tab_id"] != float64(2) {
		t.Fatalf("the host relayed: got %v, want a block of tab 2", m)
	}
	// No "blocked" from the extension: the window goes instead.
	testenv.WaitForValue(t, wait, "the browser window's WM_STATE without a confirmation", "Iconic", func() string { return x.WMState(t, browser) })
	s.waitForStatus(t, "the fallback counted as a minimize", map[string]any{"minimize_count": float64(1)})
	host.Send(t, map[string]any{"type": "blocked", "tab_id": 2}) // too late
	s.ok(t, "complete")
	if m := host.Next(t, wait, "a restore"); m["type"] != "restore" {
		t.Fatalf("the host relayed after the session: got %v, want a restore (the page may have been replaced late)", m)
	}
	if st := s.status(t); st["minimize_count"] != float64(1) {
		t.Errorf("status --json minimize_count after a late confirmation: got %v, want 1", st["minimize_count"])
	}
}
