package service

import (
	"context"
	"slices"
	"strings"
	"testing"
	"time"
)

// situation is one cell row of the permission table: a state, a level and
// what else the conditions look at.
type situation struct {
	name    string
	state   State
	level   Level
	outcome Outcome // in review
	broken  bool    // break-glass hold started and elapsed (active, locked)
}

func situations() []situation {
	out := []situation{
		{name: "locked", state: StateLocked},
	}
	for _, l := range Levels {
		out = append(out,
			situation{name: "planning/" + string(l), state: StatePlanning, level: l},
			situation{name: "active/" + string(l), state: StateActive, level: l},
			situation{name: "review-expired/" + string(l), state: StateReview, level: l, outcome: OutcomeExpired},
			situation{name: "review-completed/" + string(l), state: StateReview, level: l, outcome: OutcomeCompleted},
			situation{name: "review-abandoned/" + string(l), state: StateReview, level: l, outcome: OutcomeAbandoned},
		)
	}
	out = append(out, situation{name: "active/locked/break-glass-elapsed", state: StateActive, level: LevelLocked, broken: true})
	return out
}

// enter puts a fresh core into sit.
func enter(t *testing.T, sit situation) *harness {
	t.Helper()
	h := newHarness(t)
	switch sit.state {
	case StateLocked:
	case StatePlanning:
		must(t, h.Plan())
		must(t, h.SetEnforcement(string(sit.level)))
	default:
		h.start(t, sit.level)
		if sit.broken {
			_, err := h.BreakGlass("test")
			must(t, err)
			h.clock.Advance(5 * time.Minute)
		}
		switch sit.outcome {
		case OutcomeExpired:
			h.clock.Advance(25 * time.Minute)
		case OutcomeCompleted:
			must(t, h.Complete())
		case OutcomeAbandoned:
			h.Service.mu.Lock()
			w := h.toReviewLocked(OutcomeAbandoned, h.clock.Now())
			h.commit(w)
		}
	}
	return h
}

// calls invokes each method with valid arguments.
var calls = map[Method]func(h *harness) error{
	MethodPlan:       func(h *harness) error { return h.Plan() },
	MethodCancelPlan: func(h *harness) error { return h.CancelPlan() },
	MethodStart: func(h *harness) error {
		_, err := h.Start("next", "done", 60, "", nil)
		return err
	},
	MethodCoach: func(h *harness) error {
		// The sweep's core has no model: NoModel is the gate passed.
		_, err := h.Coach("next", "")
		if e, ok := err.(*Error); ok && e.Kind == NoModel {
			return nil
		}
		return err
	},
	MethodComplete: func(h *harness) error { return h.Complete() },
	MethodAbandon:  func(h *harness) error { return h.Abandon("") },
	MethodExtend:   func(h *harness) error { return h.Extend(60) },
	MethodEnd: func(h *harness) error {
		_, err := h.End()
		return err
	},
	MethodRefocus:        func(h *harness) error { return h.Refocus() },
	MethodAllow:          func(h *harness) error { return h.Allow("Terminal") },
	MethodSetEnforcement: func(h *harness) error { return h.SetEnforcement("warn") },
	MethodSetQuiet:       func(h *harness) error { return h.SetQuiet(true) },
	MethodBreakGlass: func(h *harness) error {
		_, err := h.BreakGlass("why")
		return err
	},
	MethodReviewProposals: func(h *harness) error { _, err := h.ReviewProposals(); return err },
	// A session with no evidence proposes nothing: permitted, the number
	// is then refused as an argument.
	MethodApplyProposal: func(h *harness) error {
		_, err := h.ApplyProposal(1)
		if e, ok := err.(*Error); ok && e.Kind == InvalidArgument {
			return nil
		}
		return err
	},
	MethodVerifyAudit:  func(h *harness) error { _, err := h.VerifyAudit(); return err },
	MethodHistory:      func(h *harness) error { _, err := h.History(0); return err },
	MethodReport:       func(h *harness) error { _, err := h.Report(0, 3600); return err },
	MethodReportDevice: func(h *harness) error { _, err := h.ReportDevice(0, 3600, "laptop"); return err },
	MethodReportFocus:  func(h *harness) error { return h.Permitted(MethodReportFocus) },
	MethodListTasks:    func(h *harness) error { return h.Permitted(MethodListTasks) },
	MethodStartTask: func(h *harness) error {
		_, err := h.StartTask(context.Background(), "taskwarrior:t1", "", 60, "", nil)
		return err
	},
	MethodCompleteKeepTask: func(h *harness) error { return h.CompleteKeepTask() },
	MethodFollowTask:       func(h *harness) error { return h.Permitted(MethodFollowTask) },
	MethodReportTab:        func(h *harness) error { return h.tab(BrowserFirefox, "https://example.com/", "Example", false) },
	MethodForgetTabs:       func(h *harness) error { return h.forget(BrowserFirefox) },
	MethodTabBlocked: func(h *harness) error {
		return h.TabBlocked(TabSource{Conn: hostConn(BrowserFirefox), Browser: BrowserFirefox}, 1)
	},
}

// want is the permission table, written out independently of the
// implementation's table.
func want(m Method, s situation) bool {
	st, lv := s.state, s.level
	switch m {
	case MethodPlan:
		return st == StateLocked
	case MethodCancelPlan:
		return st == StatePlanning
	case MethodStart, MethodStartTask, MethodCoach:
		return st == StateLocked || st == StatePlanning
	case MethodComplete, MethodRefocus, MethodCompleteKeepTask:
		return st == StateActive
	case MethodAbandon:
		return st == StateActive && (lv != LevelLocked || s.broken)
	case MethodExtend:
		return st == StateActive || (st == StateReview && s.outcome == OutcomeExpired)
	case MethodEnd, MethodReviewProposals, MethodApplyProposal:
		return st == StateReview
	case MethodAllow:
		return st == StateActive && lv != LevelLocked
	case MethodSetEnforcement: // the call lowers to warn
		return st == StatePlanning || (st == StateActive && lv != LevelLocked)
	case MethodBreakGlass:
		return st == StateActive && lv == LevelLocked
	case MethodSetQuiet:
		return st != StateReview
	case MethodVerifyAudit, MethodHistory, MethodReport, MethodReportDevice, MethodReportFocus, MethodListTasks, MethodFollowTask, MethodReportTab, MethodForgetTabs, MethodTabBlocked:
		return true
	}
	return false
}

func TestPermissionTableEveryCell(t *testing.T) {
	for _, sit := range situations() {
		for m, call := range calls {
			t.Run(sit.name+"/"+string(m), func(t *testing.T) {
				h := enter(t, sit)
				err := call(h)
				switch {
				case want(m, sit) && err != nil:
					t.Fatalf("refused, want permitted: %v", err)
				case !want(m, sit) && !isNotPermitted(err):
					t.Fatalf("got %v, want NotPermitted", err)
				case err != nil:
					msg := err.Error()
					for _, part := range []string{string(m) + " is not permitted", "retrying will not help", "What works now: "} {
						if !strings.Contains(msg, part) {
							t.Fatalf("refusal: got %q, want it to say %q", msg, part)
						}
					}
				}
			})
		}
	}
}

func TestEveryTableMethodIsCalledByTheSweep(t *testing.T) {
	for _, p := range permissions {
		if calls[p.method] == nil {
			t.Errorf("%s is in the permission table: got no call for it in the cell test, want one", p.method)
		}
	}
	if Classified("Selfdestruct") {
		t.Fatal(`Classified("Selfdestruct"): got true, want false (an unknown method is not classified)`)
	}
}

func TestUnclassifiedMethodIsRefusedEverywhere(t *testing.T) {
	h := newHarness(t)
	h.Service.mu.Lock()
	err := h.permit("Selfdestruct", "")
	h.Service.mu.Unlock()
	if err == nil || err.Kind != NotPermitted || !strings.Contains(err.Msg, "not in antidrift's permission table") {
		t.Fatalf("unclassified method: got %v, want NotPermitted saying it is not in antidrift's permission table", err)
	}
}

func TestRefusalListsWhatWorksNow(t *testing.T) {
	h := enter(t, situation{state: StateActive, level: LevelLocked})
	err := h.Abandon("")
	want := "What works now: Complete, CompleteKeepTask, Extend, Refocus, BreakGlass, SetEnforcement, SetQuiet, VerifyAudit, History, Report, ReportDevice, ListTasks."
	if err == nil || !strings.HasSuffix(err.Error(), want) {
		t.Fatalf("refusal %q\nwant suffix %q", err, want)
	}
	if !strings.Contains(err.Error(), "enforcement level locked") {
		t.Fatalf("refusal: got %q, want it to name %q", err, "enforcement level locked")
	}
}

func TestLockedLevelCanBeRaisedNotLowered(t *testing.T) {
	h := enter(t, situation{state: StateActive, level: LevelBlock})
	must(t, h.SetEnforcement("locked"))
	for _, l := range []string{"observe", "warn", "block"} {
		if err := h.SetEnforcement(l); !isNotPermitted(err) {
			t.Fatalf("lowering locked to %s: got %v, want NotPermitted", l, err)
		}
	}
	must(t, h.SetEnforcement("locked"))
}

// The View's Permitted is what the table permits now: a panel that greys
// out what is not in it offers exactly the calls that would succeed.
func TestViewPermittedIsWhatSucceeds(t *testing.T) {
	for _, sit := range situations() {
		h := enter(t, sit)
		permitted := h.View().Permitted
		for m := range calls {
			if m == MethodReportFocus || m == MethodReportTab || m == MethodForgetTabs || m == MethodTabBlocked || m == MethodFollowTask {
				if slices.Contains(permitted, string(m)) {
					t.Errorf("%s: Permitted: got %v, want it without %s, the compositor's call", sit.name, permitted, m)
				}
				continue
			}
			if got, want := slices.Contains(permitted, string(m)), permittedCall(m, sit); got != want {
				t.Errorf("%s: Permitted lists %s: got %v, want %v as the table says (Permitted %v)", sit.name, m, got, want, permitted)
			}
		}
	}
}

// permittedCall is want for a call with no argument: SetEnforcement's cell
// test lowers the level, while Permitted judges it for no target at all.
func permittedCall(m Method, s situation) bool {
	if m == MethodSetEnforcement {
		return s.state == StatePlanning || s.state == StateActive
	}
	return want(m, s)
}
