package service

// The window's entrance: every focused window the sensor reports enters
// the core here (RecordWindow), browser or not. It is made private
// (privacy.go), named by its desktop entry (apps.go), given the site its
// browser's tab report says is in front or held until that report comes
// (tabs.go: fitLocked), and, when anything changed, taken down the
// verdict's path (verdict.go: observeLocked). A tab report that changes
// which page is in front comes in through the same door
// (refreshWindowUnlocks), from RecordTab and ForgetTabs.

// MaxTitleLen bounds a window title as the core keeps it (shown, decided,
// logged, accounted): a page or a program can set a title of any length,
// and one of megabytes would be written to the focus log at every switch.
// Real titles are far shorter; what a person recognizes a window by is at
// its start.
const MaxTitleLen = 512

// RecordWindow is the sensor's report of the active window. It is always
// shown; it is accounted only while a session is active.
func (s *Service) RecordWindow(win Window) {
	raw := win.Title // a tab report is matched against the title the browser set
	win = s.privacy.scrub(win)
	win.Title = clip(win.Title, MaxTitleLen) // after redaction, which must see a secret whole
	win.Site = ""                            // only a tab report that fits says which page is in front
	gen := s.appsGen.Load()
	win.App = s.lookupApp(win) // a map read, before the lock all the same
	s.mu.Lock()
	if s.appsGen.Load() != gen {
		// The entries changed while it was read, and AppsChanged may have
		// renamed the window before this one: read them again.
		win.App = s.lookupApp(win)
	}
	if win == s.tabs.seen && raw == s.tabs.rawTitle {
		s.mu.Unlock()
		return
	}
	if win.ID != s.tabs.seen.ID {
		// Another window: it waits for its own tab report, whatever the
		// one before it gave up on (a title that changes in the same
		// window does not start the wait again).
		s.tabs.settled = false
	}
	s.tabs.seen, s.tabs.rawTitle = win, raw
	s.rememberAppLocked(win)
	s.refreshWindowUnlocks()
}

// presentLocked is the focused window as the core keeps it: the window
// the source reported, with site (fitLocked's); its title dropped while it
// is a private browser window, and while it waits for its tab report (it
// may yet be said to be private). Caller holds mu.
func (s *Service) presentLocked(site string) Window {
	win := s.tabs.seen
	win.Site = site
	if s.tabs.private || s.tabs.waiting() {
		win.Title = ""
	}
	return win
}

// refreshWindowUnlocks makes the current window the one the source reported
// with the site its browser's report gives it, and accounts and decides it
// when that changed anything. Caller holds mu; it is released.
func (s *Service) refreshWindowUnlocks() {
	wasWaiting, wasReason := s.tabs.waiting(), s.tabs.reason
	site := s.fitLocked()
	switch {
	case !s.tabs.pending:
		s.tabs.stopTimer()
		s.tabs.settled = false
	case s.tabs.timer == nil && !s.tabs.settled:
		s.tabs.gen++
		gen := s.tabs.gen
		s.tabs.timer = s.clock.AfterFunc(tabSettle, func() { s.tabsSettled(gen) })
	}
	win := s.presentLocked(site)
	if win == s.window && s.tabs.waiting() == wasWaiting {
		if s.tabs.reason == wasReason {
			s.mu.Unlock()
			return
		}
		s.commitUnlocks(writes{}) // SiteReason changed
		return
	}
	s.window = win
	var w writes
	now := s.tickLocked(&w)
	if s.state == StateActive {
		s.observeLocked(&w, now)
	}
	s.commitUnlocks(w)
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
	s.window = s.presentLocked(s.fitLocked()) // the reason now says it was given up on; the title is back
	var w writes
	now := s.tickLocked(&w)
	if s.state == StateActive {
		s.observeLocked(&w, now)
	}
	s.commitUnlocks(w)
}
