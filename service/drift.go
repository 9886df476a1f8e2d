package service

import (
	"context"
	"errors"
	"fmt"
	"strings"
	"time"
)

// enforceTimeout bounds one enforcement (iconify, then activate), so a
// wedged X server never holds anything up for long.
const enforceTimeout = 2 * time.Second

// maxCachedVerdicts bounds the verdict cache, so a session that sees
// thousands of titles keeps flat memory: past it the cache starts over.
const maxCachedVerdicts = 1000

// judging is the reason a window reads while a slow judge thinks about it.
const judging = "judging…"

// drift is the judgement of the current window while a session is active.
// It lives under the core's lock with the rest of the state.
type drift struct {
	cache   map[judgeKey]Verdict // the judge port's, per class, instance and scrubbed title, for this session
	verdict Verdict              // of the current window
	// exempt are the windows (lower-cased class, scrubbed title) the person
	// said are not a distraction, for the rest of the session.
	exempt   map[judgeKey]bool
	focusAt  time.Time // when the current window got focus: grace runs from here
	episode  uint64    // bumps on every off-task episode; timers must match
	offSince time.Time // start of the off-task episode; zero when on task
	drifting bool      // the episode outlasted the grace
	graceDue bool      // the grace ran out while the browser window waited for its tab report
	// tabsBlocked: this session had a browser's extension block a tab,
	// to be restored when the active phase ends.
	tabsBlocked bool
	grace       Timer
	repeat      Timer
	onTask      Window // the last on-task window of the session, for refocus
	// noticeUp says a drift nudge is on screen. enforced says this episode
	// ended with our iconify: its nudge stays up, because it explains where
	// the window went and still offers "Allow".
	noticeUp bool
	enforced bool
}

// judgeKey is what a verdict depends on besides the rules: the window's
// class, instance and scrubbed, redacted title, and the site in front as
// the judge is told it (judgeSite).
type judgeKey struct{ class, instance, title, site string }

func (s *Service) keyOfWindow(w Window) judgeKey {
	return judgeKey{class: w.Class, instance: w.Instance, title: FoldTitle(w.Title), site: s.judgeSite(w.Site)}
}

// judgeSite is what the model judge is told of a site: its host, and its
// path only when the person opted in (judge_site_paths).
func (s *Service) judgeSite(site string) string {
	if s.judgePaths {
		return site
	}
	return SiteHost(site)
}

// exemptKey is how a "not a distraction" window is remembered.
func exemptKey(class, title string) judgeKey {
	return judgeKey{class: strings.ToLower(class), title: title}
}

// resetDriftLocked forgets all judgement (a new session, or none).
func (s *Service) resetDriftLocked() {
	s.stopDriftTimersLocked()
	s.drift = drift{cache: map[judgeKey]Verdict{}, exempt: map[judgeKey]bool{}}
}

func (s *Service) stopDriftTimersLocked() {
	for _, t := range []*Timer{&s.drift.grace, &s.drift.repeat} {
		if *t != nil {
			(*t).Stop()
			*t = nil
		}
	}
}

// judgeLocked judges the current window: by the rules, then by the
// judge port for what no rule decides. It answers Unknown when there is
// nothing to judge by, and "judging…" until a slow judge's verdict arrives
// (lateVerdict applies it). The rules are asked every time (they are
// cheap, and change with Allow); the judge's on and off verdicts are cached
// for the session, its unknown ones are not, so a judge that failed is
// asked again.
func (s *Service) judgeLocked() Verdict {
	win := s.window
	if !win.Available {
		return Verdict{Task: TaskUnknown, Reason: "evidence unavailable: " + win.Reason}
	}
	key := s.keyOfWindow(win)
	if v, ok := s.rulesLocked(win, key.title); ok {
		return v
	}
	if s.judge == nil {
		return s.undecidedLocked(win)
	}
	if v, ok := s.drift.cache[key]; ok {
		return v
	}
	id := s.sessionID
	q := Question{NextAction: s.nextAction, SuccessCondition: s.successCond, Class: displayClass(win), Title: key.title, Site: key.site}
	v, ok := s.judge.Judge(q, func(v Verdict) { s.lateVerdict(id, key, v) })
	if !ok {
		return Verdict{Task: TaskUnknown, Reason: judging}
	}
	v.Reason = cleanReason(v.Reason)
	s.cacheLocked(key, v)
	return v
}

func (s *Service) cacheLocked(key judgeKey, v Verdict) {
	if v.Task == TaskUnknown {
		return
	}
	if len(s.drift.cache) >= maxCachedVerdicts {
		clear(s.drift.cache)
	}
	s.drift.cache[key] = v
}

// rejudgeLocked judges the unchanged current window again after the rules
// changed (Allow, "not a distraction"), recording a changed verdict.
func (s *Service) rejudgeLocked(w *writes, now time.Time) {
	if v := s.judgeLocked(); v != s.drift.verdict {
		s.recordVerdictLocked(w, v, now)
	}
	if s.drift.offSince.IsZero() {
		s.closeNoticeLocked(w) // it offered to allow what is now allowed
	}
}

// lateVerdict applies a slow judge's verdict on window key: always to the
// cache, and to the drift state only while that window is still the
// current one and still unjudged (no rule decided it meanwhile), through
// the same path a synchronous verdict takes, so drift is confirmed, nudged
// and enforced alike. An unknown verdict (the judge failed) leaves the
// window unjudged, so the judge's retry still lands.
func (s *Service) lateVerdict(id string, key judgeKey, v Verdict) {
	v.Reason = cleanReason(v.Reason)
	s.mu.Lock()
	if s.state != StateActive || s.sessionID != id {
		s.mu.Unlock()
		return
	}
	s.cacheLocked(key, v)
	if !s.window.Available || s.keyOfWindow(s.window) != key || s.drift.verdict.Task != TaskUnknown || v == s.drift.verdict {
		s.mu.Unlock() // the person moved on, or a rule decided; the cache still learned
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
	s.commit(w)
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
		note, about := s.driftNotification(class), nudgeAbout{class, FoldTitle(win.Title)}
		w.effects = append(w.effects, func() { s.nudges.showDrift(about, note) })
		s.drift.noticeUp = true
	}
	s.armRepeatLocked()
	if (s.level == LevelBlock || s.level == LevelLocked) && s.blockTabLocked(w, win) {
		s.drift.enforced = true
		return
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
		note, about := s.driftNotification(class), nudgeAbout{class, FoldTitle(s.window.Title)}
		w.effects = append(w.effects, func() { s.nudges.showDrift(about, note) })
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
		n.Actions = append(n.Actions, Action{Key: "allow", Label: "Allow " + class}, Action{Key: "not_distraction", Label: "Not a distraction"})
		hint += fmt.Sprintf(", or `antidrift allow %s` to allow it", shellWord(LiteralRule(class)))
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
// window, unless that is the same window.
func (s *Service) enforce(id string, target, back Window) {
	s.onGuard(func(ctx context.Context) {
		if err := s.guard.MinimizeWindow(ctx, target.ID); err != nil {
			if !errors.Is(err, ErrNotActive) {
				s.log.Warn("iconifying the drifting window failed", "session_id", id, "class", target.Class, "err", err)
			}
			return
		}
		s.recordMinimize(id)
		// The last on-task window may be this very window under an on-task
		// title (a browser tab that turned into a distraction): raising it
		// again would undo the iconify.
		if back.ID != "" && back.ID != target.ID {
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
// judges: Refocus, Allow (also "Not a distraction", which widens the
// session as Allow does), Complete or Extend.
func (s *Service) NotificationAction(id uint32, key string) {
	if s.nudges == nil {
		return
	}
	kind, about := s.nudges.whose(id)
	var err error
	switch {
	case kind == "drift" && key == "refocus":
		err = s.Refocus()
	case kind == "drift" && key == "allow":
		err = s.Allow(LiteralRule(about.class))
	case kind == "drift" && key == "not_distraction":
		err = s.notDistraction(about.class, about.title)
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

// maxExempt bounds the windows one session may mark "not a distraction".
const maxExempt = 1000

// notDistraction is the nudge's "Not a distraction": the window it is about
// (its class and scrubbed title) counts as on task for the rest of the
// session. It widens the session as Allow does, so Allow's entry in the
// permission table judges it (and locked refuses it). The raw log records
// it, so a restarted daemon replays the same exemption and judges alike.
func (s *Service) notDistraction(class, title string) error {
	return s.widen(func(w *writes, now time.Time) *Error {
		k := exemptKey(class, title)
		switch {
		case s.drift.exempt[k]:
			return nil
		case len(s.drift.exempt) >= maxExempt:
			return invalid("this session already has %d windows marked not a distraction, the most there can be; allow the class instead", maxExempt)
		}
		s.drift.exempt[k] = true
		s.account(w, FocusEvent{AtUnixMillis: now.UnixMilli(), Mark: MarkNotDistraction, Class: class, Title: title})
		s.rejudgeLocked(w, now)
		return nil
	})
}
