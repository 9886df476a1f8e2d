package service

import (
	"reflect"
	"strings"
	"testing"
	"time"
)

// The desktop's break (GNOME's ScreenTime IN_BREAK, reported by the daemon
// as the away reason "break") is away, never drift: the time goes to
// (away), drift, nudges and enforcement pause, and Drift reads "break".
func TestDesktopBreakIsAwayNeverDrift(t *testing.T) {
	h, g, n := newDriftHarness(t, driftOpts{})
	h.RecordWindow(editor)
	h.start(t, LevelBlock, "Editor")
	h.clock.Advance(time.Minute)
	h.RecordWindow(distraction) // drifting at once (grace 0), minimized
	h.settle()
	h.clock.Advance(10 * time.Second)
	minimizedBefore, _ := g.calls()
	nudgesBefore := len(h.rec.nudges)

	h.SetAway("screentime/break", AwayBreak, true)
	h.settle()
	v := h.View()
	if v.Drift != DriftBreak || !strings.HasPrefix(v.DriftReason, "the desktop asked for a break") || v.Enforced {
		t.Fatalf("in the break: Drift, DriftReason, Enforced: got %s (%q) %v, want %s (\"the desktop asked for a break…\") false", v.Drift, v.DriftReason, v.Enforced, DriftBreak)
	}
	if len(n.onScreen()) != 0 {
		t.Fatalf("nudges on screen during the break: got %+v, want none", n.onScreen())
	}
	// The distraction takes focus again during the break (a video left
	// playing): no drift, no nudge, no minimize.
	h.RecordWindow(browser)
	h.RecordWindow(distraction)
	h.clock.Advance(20 * time.Minute)
	h.settle()
	if m, _ := g.calls(); len(m) != len(minimizedBefore) {
		t.Fatalf("minimized during the break: got %d, want %d", len(m), len(minimizedBefore))
	}
	if got := len(h.rec.nudges); got != nudgesBefore {
		t.Fatalf("Nudged during the break: got %d nudges, want %d (%v)", got, nudgesBefore, h.rec.nudges)
	}
	if v := h.View(); v.Drift != DriftBreak {
		t.Fatalf("focus changes during the break: Drift: got %s, want %s", v.Drift, DriftBreak)
	}

	h.SetAway("screentime/break", AwayBreak, false)
	h.settle()
	if v := h.View(); v.Drift != DriftDrifting {
		t.Fatalf("back on the distraction after the break: Drift: got %s, want %s", v.Drift, DriftDrifting)
	}
	if m, _ := g.calls(); len(m) != len(minimizedBefore)+1 {
		t.Fatalf("minimized after the break: got %d, want %d (enforcement resumes)", len(m), len(minimizedBefore)+1)
	}
	h.clock.Advance(5 * time.Second)
	must(t, h.Complete())
	live := h.View()
	b := bucketSeconds(live)
	if b["|"+AwayTitle] != 20*60 || b["Distraction|Distraction window"] != 15 || b["Editor|Editor window"] != 60 {
		t.Fatalf("buckets: got %v, want %q 1200 s, %q 15 s, %q 60 s", b, "|"+AwayTitle, "Distraction|Distraction window", "Editor|Editor window")
	}
	if replayed := h.restart(t).View(); !reflect.DeepEqual(replayed.Buckets, live.Buckets) {
		t.Fatalf("replayed buckets: got %+v, want the live %+v", replayed.Buckets, live.Buckets)
	}
}

func TestDesktopBreakSealsAsAway(t *testing.T) {
	h, _, _ := newDriftHarness(t, driftOpts{})
	h.RecordWindow(editor)
	h.start(t, LevelWarn, "Editor")
	h.clock.Advance(time.Minute)
	h.RecordWindow(distraction)
	h.clock.Advance(10 * time.Second)
	h.SetAway("screentime/break", AwayBreak, true)
	h.clock.Advance(5 * time.Minute)
	h.SetAway("screentime/break", AwayBreak, false)
	h.clock.Advance(5 * time.Second)
	must(t, h.Complete())
	_, err := h.End()
	must(t, err)
	s := h.store.sealed()[0]
	if s.AwaySeconds != 300 || s.DriftSeconds != 15 {
		t.Fatalf("away_seconds, drift_seconds: got %d %d, want 300 15 (the break is away, never drift)", s.AwaySeconds, s.DriftSeconds)
	}
}

// A break behind a locked screen is named a break; when the break ends and
// the screen stays locked, it is away again.
func TestDesktopBreakWinsOverLockAndIdle(t *testing.T) {
	h := newHarness(t)
	h.RecordWindow(editor)
	h.start(t, LevelWarn, "Editor")
	h.SetAway("idle", AwayIdle, true)
	h.SetAway("screensaver/locked", AwayLocked, true)
	h.SetAway("screentime/break", AwayBreak, true)
	if v := h.View(); v.Drift != DriftBreak {
		t.Fatalf("idle, locked and in a break: Drift: got %s, want %s", v.Drift, DriftBreak)
	}
	h.SetAway("screentime/break", AwayBreak, false)
	if v := h.View(); v.Drift != DriftAway || v.DriftReason != "away: the screen is locked" {
		t.Fatalf("break over, still locked: Drift: got %s (%q), want %s (%q)", v.Drift, v.DriftReason, DriftAway, "away: the screen is locked")
	}
	h.SetAway("sleep", AwaySuspended, true)
	h.SetAway("screentime/break", AwayBreak, true)
	if v := h.View(); v.Drift != DriftAway || v.DriftReason != "away: the machine is asleep" {
		t.Fatalf("asleep during a break: Drift: got %s (%q), want %s (%q)", v.Drift, v.DriftReason, DriftAway, "away: the machine is asleep")
	}
}

// BREAK_DUE is shown, and changes nothing else.
func TestBreakDueIsShown(t *testing.T) {
	h, g, _ := newDriftHarness(t, driftOpts{})
	h.SetBreakDue(true)
	if v := h.View(); !v.BreakDue || v.DriftReason != "" {
		t.Fatalf("locked, break due: BreakDue, DriftReason: got %v %q, want true \"\"", v.BreakDue, v.DriftReason)
	}
	h.RecordWindow(editor)
	h.start(t, LevelBlock, "Editor")
	v := h.View()
	if !v.BreakDue || v.Drift != DriftOnTask || !strings.HasSuffix(v.DriftReason, "; "+breakDueNote) {
		t.Fatalf("active, break due: BreakDue, Drift, DriftReason: got %v %s %q, want true %s \"…; %s\"", v.BreakDue, v.Drift, v.DriftReason, DriftOnTask, breakDueNote)
	}
	views := len(h.rec.views)
	h.SetBreakDue(true) // the same again: no change to announce
	if len(h.rec.views) != views {
		t.Fatalf("SetBreakDue(true) twice: got %d announcements, want %d", len(h.rec.views), views)
	}
	h.RecordWindow(distraction) // still judged and enforced
	h.settle()
	if v := h.View(); v.Drift != DriftDrifting || !v.Enforced {
		t.Fatalf("break due, on a distraction: Drift, Enforced: got %s %v, want %s true", v.Drift, v.Enforced, DriftDrifting)
	}
	if m, _ := g.calls(); len(m) != 1 {
		t.Fatalf("minimized while a break is due: got %d, want 1", len(m))
	}
	h.SetBreakDue(false)
	h.rec.mu.Lock()
	last := h.rec.views[len(h.rec.views)-1]
	h.rec.mu.Unlock()
	if last.BreakDue {
		t.Fatal("SetBreakDue(false) was not announced: the last view listeners saw still says BreakDue")
	}
	if v := h.View(); v.BreakDue || strings.Contains(v.DriftReason, breakDueNote) {
		t.Fatalf("break no longer due: BreakDue, DriftReason: got %v %q, want false, no note", v.BreakDue, v.DriftReason)
	}
}
