package service

import (
	"reflect"
	"strings"
	"testing"
	"time"
)

// Setting the date forward mid-session neither ends a locked session nor
// lets Abandon through; the deadline moves with the wall clock, so the
// time left is what the boot clock says, and the jump is noted.
func TestSettingTheClockForwardDoesNotShortenTheTimebox(t *testing.T) {
	h := newHarness(t)
	h.RecordWindow(win("Editor", "main.go"))
	h.start(t, LevelLocked) // 25 min
	h.clock.Advance(5 * time.Minute)
	deadline := h.View().Deadline

	h.clock.SetWall(2 * time.Hour)
	if err := h.Abandon("the clock says it is over"); err == nil {
		t.Fatal("Abandon at locked after the date was set 2 h forward: got no error, want a refusal")
	}
	v := h.View()
	if v.State != StateActive {
		t.Fatalf("State after a forward jump: got %s, want %s", v.State, StateActive)
	}
	if got := time.Unix(v.Deadline, 0).Sub(time.Unix(deadline, 0)); got != 2*time.Hour {
		t.Fatalf("the deadline moved by %v, want the 2 h the clock was set by", got)
	}
	// The buckets count the boot clock's 5 min, not the jump.
	if b := v.Buckets; len(b) != 1 || b[0].Seconds != 300 {
		t.Fatalf("buckets after the jump: got %+v, want one of 300 s", b)
	}

	// The timebox ends when 25 min have passed on the boot clock: not
	// before, not after.
	h.clock.Advance(20*time.Minute - time.Second)
	if v := h.View(); v.State != StateActive {
		t.Fatalf("State a second before the timebox ends: got %s, want %s", v.State, StateActive)
	}
	h.clock.Advance(time.Second)
	if v := h.View(); v.State != StateReview || v.Outcome != OutcomeExpired {
		t.Fatalf("State, Outcome at the end of the timebox: got %s %s, want %s %s", v.State, v.Outcome, StateReview, OutcomeExpired)
	}
	hash, err := h.End()
	must(t, err)
	_ = hash
	sealed := h.store.sealed()
	if got := sealed[len(sealed)-1]; got.ClockJumps != 1 {
		t.Fatalf("summary clock_jumps %d, want 1", got.ClockJumps)
	}
}

// setBackMidSession runs a 25 min session: the editor for before, then
// the date set back an hour, then the browser for after.
func setBackMidSession(t *testing.T, before, after time.Duration) *harness {
	h := newHarness(t)
	h.RecordWindow(win("Editor", "main.go"))
	h.start(t, LevelWarn)
	h.clock.Advance(before)
	h.clock.SetWall(-time.Hour)
	h.RecordWindow(win("Firefox", "docs"))
	h.clock.Advance(after)
	return h
}

// Setting the date back neither stretches the timebox nor lets the
// buckets lose time.
func TestSettingTheClockBackDoesNotStretchTheTimebox(t *testing.T) {
	h := setBackMidSession(t, 10*time.Minute, 15*time.Minute)
	v := h.View()
	if v.State != StateReview {
		t.Fatalf("State after 25 min on the boot clock with the date set 1 h back: got %s, want %s", v.State, StateReview)
	}
	var total uint64
	for _, b := range v.Buckets {
		total += b.Seconds
	}
	if total != 25*60 {
		t.Fatalf("buckets add to %d s, want 1500: %+v", total, v.Buckets)
	}
}

// The break-glass hold elapses on the boot clock too, whether the date
// is set after the hold started or just before it was asked for (with no
// event in between).
func TestBreakGlassHoldIgnoresTheDate(t *testing.T) {
	for _, setFirst := range []bool{false, true} {
		h := newHarness(t)
		h.start(t, LevelLocked)
		h.clock.Advance(time.Minute)
		if setFirst {
			h.clock.SetWall(time.Hour)
		}
		_, err := h.BreakGlass("test")
		must(t, err)
		if !setFirst {
			h.clock.SetWall(time.Hour)
		}
		left, err := h.BreakGlass("again")
		must(t, err)
		if left != 300 {
			t.Fatalf("date set first %v: the hold has %d s left, want 300", setFirst, left)
		}
		h.clock.Advance(5*time.Minute - time.Second)
		if err := h.Abandon("x"); err == nil || !strings.Contains(err.Error(), "hold") {
			t.Fatalf("date set first %v: Abandon a second before the hold elapsed: got %v, want a refusal naming the hold", setFirst, err)
		}
		h.clock.Advance(time.Second)
		must(t, h.Abandon("the hold elapsed"))
	}
}

// A restart in the same boot finds a date set while the daemon was down;
// after a reboot the deadline is kept in wall time.
func TestClockSetWhileDownIsFoundOnRestart(t *testing.T) {
	h := newHarness(t)
	h.start(t, LevelLocked)
	h.clock.Advance(5 * time.Minute)
	h.Shutdown()
	h.clock.SetWall(3 * time.Hour)
	h.clock.Advance(time.Minute)
	n := h.restart(t)
	if v := n.View(); v.State != StateActive {
		t.Fatalf("State restarted after the date was set 3 h forward: got %s, want %s", v.State, StateActive)
	}
	n.clock.Advance(19*time.Minute - time.Second)
	if v := n.View(); v.State != StateActive {
		t.Fatalf("State before 25 min on the boot clock: got %s, want %s", v.State, StateActive)
	}

	// A reboot: the boot clock restarted, the wall deadline is what is left.
	n.Shutdown()
	n.clock.Reboot()
	r := n.restart(t)
	if v := r.View(); v.State != StateActive {
		t.Fatalf("State after a reboot: got %s, want %s", v.State, StateActive)
	}
	r.clock.Advance(time.Second)
	if v := r.View(); v.State != StateReview {
		t.Fatalf("State after a reboot, at the wall deadline: got %s, want %s", v.State, StateReview)
	}
}

// A session whose date was set back before its own start still replays
// whole after a crash: its later lines are not mistaken for foreign ones.
func TestReplayAfterTheDateWasSetBackBeforeTheStart(t *testing.T) {
	h := setBackMidSession(t, 2*time.Minute, 3*time.Minute)
	h.RecordWindow(win("Editor", "main.go"))
	live := h.View().Buckets
	n := h.restart(t) // no Shutdown: a crash
	if got := n.View().Buckets; !reflect.DeepEqual(got, live) {
		t.Fatalf("replayed buckets: got %+v, want the live %+v; Problems %q", got, live, n.View().Problems)
	}
}
