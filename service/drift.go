package service

import (
	"context"
	"errors"
	"fmt"
	"time"
)

// enforceTimeout bounds one enforcement (iconify, then activate), so a
// wedged X server never holds anything up for long.
const enforceTimeout = 2 * time.Second

// drift is the judgement of the current window while a session is active.
// It lives under the core's lock with the rest of the state.
type drift struct {
	cache    map[judgeKey]Verdict // per class and instance, for this session
	verdict  Verdict              // of the current window
	seq      uint64               // bumps on every judgement; a late verdict must match
	episode  uint64               // bumps on every off-task episode; timers must match
	offSince time.Time            // start of the off-task episode; zero when on task
	drifting bool                 // the episode outlasted the grace
	grace    Timer
	repeat   Timer
	onTask   Window // the last on-task window of the session, for refocus
	// noticeUp says a drift nudge is on screen. enforced says this episode
	// ended with our iconify: its nudge stays up, because it explains where
	// the window went and still offers "Allow".
	noticeUp bool
	enforced bool
}

type judgeKey struct{ class, instance string }

// resetDriftLocked forgets all judgement (a new session, or none).
func (s *Service) resetDriftLocked() {
	s.stopDriftTimersLocked()
	s.drift = drift{cache: map[judgeKey]Verdict{}}
}

func (s *Service) stopDriftTimersLocked() {
	for _, t := range []*Timer{&s.drift.grace, &s.drift.repeat} {
		if *t != nil {
			(*t).Stop()
			*t = nil
		}
	}
}

// judgeLocked judges the current window. It answers Unknown when there is
// nothing to judge by; a slow judge's answer is Unknown until it arrives.
func (s *Service) judgeLocked() Verdict {
	s.drift.seq++
	win := s.window
	switch {
	case !win.Available:
		return Verdict{Task: TaskUnknown, Reason: "evidence unavailable: " + win.Reason}
	case len(s.allowed) == 0:
		return Verdict{Task: TaskUnknown, Reason: "this session allows no window classes, so nothing is judged off task"}
	}
	key := judgeKey{win.Class, win.Instance}
	if v, ok := s.drift.cache[key]; ok {
		return v
	}
	seq, id := s.drift.seq, s.sessionID
	v, ok := s.judge.Judge(win, s.allowed, func(v Verdict) { s.lateVerdict(id, seq, key, v) })
	if !ok {
		return Verdict{Task: TaskUnknown, Reason: "judging " + displayClass(win) + "…"}
	}
	s.drift.cache[key] = v
	return v
}

// lateVerdict applies a slow judge's verdict, but only if it still
// concerns the current window of the same session.
func (s *Service) lateVerdict(id string, seq uint64, key judgeKey, v Verdict) {
	s.mu.Lock()
	if s.state != StateActive || s.sessionID != id {
		s.mu.Unlock()
		return
	}
	s.drift.cache[key] = v
	if s.drift.seq != seq {
		s.mu.Unlock() // the person moved on; the cache still learned
		return
	}
	var w writes
	now := s.tickLocked(&w)
	if s.state == StateActive {
		s.recordVerdictLocked(&w, v, now)
	}
	s.commit(w)
}

// recordVerdictLocked applies a new verdict on the unchanged current
// window: the raw log records it so replay splits drift time the same way.
func (s *Service) recordVerdictLocked(w *writes, v Verdict, now time.Time) {
	s.account(w, FocusEvent{AtUnixMillis: now.UnixMilli(), Mark: MarkVerdict, OffTask: v.Task == TaskOff})
	s.applyVerdictLocked(w, v, now)
}

// applyVerdictLocked moves the drift state for verdict v on the current
// window. Hopping between off-task windows continues one episode: grace
// protects a glance away from work, not a tour of distractions.
func (s *Service) applyVerdictLocked(w *writes, v Verdict, now time.Time) {
	s.drift.verdict = v
	if s.awayMarked != "" {
		return // judgement pauses while away; coming back applies it
	}
	switch v.Task {
	case TaskOff:
		if s.drift.offSince.IsZero() {
			s.startEpisodeLocked(w, now)
		} else if s.drift.drifting {
			s.confirmDriftLocked(w) // a new distraction while drifting
		}
	case TaskOn:
		s.drift.onTask = s.window
		s.endEpisodeLocked(w)
	default:
		s.endEpisodeLocked(w)
	}
}

func (s *Service) startEpisodeLocked(w *writes, now time.Time) {
	s.drift.episode++
	s.drift.offSince, s.drift.drifting, s.drift.enforced = now, false, false
	if s.driftGrace <= 0 {
		s.confirmDriftLocked(w)
		return
	}
	id, ep := s.sessionID, s.drift.episode
	s.drift.grace = s.clock.AfterFunc(s.driftGrace, func() { s.graceElapsed(id, ep) })
}

// endEpisodeLocked ends drift (or its grace) and withdraws the nudge,
// unless our own iconify ended it.
func (s *Service) endEpisodeLocked(w *writes) {
	if s.drift.offSince.IsZero() {
		return
	}
	s.stopDriftTimersLocked()
	s.drift.offSince, s.drift.drifting = time.Time{}, false
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
	var w writes
	s.confirmDriftLocked(&w)
	s.commit(w)
}

// confirmDriftLocked is the moment drift costs something: a nudge (not at
// observe), and at block and locked the drifting window is iconified and
// focus handed back to the last on-task window. Both happen off the lock.
func (s *Service) confirmDriftLocked(w *writes) {
	s.drift.drifting = true
	win, class := s.window, displayClass(s.window)
	reason := s.drift.verdict.Reason
	if s.level == LevelObserve {
		return
	}
	w.nudged = append(w.nudged, [2]string{class, reason})
	if s.nudges != nil {
		note := s.driftNotification(class)
		w.effects = append(w.effects, func() { s.nudges.showDrift(class, note) })
		s.drift.noticeUp = true
	}
	s.armRepeatLocked()
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
		note := s.driftNotification(class)
		w.effects = append(w.effects, func() { s.nudges.showDrift(class, note) })
	}
	s.armRepeatLocked()
	s.commit(w)
}

func (s *Service) driftNotification(class string) Notification {
	n := Notification{
		Summary:  "Drifting: " + class,
		Body:     s.commitmentText(),
		Category: "x-antidrift.drift",
		Urgency:  1,
		Actions:  []Action{{Key: "refocus", Label: "Back to work"}},
	}
	hint := "Run `antidrift refocus` to go back to work"
	if s.level != LevelLocked {
		n.Actions = append(n.Actions, Action{Key: "allow", Label: "Allow " + class})
		hint += fmt.Sprintf(", or `antidrift allow %s` to allow it", class)
	}
	n.NoActionsHint = hint + "."
	return n
}

func (s *Service) deadlineNotification() Notification {
	return Notification{
		Summary:       "Time's up",
		Body:          s.commitmentText(),
		Category:      "x-antidrift.deadline",
		Urgency:       1,
		Actions:       []Action{{Key: "complete", Label: "Done"}, {Key: "extend", Label: "+10 min"}},
		NoActionsHint: "Run `antidrift end` to seal the session, or `antidrift extend 10m` for more time.",
	}
}

func (s *Service) commitmentText() string {
	return fmt.Sprintf("Next: %s\nDone when: %s", s.nextAction, s.successCond)
}

// enforce iconifies the judged window (the guard leaves it alone if it no
// longer has focus), counts the iconify, and activates the last on-task
// window.
func (s *Service) enforce(id string, target, back Window) {
	s.onGuard(func(ctx context.Context) {
		if err := s.guard.MinimizeWindow(ctx, target.ID); err != nil {
			if !errors.Is(err, ErrNotActive) {
				s.log.Warn("iconifying the drifting window failed", "session_id", id, "class", target.Class, "err", err)
			}
			return
		}
		s.recordMinimize(id)
		if back.ID != "" {
			s.handBack(ctx, back)
		}
	})
}

// activate hands focus to window back.
func (s *Service) activate(back Window) {
	s.onGuard(func(ctx context.Context) { s.handBack(ctx, back) })
}

func (s *Service) handBack(ctx context.Context, back Window) {
	if err := s.guard.ActivateWindow(ctx, back.ID); err != nil {
		s.log.Warn("handing focus back to work failed", "err", err)
	}
}

// onGuard runs act on its own goroutine, never under the lock, bounded by
// enforceTimeout so a wedged X server holds nothing up.
func (s *Service) onGuard(act func(ctx context.Context)) {
	s.bgMu.Lock()
	defer s.bgMu.Unlock()
	if s.bgStopped {
		return // shutting down: nothing new starts
	}
	s.background.Add(1)
	go func() {
		defer s.background.Done()
		ctx, cancel := context.WithTimeout(context.Background(), enforceTimeout)
		defer cancel()
		act(ctx)
	}()
}

func (s *Service) recordMinimize(id string) {
	s.mu.Lock()
	if s.sessionID != id || s.stats == nil || s.state != StateActive {
		s.mu.Unlock()
		return
	}
	var w writes
	now := s.tickLocked(&w)
	if s.state == StateActive {
		s.account(&w, FocusEvent{AtUnixMillis: now.UnixMilli(), Mark: MarkMinimized})
	}
	s.commit(w)
}

// NotificationAction is the person choosing an action on one of our
// notifications. Actions on notifications that are not ours are ignored,
// and each maps to exactly one method, which the permission table still
// judges: Refocus, Allow, Complete or Extend.
func (s *Service) NotificationAction(id uint32, key string) {
	if s.nudges == nil {
		return
	}
	kind, class := s.nudges.whose(id)
	var err error
	switch {
	case kind == "drift" && key == "refocus":
		err = s.Refocus()
	case kind == "drift" && key == "allow":
		err = s.Allow(class)
	case kind == "deadline" && key == "complete":
		// At the deadline the session is already in review, where Complete
		// is refused: "Done" then just acknowledges, and End seals it.
		if err = s.Complete(); err != nil && s.View().State == StateReview {
			err = nil
		}
		s.nudges.closeDeadline()
	case kind == "deadline" && key == "extend":
		err = s.Extend(600)
	default:
		return
	}
	if err != nil {
		s.log.Info("a notification action was refused", "action", key, "err", err)
	}
}
