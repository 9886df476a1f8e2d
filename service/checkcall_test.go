package service

import (
	"errors"
	"reflect"
	"strings"
	"testing"
)

// CheckCall, which a client asks before calling, finds the Fault the
// method itself answers, for every argument a client can get wrong
// without any state: one set of rules, not a copy that may drift.
func TestCheckCallFindsWhatTheMethodRefuses(t *testing.T) {
	long, huge := strings.Repeat("a", MaxTextLen+1), strings.Repeat("a", 100<<10)
	many := make([]string, MaxAllowed+1)
	for i := range many {
		many[i] = "C" + strings.Repeat("x", i)
	}
	for _, c := range []struct {
		m    Method
		args []any
		call func(h *harness) error
	}{
		{MethodStart, []any{long, "y", uint64(60), "", []string{}}, func(h *harness) error { _, err := h.Start(long, "y", 60, "", nil); return err }},
		{MethodStart, []any{"x", huge, uint64(60), "", []string{}}, func(h *harness) error { _, err := h.Start("x", huge, 60, "", nil); return err }},
		{MethodStart, []any{"x", "y", uint64(0), "", []string{}}, func(h *harness) error { _, err := h.Start("x", "y", 0, "", nil); return err }},
		{MethodStart, []any{"x", "y", uint64(60), "hard", []string{}}, func(h *harness) error { _, err := h.Start("x", "y", 60, "hard", nil); return err }},
		{MethodStart, []any{"x", "y", uint64(60), "", []string{"ok", huge}}, func(h *harness) error { _, err := h.Start("x", "y", 60, "", []string{"ok", huge}); return err }},
		{MethodStart, []any{"x", "y", uint64(60), "", many}, func(h *harness) error { _, err := h.Start("x", "y", 60, "", many); return err }},
		{MethodAbandon, []any{huge}, func(h *harness) error { return h.Abandon(huge) }},
		{MethodBreakGlass, []any{" "}, func(h *harness) error { _, err := h.BreakGlass(" "); return err }},
		{MethodAllow, []any{"firefox:"}, func(h *harness) error { return h.Allow("firefox:") }},
		{MethodExtend, []any{uint64(0)}, func(h *harness) error { return h.Extend(0) }},
		{MethodSetEnforcement, []any{"hard"}, func(h *harness) error { return h.SetEnforcement("hard") }},
		{MethodReportDevice, []any{int64(0), int64(0), huge}, func(h *harness) error { _, err := h.ReportDevice(0, 0, huge); return err }},
	} {
		var e *Error
		if err := c.call(newHarness(t)); !errors.As(err, &e) || e.Fault == nil {
			t.Fatalf("%s: got %v, want a Fault", c.m, err)
		}
		if got := CheckCall(c.m, c.args...); !reflect.DeepEqual(got, e.Fault) {
			t.Errorf("%s: CheckCall got %+v, want the method's %+v", c.m, got, e.Fault)
		}
	}
	if f := CheckCall(MethodStart, "x", "y", uint64(60), "", []string{"Editor"}); f != nil {
		t.Errorf("a good Start: got %+v, want nil", f)
	}
}
