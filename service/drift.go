package service

import "time"

// drift is what the core holds about the current window's verdict while a
// session is active (verdict.go says how it is reached). It lives under
// the core's lock with the rest of the state.
type drift struct {
	judged  map[verdictKey]Verdict // what the judge said this session, per key (judge.go)
	verdict Verdict                // of the current window
	// exempt are the windows (lower-cased class, folded title) the person
	// said are not a distraction, for the rest of the session.
	exempt   map[verdictKey]bool
	focusAt  time.Time // when the current window got focus: grace runs from here
	episode  uint64    // bumps on every off-task episode; timers must match
	offSince time.Time // start of the off-task episode; zero when on task
	drifting bool      // the episode outlasted the grace
	graceDue bool      // the grace ran out while the browser window waited for its tab report
	// tabsBlocked: this session had a browser's extension block a tab,
	// to be restored when the active phase ends.
	tabsBlocked bool
	// block is the tab block waiting for the extension's confirmation.
	block  *tabBlock
	grace  Timer
	repeat Timer
	onTask Window // the last on-task window of the session, for refocus
	// noticeUp says a drift nudge is on screen. enforced says this episode
	// ended with our iconify: its nudge stays up, because it explains where
	// the window went and still offers "Allow".
	noticeUp bool
	enforced bool
}

// resetDriftLocked forgets every verdict (a new session, or none).
func (s *Service) resetDriftLocked() {
	s.stopDriftTimersLocked()
	s.stopTabBlockLocked()
	s.drift = drift{judged: map[verdictKey]Verdict{}, exempt: map[verdictKey]bool{}}
}

func (s *Service) stopDriftTimersLocked() {
	for _, t := range []*Timer{&s.drift.grace, &s.drift.repeat} {
		if *t != nil {
			(*t).Stop()
			*t = nil
		}
	}
}
