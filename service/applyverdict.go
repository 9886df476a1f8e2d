package service

import "time"

// Applying a verdict (step 6 of the path, verdict.go): an off-task verdict
// starts a drift episode, whose grace protects a glance away from work;
// drift that outlasts it is confirmed, nudged and, at block and locked,
// enforced; an on-task or unknown verdict ends the episode.

// applyVerdictLocked moves the drift state for verdict v on the current
// window. Hopping between off-task windows continues one episode: grace
// protects a glance away from work, not a tour of distractions.
func (s *Service) applyVerdictLocked(w *writes, v Verdict, now time.Time) {
	s.drift.verdict = v
	if s.awayMarked != "" {
		return // drift pauses while away; coming back applies it
	}
	switch v.Task {
	case TaskOff:
		if s.drift.offSince.IsZero() {
			// Grace runs from the moment focus arrived, not from a slow
			// judge's verdict: the model's thinking time is not a gift.
			since := s.drift.focusAt
			if since.IsZero() || since.After(now) {
				since = now
			}
			s.startEpisodeLocked(w, since, now)
		} else if s.drift.drifting || s.drift.graceDue {
			s.confirmDriftLocked(w) // a new distraction while drifting, or the grace ran out while the browser was between pages
		}
	case TaskOn:
		s.drift.onTask = s.window
		s.endEpisodeLocked(w)
	default:
		s.endEpisodeLocked(w)
	}
}

// startEpisodeLocked starts an off-task episode whose grace began at
// since (now or earlier): drift is confirmed when the grace is over.
func (s *Service) startEpisodeLocked(w *writes, since, now time.Time) {
	s.drift.episode++
	s.drift.offSince, s.drift.drifting, s.drift.enforced, s.drift.graceDue = since, false, false, false
	left := s.driftGrace - now.Sub(since)
	if left <= 0 {
		s.confirmDriftLocked(w)
		return
	}
	id, ep := s.sessionID, s.drift.episode
	s.drift.grace = s.clock.AfterFunc(left, func() { s.graceElapsed(id, ep) })
}

// endEpisodeLocked ends drift (or its grace) and withdraws the nudge,
// unless our own iconify ended it.
func (s *Service) endEpisodeLocked(w *writes) {
	if s.drift.offSince.IsZero() {
		return
	}
	s.stopDriftTimersLocked()
	s.drift.offSince, s.drift.drifting, s.drift.graceDue = time.Time{}, false, false
	if !s.drift.enforced {
		s.closeNoticeLocked(w)
	}
}

// closeNoticeLocked withdraws the drift nudge if one is up.
func (s *Service) closeNoticeLocked(w *writes) {
	if s.drift.noticeUp && s.nudges != nil {
		w.effects = append(w.effects, s.nudges.closeDrift)
	}
	s.drift.noticeUp = false
}

func (s *Service) graceElapsed(id string, episode uint64) {
	s.mu.Lock()
	if s.state != StateActive || s.sessionID != id || s.drift.episode != episode || s.drift.drifting || s.drift.offSince.IsZero() || s.awayMarked != "" {
		s.mu.Unlock()
		return
	}
	s.drift.grace = nil
	if s.tabs.waiting() {
		// The browser is between two pages: confirm once it says which.
		s.drift.graceDue = true
		s.mu.Unlock()
		return
	}
	var w writes
	s.confirmDriftLocked(&w)
	s.commitUnlocks(w)
}

// confirmDriftLocked is the moment drift costs something: a nudge (not at
// observe), and at block and locked the drifting window is iconified and
// focus handed back to the last on-task window. Both happen off the lock.
func (s *Service) confirmDriftLocked(w *writes) {
	s.drift.drifting, s.drift.graceDue = true, false
	win, class := s.window, displayClass(s.window)
	reason := s.drift.verdict.Reason
	if s.level == LevelObserve {
		return
	}
	w.nudged = append(w.nudged, [2]string{class, reason})
	if s.nudges != nil {
		note, about := s.driftNotification(win), nudgeAbout{class, FoldTitle(win.Title)}
		w.effects = append(w.effects, func() { s.nudges.showDrift(about, note) })
		s.drift.noticeUp = true
	}
	s.armRepeatLocked()
	if (s.level == LevelBlock || s.level == LevelLocked) && s.blockTabLocked(w, win) {
		return // enforced when the extension confirms, or by the fallback minimize (tabblock.go)
	}
	if (s.level == LevelBlock || s.level == LevelLocked) && s.guard != nil && win.ID != "" {
		id, back := s.sessionID, s.drift.onTask
		w.effects = append(w.effects, func() { s.enforce(id, win, back) })
		s.drift.enforced = true
	}
}

// armRepeatLocked schedules the next nudge of this episode.
func (s *Service) armRepeatLocked() {
	if s.drift.repeat != nil {
		s.drift.repeat.Stop()
	}
	id, ep := s.sessionID, s.drift.episode
	s.drift.repeat = s.clock.AfterFunc(s.nudgeRepeat, func() { s.repeatNudge(id, ep) })
}

func (s *Service) repeatNudge(id string, episode uint64) {
	s.mu.Lock()
	if s.state != StateActive || s.sessionID != id || s.drift.episode != episode || !s.drift.drifting || s.level == LevelObserve {
		s.mu.Unlock()
		return
	}
	var w writes
	class := displayClass(s.window)
	w.nudged = append(w.nudged, [2]string{class, s.drift.verdict.Reason})
	if s.nudges != nil {
		note, about := s.driftNotification(s.window), nudgeAbout{class, FoldTitle(s.window.Title)}
		w.effects = append(w.effects, func() { s.nudges.showDrift(about, note) })
	}
	s.armRepeatLocked()
	s.commitUnlocks(w)
}
