package service

import (
	"hash/fnv"
	"net/url"
	"reflect"
	"slices"
	"strings"
	"sync"
	"testing"
	"time"
)

// ffWin is a Firefox window showing a page titled title, as sway reports it.
func ffWin(id, title string) Window {
	return Window{ID: id, Class: "firefox-esr", Title: title + " — Mozilla Firefox", Available: true}
}

const (
	prURL   = "https://github.com/antidrift/antidrift/pull/3?token=SECRET#diff-SECRET"
	prSite  = "github.com/antidrift/antidrift/pull/3"
	prTitle = "Tabs, not windows #3"
	ytURL   = "https://www.youtube.com/watch?v=SECRET"
	ytTitle = "Cats - YouTube"
)

// tab reports a tab as browser's one native host, as its extension would:
// rawURL split as the
// browser's parser splits it (Go's parser stands in for it here, on these
// tests' plain addresses; testdata/site-vectors.json holds the hard ones),
// the tab's id made of the address.
func (h *harness) tab(browser, rawURL, title string, private bool) error {
	return h.RecordTab(TabSource{Conn: hostConn(browser), Browser: browser}, reportOf(rawURL, title, private))
}

func reportOf(rawURL, title string, private bool) TabReport {
	r := TabReport{TabID: NoTabID, Title: title, Private: private}
	if rawURL == "" {
		return r
	}
	u, err := url.Parse(rawURL)
	if err != nil {
		panic(err)
	}
	f := fnv.New32a()
	f.Write([]byte(rawURL))
	r.TabID, r.Scheme = int64(f.Sum32()&0xffff), u.Scheme
	if u.Scheme == "http" || u.Scheme == "https" {
		r.Host, r.Path = u.Hostname(), u.EscapedPath()
	}
	return r
}

func TestTabFitsOnlyItsBrowsersWindowWithItsTitle(t *testing.T) {
	tab := Tab{Browser: BrowserFirefox, Site: prSite, Title: prTitle}
	chromeTab := Tab{Browser: BrowserChromium, Site: prSite, Title: prTitle}
	for _, c := range []struct {
		name string
		tab  Tab
		w    Window
		want bool
	}{
		{"firefox suffix", tab, ffWin("1", prTitle), true},
		{"private browsing suffix", tab, Window{Class: "firefox", Title: prTitle + " — Mozilla Firefox Private Browsing", Available: true}, true},
		{"exact title", tab, Window{Class: "Firefox", Instance: "Navigator", Title: prTitle, Available: true}, true},
		{"chromium suffix", chromeTab, Window{Class: "chromium", Title: prTitle + " - Chromium", Available: true}, true},
		{"another title", tab, ffWin("1", "Cats"), false},
		{"a prefix of the title is not the title", Tab{Browser: BrowserFirefox, Site: "a.example", Title: "Tabs"}, ffWin("1", prTitle), false},
		{"another browser's window", chromeTab, ffWin("1", prTitle), false},
		{"not a browser", tab, Window{Class: "xterm", Title: prTitle, Available: true}, false},
		{"no site", Tab{Browser: BrowserFirefox, Title: prTitle}, ffWin("1", prTitle), false},
		{"private without opt-in", Tab{Browser: BrowserFirefox, Private: true}, ffWin("1", ""), false},
	} {
		if got := TabFits(c.tab, c.w, c.w.Title); got != c.want {
			t.Errorf("%s: TabFits = %v, want %v", c.name, got, c.want)
		}
	}
}

func TestATabReportGivesTheFocusedBrowserWindowItsSite(t *testing.T) {
	h, _, _ := newDriftHarness(t, driftOpts{})
	h.RecordWindow(ffWin("7", prTitle))
	if v := h.View(); v.CurrentSite != "" || !strings.Contains(v.SiteReason, "no antidrift extension") {
		t.Fatalf("before any report: CurrentSite, SiteReason: got %q %q, want %q and a reason naming no antidrift extension", v.CurrentSite, v.SiteReason, "")
	}
	must(t, h.tab(BrowserFirefox, prURL, prTitle, false))
	if v := h.View(); v.CurrentSite != prSite || v.SiteReason != "" {
		t.Fatalf("CurrentSite, SiteReason: got %q %q, want %q %q", v.CurrentSite, v.SiteReason, prSite, "")
	}
	if strings.Contains(fmtAll(h.View()), "SECRET") {
		t.Fatalf("view: got %s, want no query or fragment (SECRET) in it", fmtAll(h.View()))
	}
}

func TestAURLRuleTellsTabsOfOneWindowApart(t *testing.T) {
	h, g, _ := newDriftHarness(t, driftOpts{distractions: []string{"url:*.youtube.com"}})
	h.RecordWindow(ffWin("7", prTitle))
	must(t, h.tab(BrowserFirefox, prURL, prTitle, false))
	id := h.start(t, LevelBlock, "url:github.com/antidrift/*")
	if v := h.View(); v.Drift != DriftOnTask || v.DriftReason != "matches allowed url:github.com/antidrift/*" {
		t.Fatalf("on the pull request: got %s (%q), want %s (%q)", v.Drift, v.DriftReason, DriftOnTask, "matches allowed url:github.com/antidrift/*")
	}
	// The tab switch: the report first, then the window's title.
	must(t, h.tab(BrowserFirefox, ytURL, ytTitle, false))
	if v := h.View(); v.CurrentSite != prSite || v.Drift != DriftOnTask {
		t.Fatalf("a report before the title changed: CurrentSite, Drift: got %q %s, want %q %s (the window unmoved)", v.CurrentSite, v.Drift, prSite, DriftOnTask)
	}
	h.RecordWindow(ffWin("7", ytTitle))
	v := h.View()
	if v.CurrentSite != "www.youtube.com/watch" || v.Drift != DriftDrifting || v.DriftReason != "matches distraction url:*.youtube.com" {
		t.Fatalf("on youtube: CurrentSite, Drift: got %q %s (%q), want %q %s (%q)", v.CurrentSite, v.Drift, v.DriftReason, "www.youtube.com/watch", DriftDrifting, "matches distraction url:*.youtube.com")
	}
	h.settle()
	// Back to the pull request: title first, then the report.
	h.RecordWindow(ffWin("7", prTitle))
	if v := h.View(); v.CurrentSite != "" || v.SiteReason != "waiting for Firefox's tab report" {
		t.Fatalf("between title and report: CurrentSite, SiteReason: got %q (%q), want %q (%q)", v.CurrentSite, v.SiteReason, "", "waiting for Firefox's tab report")
	}
	must(t, h.tab(BrowserFirefox, prURL, prTitle, false))
	if v := h.View(); v.CurrentSite != prSite || v.Drift != DriftOnTask {
		t.Fatalf("back on the pull request: CurrentSite, Drift: got %q %s, want %q %s", v.CurrentSite, v.Drift, prSite, DriftOnTask)
	}
	if m, _ := g.calls(); len(m) != 1 || m[0] != "7" {
		t.Fatalf("minimized: got %v, want [7]", m)
	}
	h.clock.Advance(time.Minute)
	must(t, h.Complete())
	_, err := h.End()
	must(t, err)
	var sites []string
	for _, e := range h.store.events[id] {
		if strings.Contains(fmtAll(e), "SECRET") {
			t.Fatalf("raw log event: got %+v, want no query or fragment (SECRET) in it", e)
		}
		if e.Site != "" {
			sites = append(sites, e.Site)
		}
	}
	if !reflect.DeepEqual(sites, []string{prSite, "www.youtube.com/watch", prSite}) {
		t.Fatalf("raw log sites: got %q, want %q", sites, []string{prSite, "www.youtube.com/watch", prSite})
	}
	sum := h.store.sealed()[0]
	if len(sum.Sites) != 1 || sum.Sites[0].Host != "github.com" || sum.Sites[0].Seconds != 60 {
		t.Fatalf("sealed sites %+v, want github.com 60 s (hosts only)", sum.Sites)
	}
	if strings.Contains(fmtAll(sum), "/antidrift/") {
		t.Fatalf("summary: got %+v, want no path (/antidrift/) in it", sum.Sites)
	}
}

func TestAForgedTabReportForAWindowNotInFrontChangesNothing(t *testing.T) {
	h, g, n := newDriftHarness(t, driftOpts{distractions: []string{"url:*.youtube.com"}})
	h.RecordWindow(ffWin("7", prTitle))
	must(t, h.tab(BrowserFirefox, prURL, prTitle, false))
	h.start(t, LevelBlock, "url:github.com/*")
	before := h.View()
	// Another client claims the browser shows YouTube, in a tab whose
	// title is not the one in front.
	must(t, h.tab(BrowserFirefox, ytURL, ytTitle, false))
	h.clock.Advance(time.Minute)
	h.settle()
	v := h.View()
	if v.CurrentSite != prSite || v.Drift != before.Drift || v.DriftReason != before.DriftReason {
		t.Fatalf("after a forged report: got %q %s (%q), want %q %s (%q), the judgement unchanged", v.CurrentSite, v.Drift, v.DriftReason, prSite, before.Drift, before.DriftReason)
	}
	if m, _ := g.calls(); len(m) != 0 || len(n.onScreen()) != 0 {
		t.Fatalf("after a forged report: got minimized %v, notes %v, want none", m, n.onScreen())
	}
	// A Chromium report naming the Firefox window's title is not its.
	must(t, h.tab(BrowserChromium, ytURL, prTitle, false))
	if v := h.View(); v.CurrentSite != prSite {
		t.Fatalf("after another browser's report: CurrentSite: got %q, want %q", v.CurrentSite, prSite)
	}
}

func TestAPrivateTabIsDecidedByTheWindowAndRecordsNoSite(t *testing.T) {
	h, _, _ := newDriftHarness(t, driftOpts{})
	h.RecordWindow(ffWin("7", prTitle))
	must(t, h.tab(BrowserFirefox, prURL, prTitle, false))
	id := h.start(t, LevelWarn, "firefox-esr")
	h.RecordWindow(Window{ID: "8", Class: "firefox-esr", Title: "Mozilla Firefox Private Browsing", Available: true})
	must(t, h.tab(BrowserFirefox, "", "", true))
	v := h.View()
	if v.CurrentSite != "" || !strings.Contains(v.SiteReason, "private") || v.Drift != DriftOnTask {
		t.Fatalf("private window: CurrentSite, SiteReason, Drift: got %q %q %s, want %q, a reason naming private, %s", v.CurrentSite, v.SiteReason, v.Drift, "", DriftOnTask)
	}
	evs := h.store.events[id]
	if last := evs[len(evs)-1]; last.Site != "" {
		t.Fatalf("the private window's event: got %+v, want no site", last)
	}
}

func TestABrowserWindowThatFitsNoReportIsDecidedByItselfAfterTheSettle(t *testing.T) {
	h, g, _ := newDriftHarness(t, driftOpts{})
	h.RecordWindow(ffWin("7", prTitle))
	must(t, h.tab(BrowserFirefox, prURL, prTitle, false))
	h.start(t, LevelBlock, "url:github.com/*")
	h.RecordWindow(ffWin("7", "Some page the extension never reports"))
	if v := h.View(); v.Drift != DriftOnTask {
		t.Fatalf("before the report could arrive: Drift: got %s (%q), want %s, not yet judged", v.Drift, v.DriftReason, DriftOnTask)
	}
	h.clock.Advance(tabSettle)
	h.settle()
	v := h.View()
	if v.Drift != DriftDrifting || !strings.Contains(v.SiteReason, "fits no tab") {
		t.Fatalf("after the settle: Drift: got %s (%q), site reason %q, want %s and a site reason saying it fits no tab", v.Drift, v.DriftReason, v.SiteReason, DriftDrifting)
	}
	if m, _ := g.calls(); len(m) != 1 {
		t.Fatalf("minimized %v, want the window once (no extension page to show)", m)
	}
}

func TestGraceEndingWhileTheBrowserIsBetweenPagesWaitsForTheReport(t *testing.T) {
	h, g, _ := newDriftHarness(t, driftOpts{grace: 5 * time.Second, distractions: []string{"url:*.youtube.com"}})
	h.RecordWindow(ffWin("7", ytTitle))
	must(t, h.tab(BrowserFirefox, ytURL, ytTitle, false))
	h.start(t, LevelBlock, "firefox-esr")
	h.clock.Advance(4 * time.Second)
	h.RecordWindow(ffWin("7", prTitle)) // title first: the report is on its way
	h.clock.Advance(time.Second + time.Millisecond)
	h.settle()
	if m, _ := g.calls(); len(m) != 0 {
		t.Fatalf("while the browser was between pages: got minimized %v, want none", m)
	}
	must(t, h.tab(BrowserFirefox, prURL, prTitle, false))
	h.settle()
	if v := h.View(); v.Drift != DriftOnTask {
		t.Fatalf("on the pull request: Drift: got %s (%q), want %s", v.Drift, v.DriftReason, DriftOnTask)
	}
	if m, _ := g.calls(); len(m) != 0 {
		t.Fatalf("after the work tab came back: got minimized %v, want none", m)
	}
}

func TestForgetTabsDecidesTheWindowAloneAgain(t *testing.T) {
	h, _, _ := newDriftHarness(t, driftOpts{})
	h.RecordWindow(ffWin("7", prTitle))
	must(t, h.tab(BrowserFirefox, prURL, prTitle, false))
	must(t, h.forget(BrowserFirefox))
	if v := h.View(); v.CurrentSite != "" || !strings.Contains(v.SiteReason, "no antidrift extension") {
		t.Fatalf("after the extension left: CurrentSite, SiteReason: got %q (%q), want %q and a reason naming no antidrift extension", v.CurrentSite, v.SiteReason, "")
	}
}

func TestTabReportsAreRefusedWhenMalformed(t *testing.T) {
	h, _, _ := newDriftHarness(t, driftOpts{})
	h.RecordWindow(ffWin("7", prTitle))
	pr := reportOf(prURL, prTitle, false)
	with := func(f func(r *TabReport)) TabReport { r := pr; f(&r); return r }
	for _, c := range []struct {
		browser string
		r       TabReport
		want    string
	}{
		{"opera", pr, "browser must be"},
		{BrowserFirefox, with(func(r *TabReport) { r.Scheme = "not a scheme" }), "not an address"},
		{BrowserFirefox, with(func(r *TabReport) { r.Host = "" }), "not an address"},
		{BrowserFirefox, with(func(r *TabReport) { r.Path = "/a?token=SECRET" }), "not an address"},
		{BrowserFirefox, with(func(r *TabReport) { r.Path = "/a#frag" }), "not an address"},
		{BrowserFirefox, with(func(r *TabReport) { r.Host = "me:pw@github.com" }), "not an address"},
		{BrowserFirefox, with(func(r *TabReport) { r.Host = "github.com:8443" }), "not an address"},
		{BrowserFirefox, with(func(r *TabReport) { r.Path = "no-slash" }), "not an address"},
		{BrowserFirefox, with(func(r *TabReport) { r.Host = "bücher.de" }), "not an address"},
		{BrowserFirefox, with(func(r *TabReport) { r.Path = "/" + strings.Repeat("a", MaxURLLen) }), "at most"},
		{BrowserFirefox, with(func(r *TabReport) { r.Title = strings.Repeat("t", 5000) }), "at most"},
		{BrowserFirefox, with(func(r *TabReport) { r.Path = "/\x1b[2J" }), "control characters"},
		{BrowserFirefox, with(func(r *TabReport) { r.Title = "\xff" }), "UTF-8"},
		{BrowserFirefox, with(func(r *TabReport) { r.TabID = -2 }), "tab_id"},
	} {
		err := h.RecordTab(TabSource{Conn: hostConn(c.browser), Browser: c.browser}, c.r)
		if err == nil || !strings.Contains(err.Error(), c.want) {
			t.Errorf("RecordTab(%q, %+.40v) = %v, want an error saying %q", c.browser, c.r, err, c.want)
		}
	}
	if v := h.View(); v.CurrentSite != "" {
		t.Errorf("after refused reports: CurrentSite %q, want none", v.CurrentSite)
	}
}

func TestTheJudgeIsToldTheHostOnlyUnlessPathsAreOptedIn(t *testing.T) {
	for _, paths := range []bool{false, true} {
		j := &recordingJudge{}
		h := &harness{clock: newFakeClock(), store: newFakeStore()}
		h.Service = New(Options{Store: h.store, Clock: h.clock, Logger: quiet, Judge: j, JudgeSitePaths: paths})
		must(t, h.Recover(Snapshot{}))
		h.RecordWindow(ffWin("7", prTitle))
		must(t, h.tab(BrowserFirefox, prURL, prTitle, false))
		h.start(t, LevelWarn, "emacs")
		want := "github.com"
		if paths {
			want = prSite
		}
		if len(j.asked) != 1 || j.asked[0].Site != want {
			t.Fatalf("paths %v: judge asked %+v, want site %q", paths, j.asked, want)
		}
		h.Shutdown()
	}
}

type recordingJudge struct{ asked []Question }

func (j *recordingJudge) Judge(q Question, _ func(Verdict)) (Verdict, bool) {
	j.asked = append(j.asked, q)
	return Verdict{Task: TaskOn, Reason: "fine"}, true
}

func TestURLRulesMatchHostAndPath(t *testing.T) {
	for _, c := range []struct {
		rule string
		site string
		want bool
	}{
		{"url:*.youtube.com", "www.youtube.com/watch", true},
		{"url:*.youtube.com", "youtube.com", true},
		{"url:*.youtube.com", "notyoutube.com/x", false},
		{"URL:*.YouTube.com", "m.youtube.com/shorts/1", true},
		{"url:github.com/antidrift/*", "github.com/antidrift/antidrift/pull/3", true},
		{"url:github.com/antidrift/*", "github.com/golang/go/issues/1", false},
		{"url:github.com/antidrift/*", "gist.github.com/antidrift/x", false},
		{"url:github.com", "github.com/anything/at/all", true},
		{"url:*/docs/*", "pkg.go.dev/docs/x", true},
	} {
		r, err := ParseRule(c.rule)
		if err != nil {
			t.Fatalf("ParseRule(%q): %v", c.rule, err)
		}
		w := Window{Class: "firefox", Title: "t", Site: c.site, Available: true}
		if got := matches(r, w, "t"); got != c.want {
			t.Errorf("%s on %s: got %v, want %v", c.rule, c.site, got, c.want)
		}
		if matches(r, Window{Class: "firefox", Title: c.site, Available: true}, c.site) {
			t.Errorf("%s on a window without a site titled %q: got a match, want none", c.rule, c.site)
		}
	}
	for _, c := range []struct{ rule, want string }{
		{"url:", "empty"},
		{"url:https://github.com/x", "without it"},
		{"url:youtube.com/watch?v=*", "never keeps a page's query"},
		{"url:example.com/#top", "never keeps"},
		{"url:/path", "no host"},
		{"url:[a.com", "never closed"},
	} {
		_, err := ParseRule(c.rule)
		if err == nil || !strings.Contains(err.Error(), c.want) {
			t.Errorf("ParseRule(%q) = %v, want %q", c.rule, err, c.want)
		}
	}
	h := newHarness(t)
	if _, err := h.Start("a", "b", 60, "", []string{"url:https://x.com"}); err == nil || !strings.Contains(err.Error(), `allowed_classes entry 1 "url:https://x.com" is not a valid entry`) {
		t.Fatalf("Start with a bad url: rule: got %v, want a refusal naming %s", err, `allowed_classes entry 1 "url:https://x.com" is not a valid entry`)
	}
}

func TestAReportThatNeverFitsSettlesAfterTheWindow(t *testing.T) {
	h, _, _ := newDriftHarness(t, driftOpts{})
	h.RecordWindow(ffWin("7", prTitle+" x"))
	must(t, h.tab(BrowserFirefox, prURL, prTitle, false))
	if v := h.View(); v.SiteReason != "waiting for Firefox's tab report" {
		t.Fatalf("SiteReason: got %q, want %q", v.SiteReason, "waiting for Firefox's tab report")
	}
	h.clock.Advance(tabSettle)
	if v := h.View(); !strings.Contains(v.SiteReason, "fits no tab") {
		t.Fatalf("after the settle: SiteReason: got %q, want it to say it fits no tab", v.SiteReason)
	}
}

// tabGuard is a listener that takes the core's word to the extensions.
type tabGuard struct {
	mu     sync.Mutex
	orders []TabOrder
}

func (g *tabGuard) Changed()                             {}
func (g *tabGuard) SessionEnded(string, Outcome, string) {}
func (g *tabGuard) Nudged(string, string)                {}
func (g *tabGuard) TabOrder(o TabOrder)                  { g.mu.Lock(); g.orders = append(g.orders, o); g.mu.Unlock() }
func (g *tabGuard) got() []TabOrder                      { g.mu.Lock(); defer g.mu.Unlock(); return slices.Clone(g.orders) }

func TestBlockReplacesTheDriftingTabNotTheWindow(t *testing.T) {
	for _, level := range []Level{LevelBlock, LevelLocked} {
		t.Run(string(level), func(t *testing.T) {
			h, g, _ := newDriftHarness(t, driftOpts{distractions: []string{"url:*.youtube.com"}})
			tg := &tabGuard{}
			h.AddListener(tg)
			h.RecordWindow(ffWin("7", prTitle))
			must(t, h.tab(BrowserFirefox, prURL, prTitle, false))
			id := h.start(t, level, "firefox-esr")
			must(t, h.tab(BrowserFirefox, ytURL, ytTitle, false))
			h.RecordWindow(ffWin("7", ytTitle))
			h.settle()
			ytID := reportOf(ytURL, ytTitle, false).TabID
			want := TabOrder{Conn: hostConn(BrowserFirefox), Browser: BrowserFirefox, TabID: ytID, Site: "www.youtube.com/watch", NextAction: "write the intro", Done: "intro is committed", DeadlineUnix: h.View().Deadline}
			if o := tg.got(); len(o) != 1 || o[0] != want {
				t.Fatalf("tab orders %+v, want %+v", o, want)
			}
			if n := h.marks(id, MarkTabBlocked); n != 0 {
				t.Fatalf("tab_blocked before the extension confirmed: got %d, want 0", n)
			}
			must(t, h.TabBlocked(ffHost, ytID))
			h.clock.Advance(tabBlockWait)
			h.settle()
			if m, _ := g.calls(); len(m) != 0 {
				t.Fatalf("the window: got minimized %v, want none (the tab is replaced)", m)
			}
			if v := h.View(); !v.Enforced || v.MinimizeCount != 0 {
				t.Fatalf("Enforced, MinimizeCount: got %v %d, want true 0", v.Enforced, v.MinimizeCount)
			}
			// The extension's page stands in the tab's place: not drift, no new order.
			must(t, h.tab(BrowserFirefox, "antidrift:blocked", "antidrift: back to work", false))
			h.RecordWindow(ffWin("7", "antidrift: back to work"))
			h.settle()
			if v := h.View(); v.Drift == DriftDrifting || len(tg.got()) != 1 {
				t.Fatalf("on the extension's page: Drift: got %s (%q), orders %+v, want not %s and still one order", v.Drift, v.DriftReason, tg.got(), DriftDrifting)
			}
			h.clock.Advance(time.Minute)
			if level == LevelLocked {
				h.clock.Advance(25 * time.Minute) // locked ends at the deadline
			} else {
				must(t, h.Complete())
			}
			if o := tg.got(); len(o) != 2 || !o[1].Restore {
				t.Fatalf("after the session: orders %+v, want a restore", o)
			}
			marks := 0
			for _, e := range h.store.events[id] {
				if e.Mark == MarkTabBlocked && e.Site == "www.youtube.com/watch" {
					marks++
				}
			}
			if marks != 1 {
				t.Fatalf("tab_blocked marks in the raw log: got %d, want 1", marks)
			}
		})
	}
}

func TestWithoutTheExtensionBlockIconifiesTheBrowserAsBefore(t *testing.T) {
	h, g, _ := newDriftHarness(t, driftOpts{distractions: []string{"*:*YouTube*"}})
	tg := &tabGuard{}
	h.AddListener(tg)
	h.RecordWindow(ffWin("7", prTitle))
	h.start(t, LevelBlock, "firefox-esr")
	h.RecordWindow(ffWin("7", ytTitle))
	h.settle()
	if m, _ := g.calls(); len(m) != 1 || len(tg.got()) != 0 {
		t.Fatalf("got minimized %v, tab orders %+v, want one window minimized and no tab orders", m, tg.got())
	}
}

// Chromium titles a private window as it titles a normal one: a private
// window showing a page of the same title as a normal tab is not that tab.
// The browser's word that none of its windows it reports is in front ends
// the tab that fitted last.
func TestAPrivateWindowWithANormalTabsTitleGetsNoSite(t *testing.T) {
	h, _, _ := newDriftHarness(t, driftOpts{})
	chromium := func(id, title string) Window {
		return Window{ID: id, Class: "chromium", Title: title + " - Chromium", Available: true}
	}
	h.RecordWindow(chromium("1", "Cats"))
	must(t, h.tab(BrowserChromium, ytURL, "Cats", false))
	if h.View().CurrentSite == "" {
		t.Fatal("the normal window: CurrentSite: got none, want its site")
	}
	h.RecordWindow(chromium("2", "Cats"))          // the incognito window, in front
	must(t, h.tab(BrowserChromium, "", "", false)) // the extension sees none of its windows in front
	h.clock.Advance(tabSettle)
	if v := h.View(); v.CurrentSite != "" || v.CurrentTitle != "" || !strings.Contains(v.SiteReason, "sees none of its windows") {
		t.Fatalf("the private window: CurrentSite, CurrentTitle, SiteReason: got %q %q (%q), want none, none and a reason saying it sees none of its windows", v.CurrentSite, v.CurrentTitle, v.SiteReason)
	}
}

// A restarted daemon replays the raw log: the sealed sites are the same as
// if it had never stopped.
func TestSitesSurviveARestart(t *testing.T) {
	h := newHarness(t)
	h.RecordWindow(ffWin("7", prTitle))
	must(t, h.tab(BrowserFirefox, prURL, prTitle, false))
	h.start(t, LevelWarn, "firefox-esr")
	h.clock.Advance(90 * time.Second)
	h = h.restart(t)
	h.clock.Advance(30 * time.Second)
	must(t, h.Complete())
	_, err := h.End()
	must(t, err)
	sum := h.store.sealed()[0]
	// The replayed last window holds focus until the next event, as it does
	// for the buckets: all 120 s are the pull request's.
	if len(sum.Sites) != 1 || sum.Sites[0] != (SiteTime{Host: "github.com", Seconds: 120}) {
		t.Fatalf("sealed sites %+v, want github.com for 120 s", sum.Sites)
	}
}

// hostConn is the bus connection a test's one host of browser reports on.
func hostConn(browser string) string { return ":1.host-" + browser }

// forget ends the claims of browser's one native host.
func (h *harness) forget(browser string) error { return h.ForgetTabs(hostConn(browser)) }
