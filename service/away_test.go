package service

import (
	"reflect"
	"regexp"
	"strings"
	"testing"
	"time"
)

func bucketSeconds(v View) map[string]uint64 {
	m := map[string]uint64{}
	for _, b := range v.Buckets {
		m[b.Class+"|"+b.Title] += b.Seconds
	}
	return m
}

func TestIdleAndLockAccrueToAwayAndPauseDrift(t *testing.T) {
	h, g, n := newDriftHarness(t, driftOpts{})
	h.RecordWindow(editor)
	h.start(t, LevelBlock, "Editor")
	h.clock.Advance(time.Minute)
	h.RecordWindow(distraction) // drifting at once (grace 0)
	h.settle()
	h.clock.Advance(10 * time.Second)

	h.SetAway("idle", AwayIdle, true)
	h.settle()
	v := h.View()
	if v.Drift != DriftAway || v.DriftReason != "away: no input" || v.Enforced {
		t.Fatalf("idle: Drift, DriftReason, Enforced: got %s (%q) %v, want %s (%q) false", v.Drift, v.DriftReason, v.Enforced, DriftAway, "away: no input")
	}
	if len(n.onScreen()) != 0 {
		// The iconify kept the nudge up as an explanation; going away withdraws it.
		t.Fatalf("nudges on screen while away: got %+v, want none", n.onScreen())
	}
	h.SetAway("screensaver", AwayLocked, true)
	h.clock.Advance(20 * time.Minute) // no nudge repeats, no enforcement while away
	h.SetAway("idle", AwayIdle, false)
	if v := h.View(); v.Drift != DriftAway || v.DriftReason != "away: the screen is locked" {
		t.Fatalf("still locked: Drift: got %s (%q), want %s (%q)", v.Drift, v.DriftReason, DriftAway, "away: the screen is locked")
	}
	minimizedBefore, _ := g.calls()
	h.SetAway("screensaver", AwayLocked, false)
	h.settle()
	if v := h.View(); v.Drift != DriftDrifting {
		t.Fatalf("back on the distraction, judgement resumes at once: Drift: got %s, want %s", v.Drift, DriftDrifting)
	}
	if m, _ := g.calls(); len(m) != len(minimizedBefore)+1 {
		t.Fatalf("minimized on return: got %d, want %d (enforcement resumes)", len(m), len(minimizedBefore)+1)
	}
	h.clock.Advance(5 * time.Second)
	must(t, h.Complete())
	v = h.View()
	b := bucketSeconds(v)
	if b["|"+AwayTitle] != 20*60 || b["Distraction|Distraction window"] != 15 || b["Editor|Editor window"] != 60 {
		t.Fatalf("buckets: got %v, want %q 1200 s, %q 15 s, %q 60 s", b, "|"+AwayTitle, "Distraction|Distraction window", "Editor|Editor window")
	}
	_, err := h.End()
	must(t, err)
	s := h.store.sealed()[0]
	if s.AwaySeconds != 1200 || s.DriftSeconds != 15 {
		t.Fatalf("away_seconds, drift_seconds: got %d %d, want 1200 15", s.AwaySeconds, s.DriftSeconds)
	}
}

func TestAnnouncedSleepAccruesToSuspended(t *testing.T) {
	h := newHarness(t)
	h.RecordWindow(editor)
	h.start(t, LevelWarn, "Editor")
	h.clock.Advance(time.Minute)
	h.SetAway("sleep", AwaySuspended, true)
	h.clock.Suspend(10 * time.Minute)
	h.SetAway("sleep", AwaySuspended, false)
	h.clock.Advance(time.Minute)
	must(t, h.Complete())
	b := bucketSeconds(h.View())
	if b["|"+SuspendedTitle] != 600 || b["Editor|Editor window"] != 120 || len(b) != 2 {
		t.Fatalf("buckets: got %v, want only %q 600 s and %q 120 s", b, "|"+SuspendedTitle, "Editor|Editor window")
	}
}

func TestWallClockJumpBecomesSuspended(t *testing.T) {
	h := newHarness(t)
	h.RecordWindow(editor)
	_, err := h.Start("a", "b", 3*3600, "", []string{"Editor"})
	must(t, err)
	h.clock.Advance(time.Minute)
	h.clock.Suspend(time.Hour) // nobody announced it
	h.clock.Advance(time.Minute)
	h.RecordWindow(browser)
	h.clock.Advance(time.Minute)
	must(t, h.Complete())
	v := h.View()
	b := bucketSeconds(v)
	if b["|"+SuspendedTitle] != 3600 || b["Editor|Editor window"] != 120 || b["Firefox|Firefox window"] != 60 {
		t.Fatalf("buckets after an hour's jump: got %v, want %q 3600 s, %q 120 s, %q 60 s", b, "|"+SuspendedTitle, "Editor|Editor window", "Firefox|Firefox window")
	}
	var total uint64
	for _, s := range b {
		total += s
	}
	if total != 3600+180 {
		t.Fatalf("buckets add to %d s, want the wall clock's %d", total, 3600+180)
	}
	// And replay rebuilds exactly the same.
	n := h.restart(t)
	if got := n.View(); !reflect.DeepEqual(got.Buckets, v.Buckets) {
		t.Fatalf("replayed buckets: got %+v\nwant the live %+v", got.Buckets, v.Buckets)
	}
}

func TestDeadlinePassedDuringSuspendExpiresAtTheDeadline(t *testing.T) {
	h := newHarness(t)
	h.RecordWindow(editor)
	h.start(t, LevelWarn, "Editor") // 25 min
	h.clock.Advance(5 * time.Minute)
	h.clock.Suspend(time.Hour) // the timer, on the monotonic clock, has not fired
	if h.View().State != StateActive {
		t.Fatalf("State while asleep: got %s, want %s (the timer has not fired)", h.View().State, StateActive)
	}
	h.RecordWindow(browser) // the first event after resume
	v := h.View()
	if v.State != StateReview || v.Outcome != OutcomeExpired {
		t.Fatalf("State, Outcome after waking past the deadline: got %s %s, want %s %s", v.State, v.Outcome, StateReview, OutcomeExpired)
	}
	b := bucketSeconds(v)
	if b["Editor|Editor window"] != 300 || b["|"+SuspendedTitle] != 1200 {
		t.Fatalf("buckets: got %v, want %q 300 s and %q 1200 s: 5 min work, then asleep until the deadline", b, "Editor|Editor window", "|"+SuspendedTitle)
	}
}

func TestAwayReplayEqualsLive(t *testing.T) {
	h := newHarness(t)
	h.RecordWindow(editor)
	h.start(t, LevelWarn, "Editor")
	h.clock.Advance(time.Minute)
	h.SetAway("idle", AwayIdle, true)
	h.clock.Advance(4 * time.Minute)
	h.RecordWindow(browser) // focus moves while away: not a switch by the person
	h.clock.Advance(time.Minute)
	h.SetAway("idle", AwayIdle, false)
	h.clock.Advance(time.Minute)
	live := h.View()
	if live.SwitchCount != 0 {
		t.Fatalf("SwitchCount after a focus change while away: got %d, want 0", live.SwitchCount)
	}
	n := h.restart(t)
	if got := n.View(); !reflect.DeepEqual(got.Buckets, live.Buckets) || got.SwitchCount != live.SwitchCount {
		t.Fatalf("replayed buckets / SwitchCount: got %+v / %d\nwant the live %+v / %d", got.Buckets, got.SwitchCount, live.Buckets, live.SwitchCount)
	}
}

func TestPrivateClassesAndRedaction(t *testing.T) {
	store, clock := newFakeStore(), newFakeClock()
	s := New(Options{Store: store, Clock: clock, Logger: quiet,
		PrivateClasses: []string{"keepassxc"},
		RedactTitles:   []*regexp.Regexp{regexp.MustCompile(`\S+@\S+`)}})
	must(t, s.Recover(Snapshot{}))
	id, err := s.Start("a", "b", 600, "", []string{"Editor"})
	must(t, err)
	s.RecordWindow(Window{ID: "1", Class: "KeePassXC", Instance: "keepassxc", Title: "bank password - KeePassXC", Available: true})
	if v := s.View(); v.CurrentTitle != "" || v.CurrentClass != "KeePassXC" {
		t.Fatalf("a private class: CurrentTitle, CurrentClass: got %q %q, want %q %q", v.CurrentTitle, v.CurrentClass, "", "KeePassXC")
	}
	clock.Advance(time.Second)
	s.RecordWindow(Window{ID: "2", Class: "Thunderbird", Title: "Mail from alice@example.com", Available: true})
	if v := s.View(); v.CurrentTitle != "Mail from …" {
		t.Fatalf("CurrentTitle: got %q, want %q, redacted", v.CurrentTitle, "Mail from …")
	}
	clock.Advance(time.Second)
	must(t, s.Complete())
	_, err = s.End()
	must(t, err)
	everything := strings.Join([]string{fmtAll(store.events[id]), fmtAll(store.sealed()), fmtAll(store.snapshots)}, "\n")
	for _, secret := range []string{"bank password", "alice@example.com"} {
		if strings.Contains(everything, secret) {
			t.Fatalf("records: got %q in them, want it never recorded:\n%s", secret, everything)
		}
	}
}

// The first call after an unannounced suspend is not a window change but
// an Allow from a nudge: the sleep is still (suspended), not drift.
func TestSuspendBeforeAnAllowIsNotDrift(t *testing.T) {
	h, _, _ := newDriftHarness(t, driftOpts{})
	h.RecordWindow(editor)
	_, err := h.Start("a", "b", 3*3600, "warn", []string{"Editor"})
	must(t, err)
	h.RecordWindow(browser) // drifting
	h.clock.Advance(time.Minute)
	h.clock.Suspend(time.Hour)
	must(t, h.Allow("Firefox"))
	h.clock.Advance(time.Minute)
	must(t, h.Complete())
	_, err = h.End()
	must(t, err)
	s := h.store.sealed()[0]
	if s.DriftSeconds != 60 || s.AwaySeconds != 3600 {
		t.Fatalf("drift_seconds %d away_seconds %d, want 60 and 3600", s.DriftSeconds, s.AwaySeconds)
	}
}

// Refocus while away starts no episode: nothing nudges or iconifies a
// person who is not there.
func TestRefocusWhileAwayStartsNoEpisode(t *testing.T) {
	h, g, n := newDriftHarness(t, driftOpts{grace: 5 * time.Second})
	h.RecordWindow(editor)
	h.start(t, LevelBlock, "Editor")
	h.RecordWindow(distraction)
	h.SetAway("screensaver", AwayLocked, true)
	must(t, h.Refocus())
	h.clock.Advance(time.Minute)
	h.settle()
	if shown, _ := n.history(); len(shown) != 0 {
		t.Fatalf("nudges while away: got %+v, want none", shown)
	}
	if m, _ := g.calls(); len(m) != 0 {
		t.Fatalf("minimized while away: got %v, want none", m)
	}
}

// Coming back goes down the verdict's path like any arrival: a browser
// window that changed page while the person was away, its tab report still
// on its way, waits for the report instead of being decided by the window
// alone (which the allowlist, naming only a site, would call drift).
func TestComingBackWhileTheBrowserIsBetweenPagesWaitsForTheReport(t *testing.T) {
	h, g, _ := newDriftHarness(t, driftOpts{})
	h.RecordWindow(ffWin("7", prTitle))
	must(t, h.tab(BrowserFirefox, prURL, prTitle, false))
	h.start(t, LevelBlock, "url:github.com/*")
	h.SetAway("idle", AwayIdle, true)
	h.settle()
	const next = "Tabs, not windows #4"
	h.RecordWindow(ffWin("7", next)) // the title first: the report is on its way
	h.SetAway("idle", AwayIdle, false)
	h.settle()
	if v := h.View(); v.Drift == DriftDrifting {
		t.Fatalf("back, the browser between pages: Drift: got %s (%q), want it to wait for the tab report", v.Drift, v.DriftReason)
	}
	if m, _ := g.calls(); len(m) != 0 {
		t.Fatalf("back, the browser between pages: got minimized %v, want none", m)
	}
	must(t, h.tab(BrowserFirefox, "https://github.com/antidrift/antidrift/pull/4", next, false))
	h.settle()
	if v := h.View(); v.Drift != DriftOnTask {
		t.Fatalf("on the next pull request: Drift: got %s (%q), want %s", v.Drift, v.DriftReason, DriftOnTask)
	}
	if m, _ := g.calls(); len(m) != 0 {
		t.Fatalf("on the next pull request: got minimized %v, want none", m)
	}
}
