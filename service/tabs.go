package service

import "time"

// tabSettle is how long a browser window whose title fits none of its
// extension's tab reports waits for one that does before it is decided by
// the window alone. The browser retitles its window and its extension
// reports the new tab within milliseconds of each other, in either order;
// a title that still fits nothing after this is a page the extension does
// not report, or a browser that titles its windows in a way antidrift does
// not know, and the window is decided as it would be without an extension.
const tabSettle = 2 * time.Second

// tabs is what the browsers' extensions report and how it fits the window
// the trusted source says has focus. It lives under the core's lock.
type tabs struct {
	seen     Window                  // the window the source reported, scrubbed, without a site
	rawTitle string                  // its title before redaction: what a tab's title is matched against
	reports  map[string]*browserTabs // per browser family connected
	// pending: seen is a window of a browser whose extension is connected,
	// and its title fits no report yet. settled: it waited tabSettle, and
	// is decided by the window alone until a report fits again.
	pending, settled bool
	reason           string // SiteReason: why no site is known for seen
	timer            Timer
	gen              uint64 // bumps whenever timer is replaced; a timer must match
}

// browserTabs is what one browser's extension reported: the report that
// last fitted the focused window, and the newest report when it has fitted
// none yet. A report that fits no focused window is kept aside, so it
// changes nothing; it becomes the browser's page once the focused window
// shows it (the browser retitles its window after the report, or before).
type browserTabs struct {
	fit, next       Tab
	hasFit, hasNext bool
}

// newest is the browser's newest report.
func (b *browserTabs) newest() Tab {
	if b.hasNext {
		return b.next
	}
	return b.fit
}

func newTabs(seen Window) tabs {
	return tabs{seen: seen, reports: map[string]*browserTabs{}}
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

// RecordTab is a browser's report of the active tab of its focused window
// (through the native host): the tab's id, its address as the browser
// parsed it, its title and whether it is private. The site is made at once
// (SiteFromParts). An empty scheme, not private, says the browser has no
// focused window. The report changes the verdict only of the focused
// window, and only when it fits it (TabFits).
func (s *Service) RecordTab(browser string, r TabReport) error {
	t, err := cleanTab(browser, r)
	if err != nil {
		return err
	}
	s.mu.Lock()
	b := s.tabs.reports[t.Browser]
	if b == nil {
		b = &browserTabs{}
		s.tabs.reports[t.Browser] = b
	}
	if b.newest() == t && (b.hasNext || b.hasFit) {
		s.mu.Unlock()
		return nil
	}
	b.next, b.hasNext = t, true
	if t.Site == "" {
		// The browser says its focused window shows nothing it reports (a
		// private window, or none of its windows has focus): the tab that
		// fitted last no longer describes the window in front, even if a
		// private window happens to carry the same title. Its windows are
		// decided by the window alone until a report fits again.
		b.fit, b.hasFit = Tab{}, false
	}
	s.refreshWindowLocked()
	return nil
}

// ForgetTabs says a browser's extension is gone (the browser closed, or
// its native host lost the browser): its windows are decided by the window
// alone again.
func (s *Service) ForgetTabs(browser string) error {
	if browser != BrowserFirefox && browser != BrowserChromium {
		return invalid("browser must be %s or %s; got %s", BrowserFirefox, BrowserChromium, Quote(browser))
	}
	s.mu.Lock()
	if _, ok := s.tabs.reports[browser]; !ok {
		s.mu.Unlock()
		return nil
	}
	delete(s.tabs.reports, browser)
	s.refreshWindowLocked()
	return nil
}

// refreshWindowLocked makes the current window the one the source reported
// with the site its browser's report gives it, and accounts and decides it
// when that changed anything. Caller holds mu; it is released.
func (s *Service) refreshWindowLocked() {
	wasWaiting, wasReason := s.tabs.waiting(), s.tabs.reason
	win := s.tabs.seen
	win.Site = s.fitLocked()
	switch {
	case !s.tabs.pending:
		s.tabs.stopTimer()
		s.tabs.settled = false
	case s.tabs.timer == nil && !s.tabs.settled:
		s.tabs.gen++
		gen := s.tabs.gen
		s.tabs.timer = s.clock.AfterFunc(tabSettle, func() { s.tabsSettled(gen) })
	}
	if win == s.window && s.tabs.waiting() == wasWaiting {
		if s.tabs.reason == wasReason {
			s.mu.Unlock()
			return
		}
		s.commit(writes{}) // SiteReason changed
		return
	}
	s.window = win
	var w writes
	now := s.tickLocked(&w)
	if s.state == StateActive {
		s.observeLocked(&w, now)
	}
	s.commit(w)
}

// tabsSettled ends the wait for a tab report that fits: the window is
// decided by itself.
func (s *Service) tabsSettled(gen uint64) {
	s.mu.Lock()
	if s.tabs.gen != gen || !s.tabs.pending || s.tabs.settled {
		s.mu.Unlock()
		return
	}
	s.tabs.timer, s.tabs.settled = nil, true
	s.fitLocked() // the reason now says it was given up on
	var w writes
	now := s.tickLocked(&w)
	if s.state == StateActive {
		s.observeLocked(&w, now)
	}
	s.commit(w)
}

// fitLocked is the site of the focused window: its browser's newest tab
// report when that fits it, else "" with tabs.pending and tabs.reason
// saying why.
func (s *Service) fitLocked() string {
	t := &s.tabs
	t.pending, t.reason = false, ""
	win := t.seen
	family := BrowserOf(win)
	if !win.Available || family == "" || s.privacy.private(win) {
		return ""
	}
	name := browserName(family)
	b := t.reports[family]
	switch {
	case b == nil:
		t.reason = name + " has no antidrift extension connected, so antidrift sees its window, not its tabs"
	case b.hasNext && TabFits(b.next, win, t.rawTitle):
		b.fit, b.hasFit, b.next, b.hasNext = b.next, true, Tab{}, false
		return b.fit.Site
	case b.hasFit && TabFits(b.fit, win, t.rawTitle):
		return b.fit.Site
	default:
		// Nothing fits yet: wait for the report (the browser retitles its
		// window and reports its tab in either order), then decide the
		// window by itself.
		t.pending = true
		newest := b.newest()
		switch {
		case newest.Private:
			t.reason = "a private " + name + " window: its tabs are not reported, so antidrift sees the window only"
		case !t.settled:
			t.reason = "waiting for " + name + "'s tab report"
		case newest.Site == "":
			t.reason = name + "'s extension sees none of its windows in front (a private window it is not allowed in, perhaps), so antidrift sees the window only"
		default:
			t.reason = "the " + name + " window's title fits no tab its extension reported, so antidrift sees the window only"
		}
	}
	return ""
}
