package service

import (
	"cmp"
	"slices"
	"time"
)

// tabSettle is how long a browser window whose title fits none of its
// extension's tab reports waits for one that does before it is decided by
// the window alone. The browser retitles its window and its extension
// reports the new tab within milliseconds of each other, in either order;
// a title that still fits nothing after this is a page the extension does
// not report, or a browser that titles its windows in a way antidrift does
// not know, and the window is decided as it would be without an extension.
const tabSettle = 2 * time.Second

// The rate bound on one host's tab reports: a burst of tabReportBurst, then
// one every tabReportEvery. A report that comes sooner waits for its turn,
// and a newer one replaces it meanwhile (the newest wins): a flood from
// one host, or a page retitling itself in a loop, reaches the raw log at
// most a few times a second, and costs the core a comparison per report.
// The focused window's own evidence (RecordWindow) is never held back.
const (
	tabReportBurst = 4
	tabReportEvery = 250 * time.Millisecond
)

// maxTabSources bounds the connections whose claims the core keeps: one per
// browser (profile) running with the extension. dbusapi ends a claim when
// its connection leaves the bus.
const maxTabSources = 64

// TabSource is who reports tabs: one native host, on one bus connection,
// started by one browser process. Each host's claims are its own: only it
// replaces them, and they end when it does (ForgetTabs with its Conn).
// dbusapi fills it in from what the bus and /proc say of the caller, never
// from what the caller says of itself (docs/evidence.md).
type TabSource struct {
	// Conn is the host's unique bus name (":1.42"): the claims' key.
	// Unique names are never reused on a bus.
	Conn string
	// Browser is the family of the browser that started the host
	// (BrowserFirefox, BrowserChromium).
	Browser string
	// BrowserPID is that browser's process; 0 when unknown.
	BrowserPID int
}

// tabs is what the browsers' extensions report and how it fits the window
// the trusted source says has focus. It lives under the core's lock.
type tabs struct {
	seen     Window            // the window the source reported, scrubbed, without a site
	rawTitle string            // its title before redaction: what a tab's title is matched against
	claims   map[string]*claim // by the reporting host's connection (TabSource.Conn)
	seq      uint64            // counts applied reports: which claim spoke last
	// fitConn is the connection whose tab gives the focused window its
	// site ("" when none does). heldConn is the last one that did, and
	// heldID and heldTitle the window (its handle and raw title) it did it
	// for: while that window shows that title — in front still, or in
	// front again — no other host's report takes it over: a report of the
	// same title from another browser (a page there titled like the work
	// tab) cannot be about a window that did not change.
	fitConn                     string
	heldConn, heldID, heldTitle string
	// private: the focused window is a private browser window, by its own
	// title or by its extension's word. Nothing of it is recorded but its
	// class.
	private bool
	// pending: seen is a window of a browser whose extension is connected,
	// and its title fits no report yet. settled: it waited tabSettle, and
	// is decided by the window alone until a report fits again.
	pending, settled bool
	reason           string // SiteReason: why no site is known for seen
	timer            Timer
	gen              uint64 // bumps whenever timer is replaced; a timer must match
}

// claim is what one host reported: the report that last fitted the
// focused window, and the newest report when it has fitted none yet. A
// report that fits no focused window is kept aside, so it changes nothing;
// it becomes the browser's page once the focused window shows it (the
// browser retitles its window after the report, or before).
type claim struct {
	from            TabSource
	fit, next       Tab
	hasFit, hasNext bool
	at              uint64 // tabs.seq of its newest applied report

	// The rate bound: tokens left, when they were last counted (Mono),
	// and the newest report waiting for its turn.
	tokens   int
	counted  time.Duration
	queued   Tab
	hasQueue bool
	timer    Timer
	gen      uint64
}

// newest is the host's newest applied report.
func (c *claim) newest() Tab {
	if c.hasNext {
		return c.next
	}
	return c.fit
}

// take spends one of the rate bound's tokens at now, if there is one.
func (c *claim) take(now time.Duration) bool {
	if n := int((now - c.counted) / tabReportEvery); n > 0 {
		c.tokens = min(tabReportBurst, c.tokens+n)
		c.counted += time.Duration(n) * tabReportEvery
	}
	if c.tokens == tabReportBurst {
		c.counted = now
	}
	if c.tokens == 0 {
		return false
	}
	c.tokens--
	return true
}

// wait is how long from now until take has a token.
func (c *claim) wait(now time.Duration) time.Duration {
	return max(c.counted+tabReportEvery-now, time.Millisecond)
}

func (c *claim) stopTimer() {
	if c.timer != nil {
		c.timer.Stop()
		c.timer = nil
	}
	c.gen++
}

func newTabs(seen Window) tabs {
	return tabs{seen: seen, claims: map[string]*claim{}}
}

// waiting reports whether the focused window's verdict waits for its
// browser's tab report.
func (t *tabs) waiting() bool { return t.pending && !t.settled }

func (t *tabs) stopTimer() {
	if t.timer != nil {
		t.timer.Stop()
		t.timer = nil
	}
	t.gen++
}

// stopAll stops every timer of the tabs (Shutdown).
func (t *tabs) stopAll() {
	t.stopTimer()
	for _, c := range t.claims {
		c.stopTimer()
	}
}

// connected says whether a host of the browser family is connected.
func (t *tabs) connected(family string) bool {
	for _, c := range t.claims {
		if c.from.Browser == family {
			return true
		}
	}
	return false
}

// RecordTab is a native host's report of the active tab of its browser's
// focused window. from is who sent it, as dbusapi established (never what
// the report says of itself); the claim is from.Conn's alone. The site is
// made at once from the browser's own parse of the address (SiteFromParts). The report changes the
// verdict only of the focused window, and only when it fits it (TabFits);
// at most a few reports a second per host are taken, the newest winning.
func (s *Service) RecordTab(from TabSource, r TabReport) error {
	t, err := cleanTab(from.Browser, r)
	if err != nil {
		return err
	}
	if from.Conn == "" {
		return invalid("a tab report must come from a bus connection")
	}
	s.mu.Lock()
	c := s.tabs.claims[from.Conn]
	if c == nil {
		if len(s.tabs.claims) >= maxTabSources {
			s.mu.Unlock()
			return invalid("antidrift already keeps the tabs of %d browsers; a report from another is not taken until one of them closes", maxTabSources)
		}
		c = &claim{from: from, tokens: tabReportBurst, counted: s.clock.Mono()}
		s.tabs.claims[from.Conn] = c
	}
	if c.from != from {
		s.mu.Unlock()
		return invalid("this connection reports %s's tabs; it cannot report %s's", browserName(c.from.Browser), browserName(from.Browser))
	}
	if c.hasQueue && c.queued == t || !c.hasQueue && (c.hasNext || c.hasFit) && c.newest() == t {
		s.mu.Unlock()
		return nil
	}
	now := s.clock.Mono()
	if !c.take(now) {
		c.queued, c.hasQueue = t, true
		if c.timer == nil {
			c.gen++
			gen, conn := c.gen, from.Conn
			c.timer = s.clock.AfterFunc(c.wait(now), func() { s.takeQueuedTab(conn, gen) })
		}
		s.mu.Unlock()
		return nil
	}
	if c.hasQueue {
		c.stopTimer()
		c.queued, c.hasQueue = Tab{}, false
	}
	s.applyTabUnlocks(c, t)
	return nil
}

// takeQueuedTab applies the report that waited for its turn.
func (s *Service) takeQueuedTab(conn string, gen uint64) {
	s.mu.Lock()
	c := s.tabs.claims[conn]
	if c == nil || c.gen != gen || !c.hasQueue {
		s.mu.Unlock()
		return
	}
	c.timer = nil
	now := s.clock.Mono()
	if !c.take(now) {
		c.gen++
		gen := c.gen
		c.timer = s.clock.AfterFunc(c.wait(now), func() { s.takeQueuedTab(conn, gen) })
		s.mu.Unlock()
		return
	}
	t := c.queued
	c.queued, c.hasQueue = Tab{}, false
	s.applyTabUnlocks(c, t)
}

// applyTabUnlocks makes t the claim's newest report. Caller holds mu; it
// is released.
func (s *Service) applyTabUnlocks(c *claim, t Tab) {
	s.tabs.seq++
	c.at = s.tabs.seq
	c.next, c.hasNext = t, true
	if t.Site == "" {
		// The browser says its focused window shows nothing it reports (a
		// private window, or none of its windows has focus): the tab that
		// fitted last no longer describes the window in front, even if a
		// private window happens to carry the same title. Its windows are
		// decided by the window alone until a report fits again.
		c.fit, c.hasFit = Tab{}, false
	}
	s.refreshWindowUnlocks()
}

// ForgetTabs ends the claims of the host on bus connection conn: it said
// its browser is gone, or it left the bus. Its browser's windows are then
// decided by the other hosts of that browser family, or by the window
// alone. No other connection's claims change.
func (s *Service) ForgetTabs(conn string) error {
	s.mu.Lock()
	c := s.tabs.claims[conn]
	if c == nil {
		s.mu.Unlock()
		return nil
	}
	c.stopTimer()
	delete(s.tabs.claims, conn)
	s.refreshWindowUnlocks()
	return nil
}

// fitLocked is the site of the focused window: the newest tab report of a
// host of its browser that fits it, else "" with tabs.pending,
// tabs.private and tabs.reason saying why.
func (s *Service) fitLocked() string {
	t := &s.tabs
	held := ""
	if t.heldConn != "" && t.heldID == t.seen.ID && t.heldTitle == t.rawTitle {
		held = t.heldConn
	}
	t.pending, t.private, t.reason, t.fitConn = false, false, "", ""
	win := t.seen
	family := BrowserOf(win)
	if !win.Available || family == "" || s.privacy.private(win) {
		return ""
	}
	name := browserName(family)
	if privateBrowsing(family, t.rawTitle) {
		t.private = true
		t.reason = "a private " + name + " window (its title says so): antidrift records nothing of it but that it is " + name
		return ""
	}
	var mine []*claim
	for _, c := range t.claims {
		if c.from.Browser == family {
			mine = append(mine, c)
		}
	}
	if len(mine) == 0 {
		t.reason = name + " has no antidrift extension connected, so antidrift sees its window, not its tabs"
		return ""
	}
	// The host that spoke last first: of two browsers (or profiles) of one
	// family showing pages of the same title, the newer report wins.
	// The host that already describes this very window keeps it.
	slices.SortFunc(mine, func(a, b *claim) int {
		if ah, bh := a.from.Conn == held, b.from.Conn == held; ah != bh {
			if ah {
				return -1
			}
			return 1
		}
		return cmp.Compare(b.at, a.at)
	})
	for _, c := range mine {
		if c.hasNext && TabFits(c.next, win, t.rawTitle) {
			c.fit, c.hasFit, c.next, c.hasNext = c.next, true, Tab{}, false
		}
		if !c.hasFit || !TabFits(c.fit, win, t.rawTitle) {
			continue
		}
		if c.fit.Private {
			// A private tab the person opted in to report: it is still a
			// private window, and nothing of it is kept.
			t.private = true
			t.reason = "a private " + name + " window: antidrift records nothing of it but that it is " + name
			return ""
		}
		t.fitConn = c.from.Conn
		t.heldConn, t.heldID, t.heldTitle = c.from.Conn, win.ID, t.rawTitle
		return c.fit.Site
	}
	newest := mine[0].newest()
	if newest.Private {
		// The browser's extension says its focused window is private:
		// decided at once, by the window alone, and nothing of it kept.
		t.private = true
		t.reason = "a private " + name + " window: antidrift records nothing of it but that it is " + name
		return ""
	}
	// Nothing fits yet: wait for the report (the browser retitles its
	// window and reports its tab in either order), then decide the window
	// by itself.
	t.pending = true
	switch {
	case !t.settled:
		t.reason = "waiting for " + name + "'s tab report"
	case newest.Site == "":
		// A window of the browser that its own extension disowns: most
		// likely a private window the extension is not allowed in (whose
		// title Chromium does not mark). Judged by the window alone, and
		// recorded as one that may be private: without its title.
		t.private = true
		t.reason = name + "'s extension sees none of its windows in front (a private window it is not allowed in, perhaps): antidrift sees the window only, and records nothing of it but that it is " + name
	default:
		t.reason = "the " + name + " window's title fits no tab its extension reported, so antidrift sees the window only"
	}
	return ""
}
