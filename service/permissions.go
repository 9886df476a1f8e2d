package service

import (
	"strings"
	"time"
)

// Method names a call a client can make on the core. The names are the
// D-Bus method names of org.antidrift.Session1.
type Method string

const (
	MethodPlan           Method = "Plan"
	MethodCancelPlan     Method = "CancelPlan"
	MethodStart          Method = "Start"
	MethodCoach          Method = "Coach"
	MethodComplete       Method = "Complete"
	MethodAbandon        Method = "Abandon"
	MethodExtend         Method = "Extend"
	MethodEnd            Method = "End"
	MethodRefocus        Method = "Refocus"
	MethodAllow          Method = "Allow"
	MethodSetEnforcement Method = "SetEnforcement"
	MethodSetQuiet       Method = "SetQuiet"
	MethodBreakGlass     Method = "BreakGlass"
	MethodVerifyAudit    Method = "VerifyAudit"
	MethodHistory        Method = "History"
	// The review (review.go): its proposals, and applying one.
	MethodReviewProposals Method = "ReviewProposals"
	MethodApplyProposal   Method = "ApplyProposal"

	// The session's task (#39): docs/tasks.md.
	MethodListTasks        Method = "ListTasks"
	MethodStartTask        Method = "StartTask"
	MethodCompleteKeepTask Method = "CompleteKeepTask"
	MethodFollowTask       Method = "FollowTask"

	// MethodReportFocus is org.antidrift.Evidence1.ReportFocus: a
	// compositor-side helper (the KWin script, the GNOME Shell extension)
	// reporting the focused window.
	MethodReportFocus Method = "ReportFocus"
	MethodReport      Method = "Report"
	// MethodReportDevice is Report narrowed to one machine: a method of
	// its own, so Report's signature stays what clients call.
	MethodReportDevice Method = "ReportDevice"

	// MethodReportTab and MethodForgetTabs are org.antidrift.Evidence1's
	// ReportTab and ForgetTabs: a browser's native host reporting the active
	// tab of the browser's focused window, or that the browser is gone.
	MethodReportTab  Method = "ReportTab"
	MethodForgetTabs Method = "ForgetTabs"
	// MethodTabBlocked is Evidence1.TabBlocked: a native host relaying its
	// extension's confirmation of a tab block.
	MethodTabBlocked Method = "TabBlocked"
)

// What each state permits, and at which enforcement level.
//
// **An allowlist, not a denylist.** A method nobody classified here is
// refused in every state: a new method is broken until someone decides
// where it belongs, which is loud and caught by the sweep test in dbusapi,
// rather than permitted everywhere until someone remembers the locked level.
//
// The membership criterion, so entries are decided rather than argued:
// **a method is permitted in a state when it is a step the person can take
// from there without breaking the commitment they made.** Before Start
// nothing is committed; while active, anything that ends, relaxes or widens
// the session early is a way out of the commitment, and the locked level is
// the person's own earlier decision that there is no way out before the
// deadline except the break-glass hold.
var permissions = []struct {
	method Method
	states []State
	// only, when set, is a further condition; it returns the condition
	// that refuses the call ("" to permit). It sees the call's target level
	// for the one method whose answer depends on its argument
	// (SetEnforcement).
	only func(s *Service, target Level) Because
	// source marks a call only an evidence source makes: it is left out of
	// the "what works now" a refusal offers a person.
	source bool
}{
	// ── Committing. The way in. ─────────────────────────────────────────
	// Planning is optional: Start works straight from locked, because a
	// person who already knows the next action should not be made to click
	// through a state that only exists for those who don't.
	{method: MethodPlan, states: []State{StateLocked}},
	{method: MethodCancelPlan, states: []State{StatePlanning}},
	{method: MethodStart, states: []State{StateLocked, StatePlanning}},
	// Starting from a task is Start with the task's title as next action;
	// following a task is the task manager saying it started (Start), was
	// stopped or deleted (Abandon) or done (Complete): each of those is
	// permitted again by its own row when it happens, so FollowTask asks
	// nothing more of the state here.
	{method: MethodStartTask, states: []State{StateLocked, StatePlanning}},
	{method: MethodFollowTask, states: States, source: true},
	// The coach only proposes: nothing is committed until Start, so it is
	// asked where Start works (from locked it plans, as Plan does).
	{method: MethodCoach, states: []State{StateLocked, StatePlanning}},

	// ── Ending the active phase. ────────────────────────────────────────
	// Complete is the success path and is always open while active: being
	// done early is the point, not a loophole.
	{method: MethodComplete, states: []State{StateActive}},
	{method: MethodCompleteKeepTask, states: []State{StateActive}},
	// Abandon is the way out, so locked closes it until the deadline or an
	// elapsed break-glass hold. (Past the deadline the session is in review,
	// but the condition is stated in full so it holds on its own.)
	{method: MethodAbandon, states: []State{StateActive}, only: abandonAllowed},
	// End seals the summary; only a reviewed session has one to seal.
	{method: MethodEnd, states: []State{StateReview}},

	// ── Committing more, never less. ────────────────────────────────────
	// Extend adds time, which tightens the commitment, so even locked
	// permits it. From review it only revives an expired session: a
	// completed or abandoned one was ended by the person on purpose.
	{method: MethodExtend, states: []State{StateActive, StateReview}, only: extendAllowed},
	// Refocus is going back to work: never worth refusing while active.
	{method: MethodRefocus, states: []State{StateActive}},
	// BreakGlass only means something where the glass is: at locked.
	{method: MethodBreakGlass, states: []State{StateActive}, only: breakGlassAllowed},

	// ── Relaxing or widening. ───────────────────────────────────────────
	// Allowing a class widens the session; locked forbids widening.
	{method: MethodAllow, states: []State{StateActive}, only: notWideningAtLocked},
	// Raising the level is always fine; lowering it relaxes the session,
	// which locked forbids. In planning nothing is committed yet, so the
	// planned level may go up and down freely.
	{method: MethodSetEnforcement, states: []State{StateActive, StatePlanning}, only: setEnforcementAllowed},
	// Quiet keeps other apps from interrupting; it is no part of the
	// commitment (nothing is enforced by it), so the person may choose it
	// before Start (locked too: Start works straight from locked) and turn
	// it on or off while active.
	{method: MethodSetQuiet, states: []State{StateLocked, StatePlanning, StateActive}},

	// ── The review. ─────────────────────────────────────────────────────
	// Proposals come from the reviewed session's evidence, so they exist
	// only in review. Applying one changes the person's rules for the
	// sessions to come, never the one committed to (it is over), so every
	// level permits it.
	{method: MethodReviewProposals, states: []State{StateReview}},
	{method: MethodApplyProposal, states: []State{StateReview}},

	// ── Reads of the sealed past. Change nothing, so every state. ───────
	{method: MethodVerifyAudit, states: States},
	{method: MethodHistory, states: States},
	{method: MethodReport, states: States},
	{method: MethodReportDevice, states: States},
	// Listing tasks reads the task managers, changing nothing.
	{method: MethodListTasks, states: States},

	// ── Evidence from the compositor. ───────────────────────────────────
	// Which window has focus is a fact, not a step of the person's, so
	// every state takes it (the core accounts it only while active). Who
	// may report it is not a question of state: dbusapi believes only the
	// connection that owns the compositor's bus name.
	{method: MethodReportFocus, states: States, source: true},
	// A browser's tab is evidence too: dbusapi believes it only from a
	// native host a browser started, and the core only for the window the
	// compositor says has focus, when its title fits (docs/evidence.md).
	{method: MethodReportTab, states: States, source: true},
	{method: MethodForgetTabs, states: States, source: true},
	{method: MethodTabBlocked, states: States, source: true},
}

// Classified reports whether the permission table has an entry for name.
// The sweep test asks this for every method of the exported interface.
func Classified(name string) bool {
	for _, p := range permissions {
		if string(p.method) == name {
			return true
		}
	}
	return false
}

func abandonAllowed(s *Service, _ Level) Because {
	switch {
	case s.level != LevelLocked:
		return ""
	case s.breakGlassElapsed():
		return ""
	case !s.deadline.IsZero() && !s.liveNowLocked().Before(s.deadline):
		return ""
	case s.breakGlassAt.IsZero():
		return BecauseLocked
	default:
		return BecauseHold
	}
}

func extendAllowed(s *Service, _ Level) Because {
	if s.state == StateReview && s.outcome != OutcomeExpired {
		return BecauseOutcome
	}
	return ""
}

func breakGlassAllowed(s *Service, _ Level) Because {
	if s.level != LevelLocked {
		return BecauseNotLocked
	}
	return ""
}

func notWideningAtLocked(s *Service, _ Level) Because {
	if s.level == LevelLocked {
		return BecauseWidening
	}
	return ""
}

func setEnforcementAllowed(s *Service, target Level) Because {
	if s.state == StateActive && s.level == LevelLocked && target != "" && target.rank() < LevelLocked.rank() {
		return BecauseLowering
	}
	return ""
}

// Permitted answers whether m may run now, for calls the core does not
// serve itself (ReportFocus goes to the evidence source, which reports the
// window through RecordWindow). nil means permitted.
func (s *Service) Permitted(m Method) error {
	s.mu.Lock()
	defer s.mu.Unlock()
	if err := s.permit(m, ""); err != nil {
		return err
	}
	return nil
}

// permit answers whether m may run now. It is the only gate: every method
// of the core calls it first, under the lock. The refusal says it is the
// state refusing, that retrying will not help, and what works now.
func (s *Service) permit(m Method, target Level) *Error {
	for _, p := range permissions {
		if p.method != m {
			continue
		}
		if !containsState(p.states, s.state) {
			return s.refuse(m, BecauseState, p.states)
		}
		if p.only != nil {
			if why := p.only(s, target); why != "" {
				return s.refuse(m, why, nil)
			}
		}
		return nil
	}
	return s.refuse(m, BecauseUnclassified, nil)
}

// refuse is the refusal of m for the reason why, with what the session
// looks like now; worksIn is where m works, for BecauseState.
func (s *Service) refuse(m Method, why Because, worksIn []State) *Error {
	r := &Refusal{Method: m, State: s.state, Because: why, WorksIn: worksIn, Permitted: s.permittedMethods()}
	if s.state != StateLocked {
		r.Level = s.level
	}
	switch why {
	case BecauseOutcome:
		r.Outcome = s.outcome
	case BecauseHold:
		r.HoldLeft = uint64(s.breakGlassRemaining().Round(time.Second) / time.Second)
	}
	return r.err()
}

// permittedNow lists, in table order, the methods the current state and
// level permit (argument-dependent conditions checked for no argument).
func (s *Service) permittedNow() []string {
	var out []string
	for _, m := range s.permittedMethods() {
		out = append(out, string(m))
	}
	return out
}

func (s *Service) permittedMethods() []Method {
	var out []Method
	for _, p := range permissions {
		if !p.source && containsState(p.states, s.state) && (p.only == nil || p.only(s, "") == "") {
			out = append(out, p.method)
		}
	}
	return out
}

func containsState(list []State, st State) bool {
	for _, x := range list {
		if x == st {
			return true
		}
	}
	return false
}

func joinStates(list []State) string {
	if len(list) == len(States) {
		return "in any state"
	}
	parts := make([]string, len(list))
	for i, x := range list {
		parts[i] = x.phrase()
	}
	return strings.Join(parts, " or ")
}
