package service

import (
	"fmt"
	"time"
)

// suspendJump is how far the wall clock must run ahead of the monotonic
// clock between two events to count as a suspend. It is well above any
// clock adjustment NTP makes by slewing, and well below a nap.
const suspendJump = 3 * time.Second

// SetAway records what one presence source says: the person went away
// (away) for reason, or came back. source names the source ("idle",
// "screensaver", "logind", "sleep") so two sources saying "locked" are
// kept apart: the person is away while any source says so.
//
// While away, time accrues to (away) — or (suspended) while the machine
// sleeps — never to the last window and never to drift, and drift
// drift, nudges and enforcement pause. Coming back resumes drift
// at once. The timebox keeps running: it is a commitment in wall time.
func (s *Service) SetAway(source string, reason AwayReason, away bool) {
	s.mu.Lock()
	var w writes
	now := s.tickLocked(&w)
	if away {
		s.presence[source] = reason
	} else {
		delete(s.presence, source)
	}
	if s.state == StateActive {
		s.syncAwayLocked(&w, now)
	}
	s.commitUnlocks(w)
}

// awayReasonLocked is why the person is away now, "" when present. Asleep
// wins over a break the desktop asked for, which wins over locked, which
// wins over idle: it names the strongest reason (a break is why the
// screen went dark or locked; sleep moves the time to (suspended)).
func (s *Service) awayReasonLocked() AwayReason {
	var best AwayReason
	rank := map[AwayReason]int{"": 0, AwayIdle: 1, AwayLocked: 2, AwayBreak: 3, AwaySuspended: 4}
	for _, r := range s.presence {
		if rank[r] > rank[best] {
			best = r
		}
	}
	return best
}

// syncAwayLocked makes the session's record of presence match the
// sources: it marks the raw log and pauses or resumes drift.
func (s *Service) syncAwayLocked(w *writes, now time.Time) {
	reason := s.awayReasonLocked()
	if reason == s.awayMarked {
		return
	}
	wasAway := s.awayMarked != ""
	s.awayMarked = reason
	if reason == "" {
		s.account(w, FocusEvent{AtUnixMillis: now.UnixMilli(), Mark: MarkBack})
		s.resumeLocked(w, now) // back at the desk: down the path again, the grace afresh
		return
	}
	s.account(w, FocusEvent{AtUnixMillis: now.UnixMilli(), Mark: MarkAway, Reason: reason})
	if !wasAway {
		s.endEpisodeLocked(w)
		s.closeNoticeLocked(w)
	}
}

// tickLocked reads the clock for an event and catches up with what
// happened since the last one: a suspend nobody announced (the boot clock
// ran ahead of the monotonic one) becomes (suspended) in the raw log; a
// date set meanwhile (the wall clock ran ahead of the boot clock, or
// behind) moves the deadline and the break-glass hold with it, so the
// timebox is neither cut short nor stretched, and is noted; and a
// deadline that passed while the machine slept (timers run on the
// monotonic clock, so they fire late) expires the session now.
func (s *Service) tickLocked(w *writes) time.Time {
	now, mono, boot := s.clock.Now(), s.clock.Mono(), s.clock.Boot()
	var jump time.Duration
	if s.state == StateActive && !s.lastWall.IsZero() {
		elapsed, awake := boot-s.lastBoot, mono-s.lastMono
		if slept := elapsed - awake; slept > suspendJump && s.awayMarked != AwaySuspended {
			// When in the gap the machine slept is unknown; the awake part
			// most likely came first (a lid closes some time after the last
			// focus change, and the first event after waking comes at once).
			s.markSuspendLocked(w, s.lastWall.Add(awake), s.lastWall.Add(elapsed))
		}
		jump = now.Sub(s.lastWall) - elapsed
	}
	// Before the jump is followed: its snapshot must hold this reading.
	s.lastWall, s.lastMono, s.lastBoot = now, mono, boot
	if jump > clockJump || jump < -clockJump {
		s.clockSetLocked(w, jump, now)
	}
	if s.state == StateActive && !now.Before(s.deadline) {
		s.log.Info("session expired", "session_id", s.sessionID, "state", StateReview)
		w.merge(s.toReviewLocked(OutcomeExpired, s.deadline))
	}
	return now
}

// clockJump is how far the wall clock must move against the boot clock
// between two events to count as set. NTP slews small errors and steps
// only large ones; a person setting the date moves it by minutes or more.
const clockJump = 2 * time.Second

// clockSetLocked follows a date set by jump: the deadline and the
// break-glass hold are wall times, so they move with it and the time left
// stays what the boot clock says. The raw log notes it (MarkClock) so the
// buckets, live and on replay, count the boot clock's time, not the jump.
func (s *Service) clockSetLocked(w *writes, jump time.Duration, now time.Time) {
	s.log.Warn("the wall clock was set during a session; the timebox runs on the boot clock and keeps its length",
		"session_id", s.sessionID, "jump", jump.Round(time.Millisecond))
	s.deadline = s.deadline.Add(jump)
	if jump < 0 {
		s.clockSetBack -= jump
	}
	if !s.breakGlassAt.IsZero() {
		s.breakGlassAt = s.breakGlassAt.Add(jump)
	}
	s.account(w, FocusEvent{AtUnixMillis: now.UnixMilli(), Mark: MarkClock, JumpMillis: jump.Milliseconds()})
	w.snapshot = s.snapshotLocked()
}

// liveNowLocked is the wall time as the session reckons it between events:
// the wall clock at the last event plus the boot clock's time since, so a
// date set since then moves no number a client reads (the next event
// notes the jump). Caller holds mu.
func (s *Service) liveNowLocked() time.Time {
	if s.lastWall.IsZero() {
		return s.clock.Now()
	}
	return s.lastWall.Add(s.clock.Boot() - s.lastBoot)
}

// markSuspendLocked records that the machine slept from start to end (and
// no later than the deadline: the timebox ended there).
func (s *Service) markSuspendLocked(w *writes, start, end time.Time) {
	if end.After(s.deadline) {
		end = s.deadline
	}
	if !end.After(start) {
		return
	}
	s.account(w, FocusEvent{AtUnixMillis: start.UnixMilli(), Mark: MarkAway, Reason: AwaySuspended})
	back := FocusEvent{AtUnixMillis: end.UnixMilli(), Mark: MarkBack}
	if s.awayMarked != "" {
		back = FocusEvent{AtUnixMillis: end.UnixMilli(), Mark: MarkAway, Reason: s.awayMarked}
	}
	s.account(w, back)
}

// awayDrift is the Drift reason while away.
func awayDrift(r AwayReason, idleAfter time.Duration) string {
	switch r {
	case AwayIdle:
		if idleAfter > 0 {
			return fmt.Sprintf("away: no input for %s", idleAfter)
		}
		return "away: no input"
	case AwayLocked:
		return "away: the screen is locked"
	case AwaySuspended:
		return "away: the machine is asleep"
	case AwayBreak:
		return "the desktop asked for a break; drift, nudges and enforcement wait until you are back"
	}
	return "away"
}

// SetBreakDue records what the desktop's break manager says: a break is
// due but the person is still working (GNOME Shell's ScreenTime state
// BREAK_DUE). It changes no accounting and no judgement; the view says it
// (DriftReason, BreakDue) so the person can take the break.
func (s *Service) SetBreakDue(due bool) {
	s.mu.Lock()
	if s.breakDue == due {
		s.mu.Unlock()
		return
	}
	s.breakDue = due
	s.commitUnlocks(writes{})
}
