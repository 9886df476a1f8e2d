package service

import (
	"encoding/json"
	"fmt"
	"reflect"
	"slices"
	"time"
)

// armTimerLocked (re)arms the one deadline timer. Caller holds mu.
func (s *Service) armTimerLocked() {
	s.stopTimerLocked()
	id, d := s.sessionID, s.deadline.Sub(s.liveNowLocked())
	s.timer = s.clock.AfterFunc(d, func() { s.expire(id) })
}

func (s *Service) stopTimerLocked() {
	if s.timer != nil {
		s.timer.Stop()
		s.timer = nil
	}
}

// armHoldLocked arms a timer for the moment the break-glass hold elapses:
// Abandon becomes permitted then, and the Permitted property must say so
// without waiting for some other change. Only while a hold is running, so
// idle costs nothing. Caller holds mu.
func (s *Service) armHoldLocked() {
	if s.breakGlassAt.IsZero() || s.breakGlassElapsed() {
		return
	}
	id := s.sessionID
	s.clock.AfterFunc(s.breakGlassRemaining(), func() { s.holdElapsed(id) })
}

// holdElapsed announces that session id's hold has elapsed; if the wall
// clock was set back meanwhile (the hold moves with it), it waits again.
func (s *Service) holdElapsed(id string) {
	s.mu.Lock()
	if s.state != StateActive || s.sessionID != id {
		s.mu.Unlock()
		return
	}
	var w writes
	s.tickLocked(&w)
	s.armHoldLocked()
	s.commit(w)
}

// expire moves session id to review when its deadline has passed. A timer
// that fires late for a session that was extended or ended does nothing.
func (s *Service) expire(id string) {
	s.mu.Lock()
	if s.state != StateActive || s.sessionID != id {
		s.mu.Unlock()
		return
	}
	var w writes
	if now := s.tickLocked(&w); s.state == StateActive && now.Before(s.deadline) {
		s.armTimerLocked() // the wall clock was set back: wait for the deadline in wall time
	}
	s.commit(w)
}

// Recover restores the state a previous run left in snap (the zero
// Snapshot when there was none): it replays the raw log to rebuild the
// stats exactly, re-arms the deadline or expires the session if it passed
// meanwhile, and seals summaries left pending.
func (s *Service) Recover(snap Snapshot) error {
	live := snap.State == StateActive || snap.State == StateReview
	replayed, counted, exempt := s.replay(snap)

	s.mu.Lock()
	s.io.Lock()
	s.pending = slices.Clone(snap.Pending)
	s.io.Unlock()
	w := writes{flushPending: true}
	if snap.State == "" || (live && snap.SessionID == "") {
		snap.State = StateLocked
	}
	s.state, s.sessionID = snap.State, snap.SessionID
	s.nextAction, s.successCond = snap.NextAction, snap.SuccessCondition
	s.timebox = time.Duration(snap.TimeboxSecs) * time.Second
	s.startedAt, s.deadline = fromUnixMilli(snap.StartedUnixMilli), fromUnixMilli(snap.DeadlineUnixMilli)
	s.endedAt = fromUnixMilli(snap.EndedUnixMilli)
	s.level, s.allowed, s.outcome = snap.Enforcement, slices.Clone(snap.AllowedClasses), snap.Outcome
	s.rules = s.compileRules("allowed_classes", s.allowed)
	s.breakGlassAt = fromUnixMilli(snap.BreakGlassUnixMilli)
	s.clockSetBack = time.Duration(snap.ClockSetBackMillis) * time.Millisecond
	s.quiet = live && snap.Quiet
	s.task, s.taskResult, s.taskEnding = nil, "", taskEndWriteBack
	if live && snap.Task != nil {
		t := *snap.Task
		s.task, s.taskResult = &t, snap.TaskResult
		if s.taskResult == taskResultWriting {
			s.taskResult = fmt.Sprintf("not known: antidrift stopped while ticking it off; look at the task in %s", t.Source)
		}
	}
	s.resetDriftLocked()
	for _, e := range exempt {
		s.drift.exempt[exemptKey(e.Class, e.Title)] = true
	}
	now := s.clock.Now()
	s.lastWall, s.lastMono, s.lastBoot = now, s.clock.Mono(), s.clock.Boot()
	if live {
		s.stats = replayed
		if s.state == StateActive {
			s.catchUpClockLocked(&w, snap, now)
		}
		if s.stats.isAway && s.state == StateActive {
			// Nobody knows whether the person is still away: count the
			// downtime as away and let the sources say so again.
			s.account(&w, FocusEvent{AtUnixMillis: now.UnixMilli(), Mark: MarkBack})
		}
		if counted == 0 {
			s.account(&w, FocusEvent{AtUnixMillis: s.startedAt.UnixMilli(), Reason: "the raw log of this session was missing"})
			if s.state == StateReview {
				s.account(&w, FocusEvent{AtUnixMillis: s.endedAt.UnixMilli(), Mark: MarkPause})
			}
		}
	}
	if s.state == StateActive {
		if now.Before(s.deadline) {
			s.armTimerLocked()
			s.armHoldLocked()
		} else {
			s.log.Info("session expired while the daemon was down", "session_id", s.sessionID)
			w.merge(s.toReviewLocked(OutcomeExpired, s.deadline)) // its "Time's up" too
		}
	}
	// Rewrite state.json only if recovery changed something: it is two
	// fsyncs on the way to owning the bus name, which bus activation waits for.
	if cur := s.snapshotLocked(); w.snapshot == nil && (len(w.events) > 0 || len(snap.Pending) > 0 || !sameSnapshot(*cur, snap)) {
		w.snapshot = cur
	} else if err := s.store.CheckWritable(); err != nil {
		// Nothing to save yet, but say now that nothing could be.
		s.problems.set("snapshot", fmt.Sprintf("The state directory cannot be written (%v); changes are kept in memory and saved once it can be.", err))
	}
	s.commit(w)
	s.checkChain(s.store.VerifyAudit())
	return nil
}

// catchUpClockLocked compares the clocks saved with snap with now's. In the
// same boot, a date set while the daemon was down is found as it is live.
// Across a reboot the boot clock started again, so the deadline can only
// be kept in wall time; the log says so.
func (s *Service) catchUpClockLocked(w *writes, snap Snapshot, now time.Time) {
	switch {
	case snap.ClockWallUnixMilli == 0:
	case snap.BootID == "" || snap.BootID != s.bootID:
		s.log.Info("the machine restarted since the session was saved: its deadline is kept in wall time until the next event, so a date set meanwhile is not noticed",
			"session_id", s.sessionID)
	default:
		elapsed := s.lastBoot - time.Duration(snap.ClockBootMillis)*time.Millisecond
		if jump := now.Sub(fromUnixMilli(snap.ClockWallUnixMilli)) - elapsed; jump > clockJump || jump < -clockJump {
			s.clockSetLocked(w, jump, now)
		}
	}
}

// sameSnapshot reports whether recovering a changed nothing b would record.
func sameSnapshot(a, b Snapshot) bool {
	a.Version, b.Version = SnapshotVersion, SnapshotVersion
	a.Pending, b.Pending = nil, nil
	a.AuditHead, b.AuditHead = nil, nil
	a.ClockWallUnixMilli, a.ClockBootMillis, a.BootID = 0, 0, ""
	b.ClockWallUnixMilli, b.ClockBootMillis, b.BootID = 0, 0, ""
	if len(a.AllowedClasses) == 0 && len(b.AllowedClasses) == 0 {
		a.AllowedClasses, b.AllowedClasses = nil, nil
	}
	return reflect.DeepEqual(a, b)
}

// Shutdown records that the daemon is stopping, so the downtime is not
// credited to the last window, and stops the deadline timer. The process
// is expected to exit after it.
func (s *Service) Shutdown() {
	defer func() {
		s.bgMu.Lock()
		s.bgStopped = true
		s.bgMu.Unlock()
		s.background.Wait()
	}()
	s.mu.Lock()
	s.stopTimerLocked()
	s.stopDriftTimersLocked()
	s.tabs.stopAll()
	// The last chance to make what is only in memory durable: a summary
	// that ended while the disk was full is saved and sealed now if it can be.
	w := writes{flushPending: true, snapshot: s.snapshotLocked()}
	if s.state == StateActive {
		// Stamped on the session's reckoning: a date set since the last
		// event is found by the next start, not credited to the window.
		s.account(&w, FocusEvent{AtUnixMillis: s.liveNowLocked().UnixMilli(), Reason: "daemon stopped"})
	}
	s.commit(w)
	s.logUnsealed()
	if s.nudges != nil {
		s.nudges.stop()
	}
}

// logUnsealed names, as the daemon stops, every summary still not in the
// audit chain: the log (the journal) is then a record of them even if no
// file could take them, and the save's error says where they were kept.
func (s *Service) logUnsealed() {
	s.io.Lock()
	defer s.io.Unlock()
	for _, p := range s.pending {
		whole, _ := json.Marshal(p)
		s.log.Error("stopping with an ended session not sealed into audit.jsonl; the next start seals it if state.json or pending.spare kept it, and this line is its copy",
			"session_id", p.SessionID, "summary", string(whole))
	}
}

// replay rebuilds a live session's stats from its raw log, streaming it
// through the same accounting the live events went through, and collects
// the windows marked not a distraction. It runs before the core's lock is
// taken: it is disk work, and nothing else runs yet.
func (s *Service) replay(snap Snapshot) (st *stats, counted int, exempt []FocusEvent) {
	st = newStats()
	if (snap.State != StateActive && snap.State != StateReview) || snap.SessionID == "" {
		return st, 0, nil
	}
	started, now := fromUnixMilli(snap.StartedUnixMilli), s.clock.Now()
	skipped := 0
	// A date set back during the session puts lines before its start, or
	// after now: the bounds widen by as much as it was set back.
	back := time.Duration(snap.ClockSetBackMillis) * time.Millisecond
	err := s.store.EachEvent(snap.SessionID, func(e FocusEvent) {
		// A line from outside the session's lifetime cannot be an event of
		// it (a damaged or foreign line): it would credit decades to a bucket.
		if at := fromUnixMilli(e.AtUnixMillis); at.Before(started.Add(-back-time.Second)) || at.After(now.Add(back+time.Minute)) {
			skipped++
			return
		}
		st.apply(e)
		counted++
		if e.Mark == MarkNotDistraction && len(exempt) < maxExempt {
			exempt = append(exempt, e)
		}
	})
	if err != nil {
		s.problems.set("replay", fmt.Sprintf("The raw log of session %s could not be read (%v); its time is counted as evidence unavailable.", snap.SessionID, err))
	}
	if skipped > 0 {
		s.problems.set("replay-"+snap.SessionID, fmt.Sprintf("%d line(s) of the raw log of session %s had times outside the session and were not counted; the file is left as it is.", skipped, snap.SessionID))
	}
	return st, counted, exempt
}
