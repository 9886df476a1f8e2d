package service

import "time"

// Accounting (step 5 of the path, verdict.go): every event of a live
// session goes to the live stats and, in the same order, to its raw log,
// so replaying the log rebuilds the same stats (stats.go).

// accountFocusLocked accounts the current window, now in front, under
// verdict v: its time counts as off task while v says so.
func (s *Service) accountFocusLocked(w *writes, v Verdict, now time.Time) {
	e := eventOf(s.window, now)
	e.OffTask = v.Task == TaskOff
	s.account(w, e)
}

// accountVerdictLocked accounts a new verdict on the unchanged current
// window, from now on.
func (s *Service) accountVerdictLocked(w *writes, v Verdict, now time.Time) {
	s.account(w, FocusEvent{AtUnixMillis: now.UnixMilli(), Mark: MarkVerdict, OffTask: v.Task == TaskOff})
}

// eventOf is the raw-log event for window w seen at t.
func eventOf(w Window, t time.Time) FocusEvent {
	e := FocusEvent{AtUnixMillis: t.UnixMilli(), Available: w.Available, Reason: w.Reason}
	if w.Available {
		e.Class, e.Instance, e.Title, e.Site = w.Class, w.Instance, w.Title, DisplaySite(w.Site)
	}
	return e
}

// account feeds e to the live stats and queues it for the raw log. Caller
// holds mu and a session is live.
func (s *Service) account(w *writes, e FocusEvent) {
	s.stats.apply(e)
	w.sessionID = s.sessionID
	w.events = append(w.events, e)
}
