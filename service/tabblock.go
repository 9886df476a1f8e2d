package service

// Blocking a tab. At block and locked, drift on a page of a browser whose
// extension is connected costs the page, not the window: the core asks the
// extension (through a listener that is a TabGuard: dbusapi relays it as
// Evidence1.BlockTab) to replace that tab's page with its own, and neither
// iconifies the window nor touches the browser's other tabs. When the
// session's active phase ends, every blocked page is restored. A browser
// without the extension is enforced as before: the window is iconified.

// BlockedPageSite is the site the extension reports while one of its own
// pages is in front ("antidrift:blocked" in a blocked tab's place,
// "antidrift:consent"): not a site, and never drift, nor blocked.
const BlockedPageSite = "antidrift:"

// TabOrder is the core's word to the browsers' extensions.
type TabOrder struct {
	// Restore: the session's active phase ended; every blocked page comes
	// back. Otherwise block the tab of Browser showing Site.
	Restore bool
	// Conn is the bus connection of the native host whose report gave the
	// window its site: the one host the order is for ("" with Restore).
	Conn             string
	Browser, Site    string
	NextAction, Done string
	DeadlineUnix     int64
}

// TabGuard is a Listener that also carries the core's word to the
// browsers' extensions. TabOrder is called, like the Listener's methods,
// after the core released its lock; it must not block for long.
type TabGuard interface {
	TabOrder(TabOrder)
}

// blockTabLocked orders the drifting window's tab blocked when it shows a
// page of a browser whose extension is connected, and reports whether it
// did (the window is then not iconified). Caller holds mu.
func (s *Service) blockTabLocked(w *writes, win Window) bool {
	if win.Site == "" || win.Site == BlockedPageSite || !s.hasTabGuard() {
		return false
	}
	family := BrowserOf(win)
	if s.tabs.fitConn == "" {
		return false
	}
	w.tabOrders = append(w.tabOrders, TabOrder{Conn: s.tabs.fitConn, Browser: family, Site: win.Site,
		NextAction: s.nextAction, Done: s.successCond, DeadlineUnix: unixSeconds(s.deadline)})
	s.account(w, FocusEvent{AtUnixMillis: s.liveNowLocked().UnixMilli(), Mark: MarkTabBlocked, Site: win.Site})
	s.drift.tabsBlocked = true
	return true
}

// restoreTabsLocked orders the pages this session blocked restored.
func (s *Service) restoreTabsLocked(w *writes) {
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
