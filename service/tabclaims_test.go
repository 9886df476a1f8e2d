package service

import (
	"slices"
	"strings"
	"testing"
	"time"
)

// report is a tab report from the host on bus connection conn, started by
// a browser of family browser.
func (h *harness) report(conn, browser, url, title string, private bool) error {
	return h.RecordTab(TabSource{Conn: conn, Browser: browser}, reportOf(url, title, private))
}

// Two hosts of one family (two Firefox profiles, or Firefox and LibreWolf)
// keep their own claims: one forgetting, or a connection that claimed
// nothing forgetting, changes nothing of the other's; each host's tab
// decides only the window whose title it fits.
func TestTwoHostsOfOneFamilyKeepTheirOwnClaims(t *testing.T) {
	h, g, _ := newDriftHarness(t, driftOpts{distractions: []string{"url:*.youtube.com"}})
	h.RecordWindow(ffWin("7", prTitle))
	must(t, h.report(":1.a", BrowserFirefox, prURL, prTitle, false))
	h.start(t, LevelBlock, "url:github.com/antidrift/*")
	must(t, h.report(":1.b", BrowserFirefox, ytURL, ytTitle, false))
	if v := h.View(); v.CurrentSite != prSite || v.Drift != DriftOnTask {
		t.Fatalf("after the second profile's report: got %q %s, want %q %s", v.CurrentSite, v.Drift, prSite, DriftOnTask)
	}
	// The second profile's window in front, then back to the first's.
	h.RecordWindow(ffWin("8", ytTitle))
	if v := h.View(); v.CurrentSite != "www.youtube.com/watch" {
		t.Fatalf("the second profile's window: got site %q, want www.youtube.com/watch", v.CurrentSite)
	}
	h.RecordWindow(ffWin("7", prTitle))
	if v := h.View(); v.CurrentSite != prSite || v.Drift != DriftOnTask {
		t.Fatalf("back on the first profile's window: got %q %s, want %q %s", v.CurrentSite, v.Drift, prSite, DriftOnTask)
	}
	for _, conn := range []string{":1.b", ":1.nobody", ""} {
		must(t, h.ForgetTabs(conn))
		if v := h.View(); v.CurrentSite != prSite || v.Drift != DriftOnTask {
			t.Fatalf("after ForgetTabs(%q): got %q %s (%s), want %q %s", conn, v.CurrentSite, v.Drift, v.DriftReason, prSite, DriftOnTask)
		}
	}
	h.settle()
	if m, _ := g.calls(); len(m) != 1 || m[0] != "8" {
		t.Fatalf("minimized: got %v, want only the second profile's window [8]", m)
	}
	must(t, h.ForgetTabs(":1.a"))
	if v := h.View(); v.CurrentSite != "" || !strings.Contains(v.SiteReason, "no antidrift extension") {
		t.Fatalf("after the first host's ForgetTabs: got %q (%s), want no site, no extension", v.CurrentSite, v.SiteReason)
	}
}

// A connection speaks for the one browser that started its host.
func TestAHostReportsOnlyItsOwnBrowser(t *testing.T) {
	h, _, _ := newDriftHarness(t, driftOpts{})
	must(t, h.report(":1.a", BrowserFirefox, prURL, prTitle, false))
	err := h.report(":1.a", BrowserChromium, prURL, prTitle, false)
	if err == nil || !strings.Contains(err.Error(), "reports Firefox's tabs; it cannot report Chromium's") {
		t.Fatalf("a Chromium report on a Firefox host's connection: got %v, want a refusal naming both", err)
	}
	if err := h.report("", BrowserFirefox, prURL, prTitle, false); err == nil {
		t.Fatal("a report from no connection: got success, want a refusal")
	}
}

// A flood of reports from one host is taken a burst at first, then one
// every tabReportEvery, the newest winning: the raw log grows by a few
// lines a second whatever the flood, and the window's own evidence is
// never held back.
func TestTabReportsAreRateBounded(t *testing.T) {
	h, _, _ := newDriftHarness(t, driftOpts{})
	h.RecordWindow(ffWin("7", prTitle))
	id := h.start(t, LevelObserve, "url:github.com/antidrift/*")
	before := len(h.store.events[id])
	pages := []string{"https://github.com/antidrift/antidrift/pull/3/files", prURL}
	const n = 1000
	for i := range n {
		must(t, h.report(":1.a", BrowserFirefox, pages[i%2], prTitle, false))
	}
	if got := len(h.store.events[id]) - before; got != tabReportBurst {
		t.Fatalf("raw log lines after %d reports at once: got %d, want the burst, %d", n, got, tabReportBurst)
	}
	// The window's own evidence is taken at once, mid-flood.
	h.RecordWindow(Window{ID: "9", Class: "Editor", Title: "main.go", Available: true})
	if v := h.View(); v.CurrentClass != "Editor" {
		t.Fatalf("the editor in front mid-flood: got %q, want Editor", v.CurrentClass)
	}
	h.RecordWindow(ffWin("7", prTitle))
	lines := len(h.store.events[id])
	for i := range n {
		must(t, h.report(":1.a", BrowserFirefox, pages[i%2], prTitle, false))
	}
	must(t, h.report(":1.a", BrowserFirefox, pages[0], prTitle, false)) // the newest, queued
	if got := len(h.store.events[id]) - lines; got != 0 {
		t.Fatalf("raw log lines from a flood with no tokens left: got %d, want 0", got)
	}
	h.clock.Advance(tabReportEvery)
	if v := h.View(); v.CurrentSite != "github.com/antidrift/antidrift/pull/3/files" {
		t.Fatalf("after %v the queued report: got site %q, want the newest, github.com/antidrift/antidrift/pull/3/files", tabReportEvery, v.CurrentSite)
	}
	if got := len(h.store.events[id]) - lines; got != 1 {
		t.Fatalf("raw log lines %v after a flood of %d: got %d, want 1", tabReportEvery, n, got)
	}
	// Another host has a bound of its own.
	h.RecordWindow(ffWin("8", ytTitle))
	must(t, h.report(":1.b", BrowserFirefox, ytURL, ytTitle, false))
	if v := h.View(); v.CurrentSite != "www.youtube.com/watch" {
		t.Fatalf("another host's report: got site %q, want www.youtube.com/watch at once", v.CurrentSite)
	}
}

// A private browser window leaves nothing of its title or its pages:
// neither the raw log, nor CurrentTitle, nor the buckets, nor the sealed
// summary. It is private when its title says so (Firefox's "Private
// Browsing", Chromium's "(Incognito)") or when its extension says so; a
// window waiting for its extension's word is recorded without its title
// meanwhile, so a private window reported after its title changed leaks
// nothing either.
func TestAPrivateBrowserWindowLeavesNoTitle(t *testing.T) {
	const secret = "City clinic: HIV test results"
	for _, c := range []struct {
		name string
		run  func(h *harness)
		want string // the class accounted
	}{
		{"Firefox's title says so", func(h *harness) {
			must(t, h.tab(BrowserFirefox, prURL, prTitle, false))
			h.RecordWindow(Window{ID: "7", Class: "firefox-esr", Title: secret + " — Mozilla Firefox Private Browsing", Available: true})
		}, "firefox-esr"},
		{"Firefox without an extension", func(h *harness) {
			h.RecordWindow(Window{ID: "7", Class: "firefox", Title: secret + " - Mozilla Firefox Private Browsing", Available: true})
		}, "firefox"},
		{"Chromium's title says so", func(h *harness) {
			h.RecordWindow(Window{ID: "7", Class: "chromium", Title: secret + " - Chromium (Incognito)", Available: true})
		}, "chromium"},
		{"the extension says so, after the title", func(h *harness) {
			must(t, h.tab(BrowserChromium, prURL, prTitle, false))
			h.RecordWindow(Window{ID: "7", Class: "chromium", Title: secret + " - Chromium", Available: true})
			must(t, h.tab(BrowserChromium, "", "", true))
		}, "chromium"},
		{"the extension says so, before the title", func(h *harness) {
			must(t, h.tab(BrowserChromium, "", "", true))
			h.RecordWindow(Window{ID: "7", Class: "chromium", Title: secret + " - Chromium", Available: true})
			h.clock.Advance(time.Minute)
		}, "chromium"},
		{"the extension disowns it (not allowed in private windows)", func(h *harness) {
			must(t, h.tab(BrowserChromium, prURL, prTitle, false))
			h.RecordWindow(Window{ID: "7", Class: "chromium", Title: secret + " - Chromium", Available: true})
			must(t, h.tab(BrowserChromium, "", "", false))
			h.clock.Advance(tabSettle)
		}, "chromium"},
		{"the extension opted in to report it", func(h *harness) {
			must(t, h.tab(BrowserChromium, "https://clinic.example/results", secret, true))
			h.RecordWindow(Window{ID: "7", Class: "chromium", Title: secret + " - Chromium", Available: true})
		}, "chromium"},
	} {
		t.Run(c.name, func(t *testing.T) {
			h, _, _ := newDriftHarness(t, driftOpts{})
			h.RecordWindow(Window{ID: "1", Class: "Editor", Title: "main.go", Available: true})
			id := h.start(t, LevelObserve, "Editor")
			c.run(h)
			v := h.View()
			if v.CurrentClass != c.want || v.CurrentTitle != "" || v.CurrentSite != "" || !strings.Contains(v.SiteReason, "private") {
				t.Fatalf("the private window: got class %q, title %q, site %q (%s); want %q, no title, no site, a reason saying it is private",
					v.CurrentClass, v.CurrentTitle, v.CurrentSite, v.SiteReason, c.want)
			}
			h.clock.Advance(time.Minute)
			if got := fmtAll(h.View()); strings.Contains(got, "clinic") {
				t.Fatalf("the view: got %s, want nothing of the private window's title or page", got)
			}
			must(t, h.Complete())
			_, err := h.End()
			must(t, err)
			for _, e := range h.store.events[id] {
				if strings.Contains(fmtAll(e), "clinic") {
					t.Fatalf("raw log: got %+v, want nothing of the private window's title or page", e)
				}
			}
			if got := fmtAll(h.store.audit); strings.Contains(got, "clinic") || !strings.Contains(got, c.want) {
				t.Fatalf("sealed summary: got %s, want the class %s and nothing of the private window's title or page", got, c.want)
			}
		})
	}
}

// A report applies today's rules to titles recorded under older ones: a
// private browser window's title, recorded before antidrift knew it, is
// shown as nothing.
func TestPrivateTitleDropsAPrivateBrowserWindowsTitle(t *testing.T) {
	for _, c := range []struct{ class, title, want string }{
		{"firefox-esr", "City clinic — Mozilla Firefox Private Browsing", ""},
		{"Chromium", "City clinic - Chromium (Incognito)", ""},
		{"firefox-esr", "City clinic — Mozilla Firefox", "City clinic — Mozilla Firefox"},
		{"Emacs", "notes (Incognito)", "notes (Incognito)"},
	} {
		if got := PrivateTitle(nil, nil, c.class, "", c.title); got != c.want {
			t.Errorf("PrivateTitle(%s, %q) = %q, want %q", c.class, c.title, got, c.want)
		}
	}
}

// Switching straight from a browser window that was given up on (its
// extension disowned it: an incognito window) to another window of the
// same browser waits for that window's report again: the work tab is not
// judged by the window alone, nor minimized, before its report comes.
func TestAnotherWindowOfTheBrowserWaitsForItsOwnReport(t *testing.T) {
	h, g, _ := newDriftHarness(t, driftOpts{distractions: []string{"url:*.youtube.com"}})
	chromium := func(id, title string) Window {
		return Window{ID: id, Class: "chromium", Title: title + " - Chromium", Available: true}
	}
	h.RecordWindow(chromium("1", prTitle))
	must(t, h.tab(BrowserChromium, prURL, prTitle, false))
	h.start(t, LevelBlock, "url:github.com/antidrift/*")
	h.RecordWindow(chromium("2", "Cats"))          // incognito
	must(t, h.tab(BrowserChromium, "", "", false)) // disowned
	h.clock.Advance(tabSettle)
	h.settle()
	h.RecordWindow(chromium("1", prTitle)) // straight back to the work window
	h.settle()
	if v := h.View(); !strings.Contains(v.SiteReason, "waiting for Chromium's tab report") {
		t.Fatalf("back on the work window before its report: SiteReason: got %q, want it waiting for Chromium's tab report", v.SiteReason)
	}
	must(t, h.tab(BrowserChromium, prURL, prTitle, false))
	h.settle()
	if v := h.View(); v.CurrentSite != prSite || v.Drift != DriftOnTask {
		t.Fatalf("the work window's report: got %q %s (%s), want %q %s", v.CurrentSite, v.Drift, v.DriftReason, prSite, DriftOnTask)
	}
	if m, _ := g.calls(); slices.Contains(m, "1") {
		t.Fatalf("minimized: got %v, want the work window (1) never (it waited for its report)", m)
	}
}

// A page in another browser (or profile) titled like the work tab in
// front: its host's report fits the window's title, but the window did not
// change, so it stays the work tab's, in front and when it comes back to
// the front; once the other browser's window is in front, the report is
// its.
func TestAReportFromAnotherBrowserDoesNotTakeOverTheWindowInFront(t *testing.T) {
	h, g, _ := newDriftHarness(t, driftOpts{distractions: []string{"url:*.youtube.com"}})
	h.RecordWindow(ffWin("7", prTitle))
	must(t, h.report(":1.a", BrowserFirefox, prURL, prTitle, false))
	h.start(t, LevelBlock, "url:github.com/antidrift/*")
	must(t, h.report(":1.b", BrowserFirefox, ytURL, prTitle, false)) // a page in the other profile, titled like the work
	h.settle()
	if v := h.View(); v.CurrentSite != prSite || v.Drift != DriftOnTask {
		t.Fatalf("the work window after the other profile's report: got %q %s (%s), want %q %s", v.CurrentSite, v.Drift, v.DriftReason, prSite, DriftOnTask)
	}
	// The editor in front, the other profile's page reported again, and
	// back to the work window, unchanged: still the work tab's.
	h.RecordWindow(Window{ID: "9", Class: "Editor", Title: "main.go", Available: true})
	must(t, h.report(":1.b", BrowserFirefox, "https://www.youtube.com/watch?v=2", prTitle, false))
	h.RecordWindow(ffWin("7", prTitle))
	if v := h.View(); v.CurrentSite != prSite || v.Drift != DriftOnTask {
		t.Fatalf("back on the work window: got %q %s (%s), want %q %s", v.CurrentSite, v.Drift, v.DriftReason, prSite, DriftOnTask)
	}
	h.RecordWindow(ffWin("8", prTitle)) // the other profile's window in front
	if v := h.View(); v.CurrentSite != "www.youtube.com/watch" {
		t.Fatalf("the other profile's window: got site %q, want www.youtube.com/watch", v.CurrentSite)
	}
	h.settle()
	if m, _ := g.calls(); slices.Contains(m, "7") {
		t.Fatalf("minimized: got %v, want the work window (7) never", m)
	}
}
