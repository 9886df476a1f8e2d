package service

import "time"

// Blocking a tab. At block and locked, drift on a page of a browser whose
// extension is connected costs the page, not the window: the core asks the
// extension (through a listener that is a TabGuard: dbusapi relays it as
// Evidence1.BlockTab) to replace that tab's page with its own, naming the
// tab by the id the browser reported, and touches neither the window nor
// the browser's other tabs. The extension confirms (Evidence1.TabBlocked
// through its native host); only a confirmed block is recorded as
// tab_blocked. Without a confirmation within tabBlockWait the window is
// iconified, as for a browser without the extension, and that is recorded
// as a minimize. When the session's active phase ends, every blocked page
// is restored.

// BlockedPageSite is the site the extension reports while one of its own
// pages is in front ("antidrift:blocked" in a blocked tab's place,
// "antidrift:consent"): not a site, and never drift, nor blocked.
const BlockedPageSite = "antidrift:"

// tabBlockWait is how long the core waits for the extension's word that
// it replaced the tab (TabBlocked) before it minimizes the window as it
// does for a browser without the extension: an extension that is old,
// busy, gone, or that found the tab changed never leaves drift unenforced.
const tabBlockWait = 2 * time.Second

// TabOrder is the core's word to the browsers' extensions.
type TabOrder struct {
	// Restore: the session's active phase ended; every blocked page comes
	// back. Otherwise block the tab TabID of Browser, which showed Site.
	Restore bool
	// Conn is the bus connection of the native host whose report gave the
	// window its site: the one host the order is for, and the only one
	// whose confirmation counts ("" with Restore).
	Conn    string
	Browser string
	// TabID is the browser's own id of the tab, as its report gave it: the
	// extension replaces that tab, never one it finds by address.
	TabID int64
	// Site is the page as a person is shown it (DisplaySite), for the
	// extension's page.
	Site             string
	NextAction, Done string
	DeadlineUnix     int64
}

// TabGuard is a Listener that also carries the core's word to the
// browsers' extensions. TabOrder is called, like the Listener's methods,
// after the core released its lock; it must not block for long.
type TabGuard interface {
	TabOrder(TabOrder)
}

// tabBlock is a block ordered and not yet confirmed: what the fallback
// minimizes if no confirmation comes within tabBlockWait.
type tabBlock struct {
	conn      string // the host's connection: only its confirmation counts
	browser   string
	tabID     int64
	site      string // as stored (DisplaySite)
	sessionID string
	episode   uint64
	win, back Window
	timer     Timer
}

// blockTabLocked orders the drifting window's tab blocked when it shows a
// page of a browser whose extension is connected and which reported the
// tab's id, and reports whether it did. The window is then left alone for
// tabBlockWait: the extension's confirmation (TabBlocked) records the
// block; without it the window is minimized (tabBlockTimedOut). Caller
// holds mu.
func (s *Service) blockTabLocked(w *writes, win Window) bool {
	if win.Site == "" || win.Site == BlockedPageSite || !s.hasTabGuard() {
		return false
	}
	family := BrowserOf(win)
	c := s.tabs.claims[s.tabs.fitConn]
	if c == nil || !c.hasFit || c.fit.Site != win.Site || c.fit.ID == NoTabID {
		return false // no tab id to name: the window is minimized instead
	}
	s.stopTabBlockLocked()
	p := &tabBlock{conn: c.from.Conn, browser: family, tabID: c.fit.ID, site: DisplaySite(win.Site), sessionID: s.sessionID,
		episode: s.drift.episode, win: win, back: s.drift.onTask}
	p.timer = s.clock.AfterFunc(tabBlockWait, func() { s.tabBlockTimedOut(p) })
	s.drift.block = p
	w.tabOrders = append(w.tabOrders, TabOrder{Conn: p.conn, Browser: family, TabID: p.tabID, Site: p.site,
		NextAction: s.nextAction, Done: s.successCond, DeadlineUnix: unixSeconds(s.deadline)})
	// Whether or not it is confirmed, the extension may replace the page
	// (late): the end of the session restores it either way.
	s.drift.tabsBlocked = true
	return true
}

// TabBlocked is a browser's extension saying, through its native host
// (from, as dbusapi established it), that it replaced tab tabID's page as
// ordered. Only the confirmation of the block the core is waiting for, from
// the host the order went to, counts: it records tab_blocked and the drift
// is enforced. Any other (a late one, after the window was minimized
// instead; one for another tab, or from another host) changes nothing. It
// is not held to the tab reports' rate bound.
func (s *Service) TabBlocked(from TabSource, tabID int64) error {
	if from.Browser != BrowserFirefox && from.Browser != BrowserChromium {
		return invalid("browser must be %s or %s; got %s", BrowserFirefox, BrowserChromium, Quote(from.Browser))
	}
	s.mu.Lock()
	p := s.drift.block
	if p == nil || p.conn != from.Conn || p.browser != from.Browser || p.tabID != tabID || s.sessionID != p.sessionID || s.state != StateActive {
		s.mu.Unlock()
		return nil
	}
	s.stopTabBlockLocked()
	var w writes
	now := s.tickLocked(&w)
	if s.state == StateActive {
		s.account(&w, FocusEvent{AtUnixMillis: now.UnixMilli(), Mark: MarkTabBlocked, Site: p.site})
		if s.drift.episode == p.episode && s.drift.drifting {
			s.drift.enforced = true
		}
	}
	s.commitUnlocks(w)
	return nil
}

// tabBlockTimedOut: no confirmation came. The window is minimized as it is
// for a browser without the extension, if it is still this episode's
// drift; the minimize is recorded as one (enforce).
func (s *Service) tabBlockTimedOut(p *tabBlock) {
	s.mu.Lock()
	if s.drift.block != p {
		s.mu.Unlock()
		return
	}
	s.drift.block = nil
	if s.state != StateActive || s.sessionID != p.sessionID || s.drift.episode != p.episode || !s.drift.drifting || s.awayMarked != "" || s.guard == nil || p.win.ID == "" {
		s.mu.Unlock()
		return
	}
	s.log.Info("the browser's extension did not confirm the tab block; minimizing the window", "session_id", p.sessionID, "browser", p.browser)
	s.drift.enforced = true
	id := s.sessionID
	s.mu.Unlock()
	s.enforce(id, p.win, p.back)
}

// stopTabBlockLocked forgets the block waiting for its confirmation.
func (s *Service) stopTabBlockLocked() {
	if p := s.drift.block; p != nil {
		p.timer.Stop()
		s.drift.block = nil
	}
}

// restoreTabsLocked orders the pages this session blocked restored.
func (s *Service) restoreTabsLocked(w *writes) {
	s.stopTabBlockLocked()
	if s.drift.tabsBlocked {
		w.tabOrders = append(w.tabOrders, TabOrder{Restore: true})
		s.drift.tabsBlocked = false
	}
}

func (s *Service) hasTabGuard() bool {
	for _, l := range s.listeners {
		if _, ok := l.(TabGuard); ok {
			return true
		}
	}
	return false
}
