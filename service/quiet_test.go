package service

import (
	"slices"
	"sync"
	"testing"
	"time"
)

// fakeQuieter records what the core asked of Do Not Disturb, in order.
type fakeQuieter struct {
	mu   sync.Mutex
	said []bool
}

func (f *fakeQuieter) Quiet(on bool) {
	f.mu.Lock()
	f.said = append(f.said, on)
	f.mu.Unlock()
}

func (f *fakeQuieter) calls() []bool {
	f.mu.Lock()
	defer f.mu.Unlock()
	return slices.Clone(f.said)
}

// last is the latest decision, failing when there was none.
func (f *fakeQuieter) last(t *testing.T) bool {
	t.Helper()
	c := f.calls()
	if len(c) == 0 {
		t.Fatal("Quiet: never called, want a decision")
	}
	return c[len(c)-1]
}

func newQuietHarness(t *testing.T, quietDefault bool, store *fakeStore, clock *fakeClock) (*harness, *fakeQuieter) {
	t.Helper()
	q := &fakeQuieter{}
	if store == nil {
		store, clock = newFakeStore(), newFakeClock()
	}
	h := &harness{clock: clock, store: store}
	h.Service = New(Options{Store: store, Clock: clock, Logger: quiet, Quieter: q, Quiet: quietDefault})
	h.rec = &recorder{s: h.Service}
	h.AddListener(h.rec)
	must(t, h.Recover(store.last()))
	t.Cleanup(h.Shutdown)
	return h, q
}

func wantQuiet(t *testing.T, q *fakeQuieter, when string, want bool) {
	t.Helper()
	if got := q.last(t); got != want {
		t.Fatalf("%s: Quiet(%v) last, want Quiet(%v) (calls %v)", when, got, want, q.calls())
	}
}

func TestQuietSessionSilencesOnlyWhileActiveAndPresent(t *testing.T) {
	h, q := newQuietHarness(t, true, nil, nil)
	// The first decision is always told, so a record a crash left behind
	// is put back at start-up.
	if got := q.calls(); !slices.Equal(got, []bool{false}) {
		t.Fatalf("after Recover: calls %v, want [false]", got)
	}
	if v := h.View(); !v.Quiet {
		t.Fatal("Quiet in locked with quiet = true: got false, want true (what Start will use)")
	}
	h.start(t, LevelWarn)
	wantQuiet(t, q, "active quiet session", true)
	if v := h.View(); !v.Quiet {
		t.Fatal("View.Quiet while active: got false, want true")
	}
	h.SetAway("idle", AwayIdle, true)
	wantQuiet(t, q, "away", false)
	h.SetAway("idle", AwayIdle, false)
	wantQuiet(t, q, "back", true)
	must(t, h.Complete())
	wantQuiet(t, q, "review", false)
	if _, err := h.End(); err != nil {
		t.Fatal(err)
	}
	wantQuiet(t, q, "ended", false)
	// Each change is told once: no repeats of the same decision.
	if got, want := q.calls(), []bool{false, true, false, true, false}; !slices.Equal(got, want) {
		t.Fatalf("calls: got %v, want %v", got, want)
	}
}

func TestQuietDeadlineRestores(t *testing.T) {
	h, q := newQuietHarness(t, true, nil, nil)
	h.start(t, LevelWarn)
	wantQuiet(t, q, "active", true)
	h.clock.Advance(25 * time.Minute)
	if v := h.View(); v.State != StateReview {
		t.Fatalf("after the deadline: state %s, want review", v.State)
	}
	wantQuiet(t, q, "expired", false)
}

func TestSetQuietChoosesForOneSession(t *testing.T) {
	h, q := newQuietHarness(t, false, nil, nil)
	must(t, h.SetQuiet(true)) // before Start, from locked: antidrift start --quiet
	h.start(t, LevelWarn)
	wantQuiet(t, q, "--quiet over quiet = false", true)
	must(t, h.Abandon(""))
	if _, err := h.End(); err != nil {
		t.Fatal(err)
	}
	h.start(t, LevelWarn) // the choice was for one session
	if got := q.last(t); got {
		t.Fatal("the next session: Quiet(true), want the configured false")
	}
	must(t, h.SetQuiet(true)) // while active: at once
	wantQuiet(t, q, "SetQuiet(true) while active", true)
	must(t, h.SetQuiet(false))
	wantQuiet(t, q, "SetQuiet(false) while active", false)

	h2, q2 := newQuietHarness(t, true, nil, nil)
	must(t, h2.Plan())
	must(t, h2.SetQuiet(false)) // --no-quiet over quiet = true
	if h2.View().Quiet {
		t.Fatal("planning after SetQuiet(false): Quiet true, want false")
	}
	h2.start(t, LevelWarn)
	if q2.last(t) {
		t.Fatal("--no-quiet: Quiet(true), want false")
	}
	if err := h2.SetQuiet(true); err != nil {
		t.Fatal(err)
	}
	must(t, h2.Complete())
	if err := h2.SetQuiet(true); !isNotPermitted(err) {
		t.Fatalf("SetQuiet in review: got %v, want NotPermitted", err)
	}
}

func TestQuietSurvivesRestart(t *testing.T) {
	h, q := newQuietHarness(t, false, nil, nil)
	must(t, h.SetQuiet(true))
	h.start(t, LevelWarn)
	wantQuiet(t, q, "active", true)
	if !h.store.last().Quiet {
		t.Fatal("snapshot of a quiet session: quiet false, want true")
	}
	h2, q2 := newQuietHarness(t, false, h.store, h.clock)
	if got := q2.calls(); !slices.Equal(got, []bool{true}) {
		t.Fatalf("after a restart mid-session: calls %v, want [true]", got)
	}
	if !h2.View().Quiet {
		t.Fatal("View.Quiet after a restart: false, want true")
	}
}

func TestQuietNudgesAreCritical(t *testing.T) {
	h, _, n := newDriftHarness(t, driftOpts{})
	must(t, h.SetQuiet(true))
	h.start(t, LevelWarn, "Emacs")
	h.RecordWindow(winID("1", "Firefox"))
	h.settle()
	if got, _ := n.first(t); got.Urgency != 2 {
		t.Fatalf("drift nudge in a quiet session: urgency %d, want 2 (critical: shown under Do Not Disturb)", got.Urgency)
	}
	h2, _, n2 := newDriftHarness(t, driftOpts{})
	h2.start(t, LevelWarn, "Emacs")
	h2.RecordWindow(winID("1", "Firefox"))
	h2.settle()
	if got, _ := n2.first(t); got.Urgency != 1 {
		t.Fatalf("drift nudge in a session that is not quiet: urgency %d, want 1", got.Urgency)
	}
}

func TestQuietNote(t *testing.T) {
	h, _ := newQuietHarness(t, true, nil, nil)
	h.SetQuietNote("Banners were already off.")
	h.rec.mu.Lock()
	last := h.rec.views[len(h.rec.views)-1]
	h.rec.mu.Unlock()
	if last.QuietNote != "Banners were already off." {
		t.Fatalf("QuietNote the listeners saw last: got %q, want the note", last.QuietNote)
	}
}
