package service

import (
	"encoding/json"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"
)

// ffHost is Firefox's one native host in these tests.
var ffHost = TabSource{Conn: hostConn(BrowserFirefox), Browser: BrowserFirefox}

// marks counts the raw log's events of session id with mark m.
func (h *harness) marks(id, m string) int {
	n := 0
	for _, e := range h.store.events[id] {
		if e.Mark == m {
			n++
		}
	}
	return n
}

// driftToYouTube starts a block session on the pull request and switches
// the tab to YouTube: the drift is confirmed at once (no grace) and a tab
// block ordered.
func driftToYouTube(t *testing.T) (*harness, *fakeGuard, *tabGuard, string) {
	t.Helper()
	h, g, _ := newDriftHarness(t, driftOpts{distractions: []string{"url:*.youtube.com"}})
	tg := &tabGuard{}
	h.AddListener(tg)
	h.RecordWindow(ffWin("7", prTitle))
	must(t, h.tab(BrowserFirefox, prURL, prTitle, false))
	id := h.start(t, LevelBlock, "firefox-esr")
	must(t, h.tab(BrowserFirefox, ytURL, ytTitle, false))
	h.RecordWindow(ffWin("7", ytTitle))
	h.settle()
	if o := tg.got(); len(o) != 1 || o[0].TabID != reportOf(ytURL, ytTitle, false).TabID {
		t.Fatalf("tab orders: got %+v, want one naming the YouTube tab's id %d", o, reportOf(ytURL, ytTitle, false).TabID)
	}
	return h, g, tg, id
}

func TestAConfirmedTabBlockIsRecordedAsTabBlocked(t *testing.T) {
	h, g, _, id := driftToYouTube(t)
	if n := h.marks(id, MarkTabBlocked); n != 0 {
		t.Fatalf("tab_blocked before the extension confirmed: got %d, want 0", n)
	}
	// A confirmation for another tab, or from another browser, is not this one's.
	ytID := reportOf(ytURL, ytTitle, false).TabID
	must(t, h.TabBlocked(ffHost, ytID+1))
	must(t, h.TabBlocked(TabSource{Conn: hostConn(BrowserChromium), Browser: BrowserChromium}, ytID))
	// Nor is one from another host of the same browser family (a second
	// Firefox profile, whose tab ids are its own): the order went to one host.
	must(t, h.TabBlocked(TabSource{Conn: ":1.another-firefox", Browser: BrowserFirefox}, ytID))
	if n := h.marks(id, MarkTabBlocked); n != 0 {
		t.Fatalf("after confirmations of other tabs: tab_blocked %d, want 0", n)
	}
	must(t, h.TabBlocked(ffHost, ytID))
	h.clock.Advance(time.Minute) // well past tabBlockWait
	h.settle()
	if m, _ := g.calls(); len(m) != 0 {
		t.Fatalf("after the confirmation: got minimized %v, want none", m)
	}
	v := h.View()
	if !v.Enforced || v.MinimizeCount != 0 || h.marks(id, MarkTabBlocked) != 1 || h.marks(id, MarkMinimized) != 0 {
		t.Fatalf("Enforced, MinimizeCount, tab_blocked, minimized: got %v %d %d %d, want true 0 1 0", v.Enforced, v.MinimizeCount, h.marks(id, MarkTabBlocked), h.marks(id, MarkMinimized))
	}
}

func TestAnUnconfirmedTabBlockFallsBackToMinimizing(t *testing.T) {
	h, g, tg, id := driftToYouTube(t)
	h.clock.Advance(tabBlockWait - time.Millisecond)
	h.settle()
	if m, _ := g.calls(); len(m) != 0 {
		t.Fatalf("before the wait is over: got minimized %v, want none", m)
	}
	h.clock.Advance(time.Millisecond)
	h.settle()
	if m, _ := g.calls(); len(m) != 1 || m[0] != "7" {
		t.Fatalf("after %v without a confirmation: got minimized %v, want [7]", tabBlockWait, m)
	}
	v := h.View()
	if !v.Enforced || v.MinimizeCount != 1 || h.marks(id, MarkMinimized) != 1 || h.marks(id, MarkTabBlocked) != 0 {
		t.Fatalf("Enforced, MinimizeCount, minimized, tab_blocked: got %v %d %d %d, want true 1 1 0", v.Enforced, v.MinimizeCount, h.marks(id, MarkMinimized), h.marks(id, MarkTabBlocked))
	}
	// The extension's word comes late: the minimize stands, nothing more is recorded.
	must(t, h.TabBlocked(ffHost, reportOf(ytURL, ytTitle, false).TabID))
	h.settle()
	if v := h.View(); v.MinimizeCount != 1 || h.marks(id, MarkTabBlocked) != 0 {
		t.Fatalf("after a late confirmation: MinimizeCount, tab_blocked: got %d %d, want 1 0", v.MinimizeCount, h.marks(id, MarkTabBlocked))
	}
	// The page may have been replaced late: the session's end restores it.
	must(t, h.Complete())
	if o := tg.got(); len(o) != 2 || !o[1].Restore {
		t.Fatalf("after the session: orders %+v, want the block and a restore", o)
	}
}

// Back at work before the wait is over: nothing is minimized.
func TestAnUnconfirmedTabBlockMinimizesNothingOnceDriftEnded(t *testing.T) {
	h, g, _, id := driftToYouTube(t)
	must(t, h.tab(BrowserFirefox, prURL, prTitle, false))
	h.RecordWindow(ffWin("7", prTitle))
	h.clock.Advance(tabBlockWait)
	h.settle()
	if m, _ := g.calls(); len(m) != 0 || h.marks(id, MarkTabBlocked) != 0 {
		t.Fatalf("back on the pull request: got minimized %v, tab_blocked %d, want none", m, h.marks(id, MarkTabBlocked))
	}
}

// A report that named no tab (an older extension) cannot be blocked by
// id: the window is minimized as without the extension.
func TestATabWithoutAnIDIsMinimized(t *testing.T) {
	h, g, _ := newDriftHarness(t, driftOpts{distractions: []string{"url:*.youtube.com"}})
	tg := &tabGuard{}
	h.AddListener(tg)
	h.RecordWindow(ffWin("7", prTitle))
	must(t, h.tab(BrowserFirefox, prURL, prTitle, false))
	h.start(t, LevelBlock, "firefox-esr")
	r := reportOf(ytURL, ytTitle, false)
	r.TabID = NoTabID
	must(t, h.RecordTab(ffHost, r))
	h.RecordWindow(ffWin("7", ytTitle))
	h.settle()
	if m, _ := g.calls(); len(m) != 1 || len(tg.got()) != 0 {
		t.Fatalf("got minimized %v, tab orders %+v, want the window minimized and no order", m, tg.got())
	}
}

// siteVectors is testdata/site-vectors.json, shared with the extension's
// and the native host's tests.
type siteVector struct {
	Name, URL, Scheme, Host, Path, Site, Display string
	Rules                                        []struct {
		Rule    string
		Matches bool
	}
}

func loadSiteVectors(t *testing.T) []siteVector {
	t.Helper()
	raw, err := os.ReadFile(filepath.Join("..", "testdata", "site-vectors.json"))
	if err != nil {
		t.Fatal(err)
	}
	var doc struct {
		Version int
		Vectors []siteVector
	}
	if err := json.Unmarshal(raw, &doc); err != nil || doc.Version != 1 || len(doc.Vectors) == 0 {
		t.Fatalf("site vectors: version %d, %d vectors, %v; want version 1 and some", doc.Version, len(doc.Vectors), err)
	}
	return doc.Vectors
}

// The site is made in one place (SiteFromParts) from what the extension
// sends; a url: rule matches it uncut; it is cut only as shown and stored.
func TestSiteVectors(t *testing.T) {
	for _, v := range loadSiteVectors(t) {
		t.Run(v.Name, func(t *testing.T) {
			site, ok := SiteFromParts(v.Scheme, v.Host, v.Path)
			if !ok || site != v.Site {
				t.Fatalf("SiteFromParts(%q, %q, %q) = %q, %v; want %q", v.Scheme, v.Host, v.Path, site, ok, v.Site)
			}
			if got := DisplaySite(site); got != v.Display {
				t.Errorf("DisplaySite: got %q, want %q", got, v.Display)
			}
			for _, r := range v.Rules {
				rule, err := ParseRule(r.Rule)
				if err != nil {
					t.Errorf("%s: %v", r.Rule, err)
					continue
				}
				w := Window{Class: "chromium", Title: "t", Site: site, Available: true}
				if got := matches(rule, w, FoldTitle(w.Title)); got != r.Matches {
					t.Errorf("%s on %q: matches %v, want %v", r.Rule, site, got, r.Matches)
				}
			}
		})
	}
}

// A page whose address is longer than a site is shown is still a page: a
// url: rule matches it, it is blocked by its tab's id, and only what is
// shown and stored is cut.
func TestALongAddressIsMatchedWholeAndCutOnlyWhereShown(t *testing.T) {
	long := "https://ja.wikipedia.org/wiki/" + strings.Repeat("%E6%97%A5", 80) + "?oldid=SECRET"
	title := "日本 - Wikipedia"
	h, g, _ := newDriftHarness(t, driftOpts{distractions: []string{"url:ja.wikipedia.org/wiki/" + strings.Repeat("日", 80)}})
	tg := &tabGuard{}
	h.AddListener(tg)
	h.RecordWindow(ffWin("7", prTitle))
	must(t, h.tab(BrowserFirefox, prURL, prTitle, false))
	id := h.start(t, LevelBlock, "firefox-esr")
	must(t, h.tab(BrowserFirefox, long, title, false))
	h.RecordWindow(ffWin("7", title))
	h.settle()
	v := h.View()
	if v.Drift != DriftDrifting || len([]rune(v.CurrentSite)) != MaxSiteLen || !strings.HasSuffix(v.CurrentSite, "…") {
		t.Fatalf("Drift, CurrentSite: got %s (%q) %q, want %s and the site cut to %d characters", v.Drift, v.DriftReason, v.CurrentSite, DriftDrifting, MaxSiteLen)
	}
	tabID := reportOf(long, title, false).TabID
	if o := tg.got(); len(o) != 1 || o[0].TabID != tabID || o[0].Site != v.CurrentSite {
		t.Fatalf("tab orders: got %+v, want one for tab %d showing %q", o, tabID, v.CurrentSite)
	}
	must(t, h.TabBlocked(ffHost, tabID))
	h.clock.Advance(tabBlockWait)
	h.settle()
	if m, _ := g.calls(); len(m) != 0 || h.marks(id, MarkTabBlocked) != 1 {
		t.Fatalf("got minimized %v, tab_blocked %d, want none and 1", m, h.marks(id, MarkTabBlocked))
	}
	for _, e := range h.store.events[id] {
		if len([]rune(e.Site)) > MaxSiteLen {
			t.Fatalf("the raw log keeps a site of %d characters, want at most %d", len([]rune(e.Site)), MaxSiteLen)
		}
	}
}

// url: rules that no site could match are refused, saying why.
func TestURLRulesThatCannotMatchAreRefused(t *testing.T) {
	for _, c := range []struct{ rule, want string }{
		{"url:bücher.de", "xn--"},
		{"url:*.bücher.de/*", "xn--"},
		{"url:example.com:8080", "port"},
		{"url:example.com:8080/x", "port"},
		{"url:[::1]:8080/x", "port"},
		{"url:[::1/x", "closing ]"},
	} {
		if _, err := ParseRule(c.rule); err == nil || !strings.Contains(err.Error(), c.want) {
			t.Errorf("ParseRule(%q) = %v, want an error saying %q", c.rule, err, c.want)
		}
	}
}

// FuzzSiteFromParts: whatever parts arrive, a site holds no query, no
// fragment and no user; is never cut; and a report of them never panics.
func FuzzSiteFromParts(f *testing.F) {
	for _, c := range [][3]string{
		{"https", "github.com", "/a/b"}, {"http", "[::1]", "/x"}, {"HTTPS", "Example.COM.", "/"},
		{"https", "example.com", "/100%/done"}, {"file", "", ""}, {"https", "a@b", "/"}, {"https", "h", "/p?q#f"},
		{"javascript", "", ""}, {"", "", ""}, {"1http", "h", "/"}, {"https", "h:80", "/"},
	} {
		f.Add(c[0], c[1], c[2])
	}
	f.Fuzz(func(t *testing.T, scheme, host, path string) {
		site, ok := SiteFromParts(scheme, host, path)
		if !ok {
			return
		}
		if strings.ContainsAny(site, "?#@") {
			t.Fatalf("SiteFromParts(%q, %q, %q) = %q: a query, a fragment or a user", scheme, host, path, site)
		}
		if sc := strings.ToLower(scheme); (sc == "http" || sc == "https") && !strings.HasPrefix(site, strings.TrimSuffix(strings.ToLower(host), ".")) {
			t.Fatalf("SiteFromParts(%q, %q, %q) = %q: not its host and path, whole", scheme, host, path, site)
		}
		_, _ = cleanTab(BrowserFirefox, TabReport{TabID: 1, Scheme: scheme, Host: host, Path: path})
	})
}
