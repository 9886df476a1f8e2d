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
// judgement, nudges and enforcement pause. Coming back resumes judgement
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
	s.commit(w)
}

// awayReasonLocked is why the person is away now, "" when present. Asleep
// wins over locked, which wins over idle: it names the strongest reason.
func (s *Service) awayReasonLocked() AwayReason {
	var best AwayReason
	rank := map[AwayReason]int{"": 0, AwayIdle: 1, AwayLocked: 2, AwaySuspended: 3}
	for _, r := range s.presence {
		if rank[r] > rank[best] {
			best = r
		}
	}
	return best
}

// syncAwayLocked makes the session's record of presence match the
// sources: it marks the raw log and pauses or resumes judgement.
func (s *Service) syncAwayLocked(w *writes, now time.Time) {
	reason := s.awayReasonLocked()
	if reason == s.awayMarked {
		return
	}
	wasAway := s.awayMarked != ""
	s.awayMarked = reason
	if reason == "" {
		s.account(w, FocusEvent{AtUnixMillis: now.UnixMilli(), Mark: MarkBack})
		s.drift.focusAt = now // back at the desk: the grace starts afresh
		s.applyVerdictLocked(w, s.judgeLocked(), now)
		return
	}
	s.account(w, FocusEvent{AtUnixMillis: now.UnixMilli(), Mark: MarkAway, Reason: reason})
	if !wasAway {
		s.endEpisodeLocked(w)
		s.closeNoticeLocked(w)
	}
}

// tickLocked reads the clock for an event and catches up with what
// happened since the last one: a suspend nobody announced (the wall clock
// ran ahead of the monotonic one) becomes (suspended) in the raw log, and
// a deadline that passed while the machine slept (timers run on the
// monotonic clock, so they fire late) expires the session now.
func (s *Service) tickLocked(w *writes) time.Time {
	now, mono := s.clock.Now(), s.clock.Mono()
	if s.state == StateActive && !s.lastWall.IsZero() {
		awake := mono - s.lastMono
		if slept := now.Sub(s.lastWall) - awake; slept > suspendJump && s.awayMarked != AwaySuspended {
			// When in the gap the machine slept is unknown; the awake part
			// most likely came first (a lid closes some time after the last
			// focus change, and the first event after waking comes at once).
			s.markSuspendLocked(w, s.lastWall.Add(awake), now)
		}
	}
	s.lastWall, s.lastMono = now, mono
	if s.state == StateActive && !now.Before(s.deadline) {
		s.log.Info("session expired", "session_id", s.sessionID, "state", StateReview)
		w.merge(s.toReviewLocked(OutcomeExpired, s.deadline))
	}
	return now
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
	}
	return "away"
}
