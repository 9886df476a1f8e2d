package service

import "time"

// A window's verdict, top to bottom. Every window the sensor reports takes
// one path through the core, each step in the file named for it, none
// calling back into an earlier one:
//
//  1. enters (entrance.go: RecordWindow, and a tab report through
//     refreshWindowUnlocks), made private there (privacy.go): a private
//     class loses its title, redactions are applied, nothing after this
//     sees more; then given the site its browser's tab report says is in
//     front, or held until that report comes (tabs.go);
//  2. keyed (verdictkey.go): class, instance, folded title and the site as
//     the judge hears it, what every verdict depends on besides the rules;
//  3. decided by the person's rules (ruleverdict.go): "not a distraction",
//     the distractions, the session's allowed entries; with no judge, the
//     allowlist's default decides the rest;
//  4. decided by the judge (judge.go): the verdict it gave this window
//     earlier in the session, or what it answers when asked now;
//  5. accounted (account.go): the focus event, with its verdict, goes to
//     the live stats and the raw log;
//  6. applied (applyverdict.go): the drift episode starts or ends, and
//     drift that outlasts its grace is nudged and enforced.
//
// The window is accounted before its verdict is applied because the raw
// log records what happened in order: the focus, then what its verdict
// caused (a blocked tab's mark), and replay reads it so.
//
// "Judge" means one thing here: what sits behind the Judge port (the
// model). The core decides a verdict; the judge is one way to reach it.

// observeLocked takes the current window, as of now, down the path. Caller
// holds mu and a session is active. While the window waits for its tab
// report (tabs.pending) it is accounted under the verdict it had but not
// decided yet: the browser's title and its extension's report arrive in
// either order, and a browser window between the two is neither its old
// page nor its new one.
func (s *Service) observeLocked(w *writes, now time.Time) {
	s.drift.focusAt = now
	if s.tabs.waiting() {
		s.accountFocusLocked(w, s.drift.verdict, now)
		return
	}
	v := s.verdictLocked()
	s.accountFocusLocked(w, v, now)
	s.applyVerdictLocked(w, v, now)
}

// verdictLocked decides the current window: steps 2 to 4 of the path (it
// was made private where it entered). It answers Unknown when there is
// nothing to decide by, and "judging…" until a slow judge's verdict
// arrives (lateVerdict takes that on from step 5). The rules are asked
// every time: they are cheap, and change with Allow.
func (s *Service) verdictLocked() Verdict {
	win := s.window
	if !win.Available {
		return Verdict{Task: TaskUnknown, Reason: "evidence unavailable: " + win.Reason}
	}
	key := s.verdictKeyOf(win)
	if v, ok := s.ruleVerdictLocked(win, key); ok {
		return v
	}
	if s.judge == nil {
		return s.allowlistVerdictLocked(win)
	}
	id := s.sessionID
	return s.judgeVerdictLocked(win, key, func(v Verdict) { s.lateVerdict(id, key, v) })
}

// redecideLocked decides the unchanged current window again after the
// rules changed (Allow, "not a distraction"), recording a changed verdict.
func (s *Service) redecideLocked(w *writes, now time.Time) {
	if v := s.verdictLocked(); v != s.drift.verdict {
		s.recordVerdictLocked(w, v, now)
	}
	if s.drift.offSince.IsZero() {
		s.closeNoticeLocked(w) // it offered to allow what is now allowed
	}
}

// lateVerdict is a slow judge's verdict on window key, arriving after
// verdictLocked answered "judging…": the judge always remembers it, and
// it goes on down the path only while that window is still the current
// one and still undecided (no rule decided it meanwhile), the same way a
// verdict at once does, so drift is confirmed, nudged and enforced alike.
// An unknown verdict (the judge failed) leaves the window undecided, so
// the judge's retry still lands.
func (s *Service) lateVerdict(id string, key verdictKey, v Verdict) {
	s.mu.Lock()
	if s.state != StateActive || s.sessionID != id {
		s.mu.Unlock()
		return
	}
	v = s.rememberJudgedLocked(key, v)
	if !s.window.Available || s.verdictKeyOf(s.window) != key || s.drift.verdict.Task != TaskUnknown || v == s.drift.verdict {
		s.mu.Unlock() // the person moved on, or a rule decided; the judge still learned
		return
	}
	var w writes
	now := s.tickLocked(&w)
	if s.state == StateActive {
		s.recordVerdictLocked(&w, v, now)
	}
	s.commitUnlocks(w)
}

// resumeLocked takes the unchanged current window down the path again when
// the person is back at the desk (drift paused while away): its grace
// starts afresh, a browser window between two pages waits for its tab
// report as it would on arrival (that report, or tabSettle, decides it),
// and a verdict other than the one it had is accounted (MarkVerdict)
// before it is applied, so the live off-task flag and the drift state
// agree.
func (s *Service) resumeLocked(w *writes, now time.Time) {
	s.drift.focusAt = now
	if s.tabs.waiting() {
		return
	}
	v := s.verdictLocked()
	if v != s.drift.verdict {
		s.accountVerdictLocked(w, v, now)
	}
	s.applyVerdictLocked(w, v, now)
}

// recordVerdictLocked takes a new verdict on the unchanged current window
// through steps 5 and 6: the raw log records it, so replay splits drift
// time the same way, and the drift state moves.
func (s *Service) recordVerdictLocked(w *writes, v Verdict, now time.Time) {
	s.accountVerdictLocked(w, v, now)
	s.applyVerdictLocked(w, v, now)
}
