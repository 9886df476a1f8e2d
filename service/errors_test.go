package service

import (
	"errors"
	"reflect"
	"testing"
	"time"
)

func refusalOf(t *testing.T, err error) *Refusal {
	t.Helper()
	var e *Error
	if !errors.As(err, &e) || e.Kind != NotPermitted || e.Refusal == nil {
		t.Fatalf("got %v, want a NotPermitted with its data", err)
	}
	return e.Refusal
}

func faultOf(t *testing.T, err error) *Fault {
	t.Helper()
	var e *Error
	if !errors.As(err, &e) || e.Kind != InvalidArgument || e.Fault == nil {
		t.Fatalf("got %v, want an InvalidArgument with its data", err)
	}
	return e.Fault
}

// A refusal carries, as data, what its message says: a client can act on
// it without reading the sentence.
func TestRefusalsCarryWhatTheySay(t *testing.T) {
	h := newHarness(t)
	if got, want := refusalOf(t, h.Complete()), (&Refusal{Method: MethodComplete, State: StateLocked, Because: BecauseState,
		WorksIn: []State{StateActive}, Permitted: []Method{MethodPlan, MethodStart, MethodStartTask, MethodCoach, MethodSetQuiet, MethodVerifyAudit, MethodHistory, MethodReport, MethodReportDevice, MethodListTasks}}); !reflect.DeepEqual(got, want) {
		t.Errorf("Complete with no session:\n got %+v,\nwant %+v", got, want)
	}
	h.start(t, LevelLocked)
	if r := refusalOf(t, h.Abandon("")); r.Because != BecauseLocked || r.Level != LevelLocked || r.State != StateActive {
		t.Errorf("Abandon at locked: got %+v, want because locked, at level locked, active", r)
	}
	if _, err := h.BreakGlass("need to go"); err != nil {
		t.Fatal(err)
	}
	h.clock.Advance(time.Minute)
	if r := refusalOf(t, h.Abandon("")); r.Because != BecauseHold || r.HoldLeft != 4*60 {
		t.Errorf("Abandon during the hold: got %+v, want because hold with 240 s left", r)
	}
	if r := refusalOf(t, h.Allow("Gimp")); r.Because != BecauseWidening {
		t.Errorf("Allow at locked: got because %q, want %q", r.Because, BecauseWidening)
	}
	if r := refusalOf(t, h.SetEnforcement("observe")); r.Because != BecauseLowering {
		t.Errorf("lowering at locked: got because %q, want %q", r.Because, BecauseLowering)
	}
	must(t, h.Complete())
	if r := refusalOf(t, h.Extend(60)); r.Because != BecauseOutcome || r.Outcome != OutcomeCompleted {
		t.Errorf("Extend a completed session: got %+v, want because outcome, completed", r)
	}
}

// An argument's refusal names the argument, the rule, what it got and the
// limit, as data.
func TestFaultsCarryWhatTheySay(t *testing.T) {
	h := newHarness(t)
	_, err := h.Start("x", "y", 90000, "", nil)
	if got, want := faultOf(t, err), (&Fault{Argument: "timebox_secs", Rule: RuleTimebox, Got: uint64(90000), Limit: 86400}); !reflect.DeepEqual(got, want) {
		t.Errorf("a 25h timebox:\n got %+v,\nwant %+v", got, want)
	}
	_, err = h.Start("x", "y", 60, "", []string{"Emacs", "firefox:"})
	if f := faultOf(t, err); f.Argument != "allowed_classes" || f.Entry != 2 || f.Rule != RuleEntry || f.Got != "firefox:" {
		t.Errorf("a bad second entry: got %+v, want allowed_classes entry 2, rule entry, got firefox:", f)
	}
	h.start(t, LevelWarn)
	if got, want := faultOf(t, h.Extend(24*3600)), (&Fault{Argument: "secs", Rule: RuleTimeboxTotal, Got: uint64(24 * 3600), Limit: 86400, Total: 24*3600 + 25*60}); !reflect.DeepEqual(got, want) {
		t.Errorf("extending past 24 h:\n got %+v,\nwant %+v", got, want)
	}
}
