package service

import (
	"errors"
	"reflect"
	"strings"
	"sync"
	"testing"
	"time"
	"unicode/utf8"
)

var (
	editor      = winID("10", "Editor")
	distraction = winID("20", "Distraction")
	browser     = winID("30", "Firefox")
)

func actionKeys(n Notification) []string {
	var keys []string
	for _, a := range n.Actions {
		keys = append(keys, a.Key)
	}
	return keys
}

func TestDriftAfterGraceNudgesAtWarn(t *testing.T) {
	h, g, n := newDriftHarness(t, driftOpts{grace: 5 * time.Second})
	h.RecordWindow(editor)
	h.start(t, LevelWarn, "editor") // matched case-insensitively
	if v := h.View(); v.Drift != DriftOnTask {
		t.Fatalf("on the editor: Drift: got %s (%q), want %s", v.Drift, v.DriftReason, DriftOnTask)
	}
	h.RecordWindow(distraction)
	h.clock.Advance(4 * time.Second)
	h.settle()
	if v := h.View(); v.Drift != DriftOnTask || !strings.Contains(v.DriftReason, "becomes drift after 5s") {
		t.Fatalf("inside the grace: Drift: got %s (%q), want %s saying it becomes drift after 5s", v.Drift, v.DriftReason, DriftOnTask)
	}
	if shown, _ := n.history(); len(shown) != 0 {
		t.Fatalf("nudges inside the grace: got %+v, want none", shown)
	}
	h.clock.Advance(time.Second)
	h.settle()
	v := h.View()
	if v.Drift != DriftDrifting || v.Enforced || v.DriftReason != "Distraction is not in this session's allowlist" {
		t.Fatalf("after the grace: Drift, Enforced, DriftReason: got %s %v %q, want %s false %q", v.Drift, v.Enforced, v.DriftReason, DriftDrifting, "Distraction is not in this session's allowlist")
	}
	shown, _ := n.history()
	if len(shown) != 1 || shown[0].Summary != "Drifting: Distraction" ||
		!reflect.DeepEqual(actionKeys(shown[0]), []string{"refocus", "allow", "not_distraction"}) ||
		shown[0].Actions[1].Label != "Allow Distraction" || !strings.Contains(shown[0].Body, "write the intro") {
		t.Fatalf("nudges: got %+v, want one %q with actions refocus, allow, not_distraction, the second labelled %q, its body naming the next action", shown, "Drifting: Distraction", "Allow Distraction")
	}
	if strings.Contains(shown[0].Body, "Distraction window") {
		t.Fatalf("nudge body: got %q, want it without the window title %q", shown[0].Body, "Distraction window")
	}
	if len(h.rec.nudges) != 1 || h.rec.nudges[0] != "Distraction: Distraction is not in this session's allowlist" {
		t.Fatalf("Nudge signals: got %q, want [%q]", h.rec.nudges, "Distraction: Distraction is not in this session's allowlist")
	}
	if m, a := g.calls(); len(m)+len(a) != 0 {
		t.Fatalf("guard calls at warn: got minimized %v activated %v, want none", m, a)
	}
}

func TestNudgeRepeatsReplacingAndClosesBackOnTask(t *testing.T) {
	h, _, n := newDriftHarness(t, driftOpts{})
	h.RecordWindow(editor)
	h.start(t, LevelWarn, "Editor")
	h.RecordWindow(distraction)
	h.clock.Advance(2*time.Minute - time.Second)
	h.settle()
	if shown, _ := n.history(); len(shown) != 1 {
		t.Fatalf("nudges before the repeat interval: got %d, want 1", len(shown))
	}
	h.clock.Advance(time.Second)
	h.settle()
	shown, ids := n.history()
	if len(shown) != 2 || ids[0] != ids[1] || shown[1].ReplacesID != ids[0] {
		t.Fatalf("the repeat: got ids %v, the second replacing %d, want two with one id, the second replacing the first", ids, shown[1].ReplacesID)
	}
	if len(h.rec.nudges) != 2 {
		t.Fatalf("Nudge signals: got %d %q, want 2", len(h.rec.nudges), h.rec.nudges)
	}
	h.RecordWindow(editor)
	h.settle()
	if on := n.onScreen(); len(on) != 0 {
		t.Fatalf("nudges on screen back on task: got %+v, want none", on)
	}
	if v := h.View(); v.Drift != DriftOnTask {
		t.Fatalf("back on task: Drift: got %s, want %s", v.Drift, DriftOnTask)
	}
	h.clock.Advance(10 * time.Minute)
	h.settle()
	if shown, _ := n.history(); len(shown) != 2 {
		t.Fatalf("nudges after drift ended and 10 min on: got %d, want still 2", len(shown))
	}
}

func TestBlockIconifiesTheDriftingWindowAndHandsFocusBack(t *testing.T) {
	for _, level := range []Level{LevelBlock, LevelLocked} {
		t.Run(string(level), func(t *testing.T) {
			h, g, n := newDriftHarness(t, driftOpts{grace: time.Second})
			h.RecordWindow(editor)
			h.start(t, level, "Editor")
			h.RecordWindow(distraction)
			h.clock.Advance(time.Second)
			h.settle()
			m, a := g.calls()
			if !reflect.DeepEqual(m, []string{"20"}) || !reflect.DeepEqual(a, []string{"10"}) {
				t.Fatalf("minimized %v activated %v, want [20] then [10]", m, a)
			}
			v := h.View()
			if v.MinimizeCount != 1 || !v.Enforced {
				t.Fatalf("MinimizeCount, Enforced: got %d %v, want 1 true", v.MinimizeCount, v.Enforced)
			}
			nudge, _ := n.first(t)
			want := []string{"refocus", "allow", "not_distraction"}
			if level == LevelLocked {
				want = []string{"refocus"} // no widening at locked
			}
			if !reflect.DeepEqual(actionKeys(nudge), want) {
				t.Fatalf("actions %v, want %v", actionKeys(nudge), want)
			}
			// Back on task, Enforced goes; re-raising and staying iconifies again.
			h.RecordWindow(editor)
			if h.View().Enforced {
				t.Fatal("Enforced on task: got true, want false")
			}
			h.RecordWindow(distraction)
			h.clock.Advance(time.Second)
			h.settle()
			if m, _ := g.calls(); len(m) != 2 || h.View().MinimizeCount != 2 {
				t.Fatalf("re-raised distraction: got minimized %d times, MinimizeCount %d, want 2 and 2", len(m), h.View().MinimizeCount)
			}
			must(t, h.Complete())
			_, err := h.End()
			must(t, err)
			if s := h.store.sealed()[0]; s.MinimizeCount != 2 || s.DriftSeconds != 2 {
				t.Fatalf("summary minimize_count, drift_seconds: got %d %d, want 2 2", s.MinimizeCount, s.DriftSeconds)
			}
		})
	}
}

func TestNudgeStaysAfterOurIconifyAndOffersAllow(t *testing.T) {
	h, _, n := newDriftHarness(t, driftOpts{})
	h.RecordWindow(editor)
	h.start(t, LevelBlock, "Editor")
	h.RecordWindow(distraction)
	h.settle()
	h.RecordWindow(editor) // the guard handed focus back
	h.settle()
	on := n.onScreen()
	if len(on) != 1 || on[0].Summary != "Drifting: Distraction" {
		t.Fatalf("after our own iconify: nudges on screen: got %+v, want one %q explaining it", on, "Drifting: Distraction")
	}
	_, ids := n.history()
	h.NotificationAction(ids[0], "allow")
	h.settle()
	if v := h.View(); len(v.AllowedClasses) != 2 || len(n.onScreen()) != 0 {
		t.Fatalf("Allow from the lingering nudge: got AllowedClasses %v, %d on screen, want 2 classes, none on screen", v.AllowedClasses, len(n.onScreen()))
	}
}

func TestNoGuardCallAtWarnObserveOrWithoutAGuard(t *testing.T) {
	for _, c := range []struct {
		level   Level
		noGuard bool
		nudges  int
	}{{LevelWarn, false, 1}, {LevelObserve, false, 0}, {LevelBlock, true, 1}} {
		h, g, n := newDriftHarness(t, driftOpts{noGuard: c.noGuard})
		h.RecordWindow(editor)
		h.start(t, c.level, "Editor")
		h.RecordWindow(distraction)
		h.settle()
		if m, a := g.calls(); len(m)+len(a) != 0 {
			t.Errorf("%s (no guard %v): guard calls: got minimized %v activated %v, want none", c.level, c.noGuard, m, a)
		}
		if shown, _ := n.history(); len(shown) != c.nudges {
			t.Errorf("%s: %d nudges, want %d", c.level, len(shown), c.nudges)
		}
		if v := h.View(); v.Drift != DriftDrifting || v.MinimizeCount != 0 {
			t.Errorf("%s: Drift, MinimizeCount: got %s %d, want %s 0", c.level, v.Drift, v.MinimizeCount, DriftDrifting)
		}
	}
}

func TestIconifySkippedWhenTheWindowLostFocusIsNotCounted(t *testing.T) {
	h, g, _ := newDriftHarness(t, driftOpts{})
	g.err = ErrNotActive
	h.RecordWindow(editor)
	h.start(t, LevelBlock, "Editor")
	h.RecordWindow(distraction)
	h.settle()
	if v := h.View(); v.MinimizeCount != 0 {
		t.Fatalf("MinimizeCount after a skipped iconify: got %d, want 0", v.MinimizeCount)
	}
	if _, a := g.calls(); len(a) != 0 {
		t.Fatalf("focus handed back although nothing was iconified: got activated %v, want none", a)
	}
}

func TestUnknownWithoutEvidenceOrAllowlist(t *testing.T) {
	h, _, n := newDriftHarness(t, driftOpts{})
	h.RecordWindow(distraction)
	h.start(t, LevelWarn) // no classes
	if v := h.View(); v.Drift != DriftUnknown || !strings.Contains(v.DriftReason, "allows no window classes") {
		t.Fatalf("no allowlist: Drift: got %s (%q), want %s saying it allows no window classes", v.Drift, v.DriftReason, DriftUnknown)
	}
	must(t, h.Allow("Editor"))
	if v := h.View(); v.Drift != DriftDrifting {
		t.Fatalf("after allowing Editor while on Distraction: Drift: got %s, want %s", v.Drift, DriftDrifting)
	}
	h.RecordWindow(Window{Reason: "no window has focus"})
	h.settle()
	if v := h.View(); v.Drift != DriftUnknown || v.DriftReason != "evidence unavailable: no window has focus" {
		t.Fatalf("no evidence: Drift: got %s (%q), want %s (%q)", v.Drift, v.DriftReason, DriftUnknown, "evidence unavailable: no window has focus")
	}
	if on := n.onScreen(); len(on) != 0 {
		t.Fatalf("nudges on screen when evidence went away: got %+v, want none", on)
	}
}

func TestDriftSecondsCountFromTheFirstSecond(t *testing.T) {
	h, _, _ := newDriftHarness(t, driftOpts{grace: 10 * time.Second})
	h.RecordWindow(editor)
	h.start(t, LevelWarn, "Editor")
	h.clock.Advance(time.Minute)
	h.RecordWindow(browser) // a glance, shorter than the grace
	h.clock.Advance(3 * time.Second)
	h.RecordWindow(editor)
	h.clock.Advance(time.Minute)
	h.RecordWindow(distraction) // real drift, grace included
	h.clock.Advance(40 * time.Second)
	h.RecordWindow(editor)
	h.clock.Advance(time.Second)
	must(t, h.Complete())
	_, err := h.End()
	must(t, err)
	if s := h.store.sealed()[0]; s.DriftSeconds != 43 {
		t.Fatalf("drift_seconds %d, want 43", s.DriftSeconds)
	}
}

func TestAllowActionAddsTheClassAndEndsDrift(t *testing.T) {
	h, _, n := newDriftHarness(t, driftOpts{})
	h.RecordWindow(editor)
	h.start(t, LevelWarn, "Editor")
	h.RecordWindow(distraction)
	h.settle()
	_, id := n.first(t)
	h.NotificationAction(id+100, "allow") // not ours: ignored
	if v := h.View(); len(v.AllowedClasses) != 1 {
		t.Fatalf("after a foreign notification's action: AllowedClasses: got %v, want only the one", v.AllowedClasses)
	}
	h.NotificationAction(id, "allow")
	h.settle()
	v := h.View()
	if !reflect.DeepEqual(v.AllowedClasses, []string{"Editor", "Distraction"}) || v.Drift != DriftOnTask {
		t.Fatalf("after Allow: AllowedClasses, Drift: got %q %s, want %q %s", v.AllowedClasses, v.Drift, []string{"Editor", "Distraction"}, DriftOnTask)
	}
	if on := n.onScreen(); len(on) != 0 {
		t.Fatalf("nudges on screen after allowing: got %+v, want none", on)
	}
}

func TestRefocusActivatesLastOnTaskWindow(t *testing.T) {
	h, g, n := newDriftHarness(t, driftOpts{grace: 5 * time.Second})
	h.RecordWindow(editor)
	h.start(t, LevelWarn, "Editor")
	h.RecordWindow(distraction)
	h.clock.Advance(5 * time.Second)
	h.settle()
	_, id := n.first(t)
	h.NotificationAction(id, "refocus")
	h.settle()
	if _, a := g.calls(); !reflect.DeepEqual(a, []string{"10"}) {
		t.Fatalf("Refocus activated %v, want the editor", a)
	}
	if v := h.View(); v.Drift != DriftOnTask || len(n.onScreen()) != 0 {
		t.Fatalf("after Refocus: Drift, on screen: got %s, %d, want %s, 0", v.Drift, len(n.onScreen()), DriftOnTask)
	}
}

// slowJudge answers later, when the test says so.
type slowJudge struct {
	mu      sync.Mutex
	pending []func(Verdict)
	calls   int
}

func (j *slowJudge) Judge(q Question, deliver func(Verdict)) (Verdict, bool) {
	j.mu.Lock()
	defer j.mu.Unlock()
	j.calls++
	j.pending = append(j.pending, deliver)
	return Verdict{}, false
}

func (j *slowJudge) answer(i int, v Verdict) {
	j.mu.Lock()
	d := j.pending[i]
	j.mu.Unlock()
	d(v)
}

func TestAsyncVerdictAppliedOnlyToTheCurrentWindow(t *testing.T) {
	j := &slowJudge{}
	h, _, _ := newDriftHarness(t, driftOpts{judge: j})
	h.RecordWindow(distraction)
	h.start(t, LevelWarn, "Editor")
	if v := h.View(); v.Drift != DriftUnknown || !strings.Contains(v.DriftReason, "judging") {
		t.Fatalf("while judging: Drift: got %s (%q), want %s saying judging", v.Drift, v.DriftReason, DriftUnknown)
	}
	h.RecordWindow(browser)
	j.answer(0, Verdict{Task: TaskOff, Reason: "stale"}) // about Distraction: dropped
	if v := h.View(); v.Drift != DriftUnknown {
		t.Fatalf("after a stale verdict: Drift: got %s (%q), want %s, the stale verdict dropped", v.Drift, v.DriftReason, DriftUnknown)
	}
	j.answer(1, Verdict{Task: TaskOff, Reason: "Firefox is off task"})
	if v := h.View(); v.Drift != DriftDrifting || v.DriftReason != "Firefox is off task" {
		t.Fatalf("the current window's verdict: got %s (%q), want %s (%q)", v.Drift, v.DriftReason, DriftDrifting, "Firefox is off task")
	}
	// Both verdicts were cached: coming back to either asks no one.
	h.RecordWindow(distraction)
	h.RecordWindow(browser)
	if j.calls != 2 {
		t.Fatalf("judge asked %d times, want 2 (verdicts are cached per class)", j.calls)
	}
}

func TestCachedVerdictsAskTheJudgeOncePerWindow(t *testing.T) {
	var asked []Question
	h, _, _ := newDriftHarness(t, driftOpts{judge: judgeFunc(func(q Question, d func(Verdict)) (Verdict, bool) {
		asked = append(asked, q)
		return Verdict{Task: TaskOff, Reason: "model says no"}, true
	})})
	h.start(t, LevelWarn, "Editor")
	for i := 0; i < 5; i++ {
		h.RecordWindow(editor) // decided by the rules: the judge is never asked
		h.RecordWindow(distraction)
	}
	want := []Question{{NextAction: "write the intro", SuccessCondition: "intro is committed", Class: "Distraction", Title: "Distraction window"}}
	if !reflect.DeepEqual(asked, want) {
		t.Fatalf("judge asked %+v, want once about the distraction", asked)
	}
}

type judgeFunc func(Question, func(Verdict)) (Verdict, bool)

func (f judgeFunc) Judge(q Question, d func(Verdict)) (Verdict, bool) { return f(q, d) }

func TestDeadlineNotificationActions(t *testing.T) {
	h, _, n := newDriftHarness(t, driftOpts{})
	h.start(t, LevelWarn, "Editor")
	h.clock.Advance(25 * time.Minute)
	h.settle()
	shown, ids := n.history()
	if len(shown) != 1 || shown[0].Summary != "Time's up" || !reflect.DeepEqual(actionKeys(shown[0]), []string{"complete", "extend"}) {
		t.Fatalf("deadline notification: got %+v, want one %q with actions complete, extend", shown, "Time's up")
	}
	h.NotificationAction(ids[0], "extend")
	h.settle()
	if v := h.View(); v.State != StateActive || v.Deadline != h.clock.Now().Unix()+600 {
		t.Fatalf("+10 min: State, Deadline: got %s %d, want %s %d", v.State, v.Deadline, StateActive, h.clock.Now().Unix()+600)
	}
	if len(n.onScreen()) != 0 {
		t.Fatalf("Time's up after extending: got %+v on screen, want none", n.onScreen())
	}
}

func TestDriftStateSurvivesRestart(t *testing.T) {
	h, _, _ := newDriftHarness(t, driftOpts{})
	h.RecordWindow(editor)
	h.start(t, LevelBlock, "Editor")
	h.RecordWindow(distraction)
	h.settle()
	h.clock.Advance(30 * time.Second)
	h.RecordWindow(editor)
	must(t, h.Allow("Terminal"))
	live := h.View()
	h.Service.mu.Lock()
	liveDrift := h.Service.stats.drift
	h.Service.mu.Unlock()

	n := h.restart(t)
	v := n.View()
	if v.Enforcement != LevelBlock || !reflect.DeepEqual(v.AllowedClasses, []string{"Editor", "Terminal"}) || v.MinimizeCount != live.MinimizeCount {
		t.Fatalf("after restart: Enforcement, AllowedClasses, MinimizeCount: got %s %q %d, want %s %q %d", v.Enforcement, v.AllowedClasses, v.MinimizeCount, LevelBlock, []string{"Editor", "Terminal"}, live.MinimizeCount)
	}
	n.Service.mu.Lock()
	got := n.Service.stats.drift
	n.Service.mu.Unlock()
	if got != liveDrift || got != 30*time.Second {
		t.Fatalf("replayed drift: got %s, want %s as live and 30s", got, liveDrift)
	}
}

func TestEnforcementErrorIsLoggedNotFatal(t *testing.T) {
	h, g, _ := newDriftHarness(t, driftOpts{})
	g.err = errors.New("X server went away")
	h.RecordWindow(editor)
	h.start(t, LevelBlock, "Editor")
	h.RecordWindow(distraction)
	h.settle()
	if v := h.View(); v.Drift != DriftDrifting || v.MinimizeCount != 0 || v.State != StateActive {
		t.Fatalf("after a failing guard: Drift, MinimizeCount, State: got %s %d %s, want %s 0 %s", v.Drift, v.MinimizeCount, v.State, DriftDrifting, StateActive)
	}
}

func TestLateOffVerdictKeepsTheGraceFromFocusAndEnforcesAsTheSyncPath(t *testing.T) {
	j := &slowJudge{}
	h, g, n := newDriftHarness(t, driftOpts{judge: j, grace: 5 * time.Second})
	h.RecordWindow(editor)
	h.start(t, LevelBlock, "Editor")
	h.RecordWindow(browser)
	if v := h.View(); v.Drift != DriftUnknown || v.DriftReason != "judging…" {
		t.Fatalf("while the model thinks: got %s (%q), want %s (%q)", v.Drift, v.DriftReason, DriftUnknown, "judging…")
	}
	h.clock.Advance(3 * time.Second)
	j.answer(0, Verdict{Task: TaskOff, Reason: "a browser tab about cats"})
	if v := h.View(); v.Drift != DriftOnTask || !strings.Contains(v.DriftReason, "a browser tab about cats; it becomes drift after 5s") {
		t.Fatalf("inside the grace: Drift: got %s (%q), want %s saying a browser tab about cats; it becomes drift after 5s", v.Drift, v.DriftReason, DriftOnTask)
	}
	h.clock.Advance(2 * time.Second) // 5 s after focus arrived, not after the verdict
	h.settle()
	v := h.View()
	if v.Drift != DriftDrifting || v.DriftReason != "a browser tab about cats" || !v.Enforced || v.MinimizeCount != 1 {
		t.Fatalf("after the grace: Drift, DriftReason, Enforced, MinimizeCount: got %s %q %v %d, want %s %q true 1", v.Drift, v.DriftReason, v.Enforced, v.MinimizeCount, DriftDrifting, "a browser tab about cats")
	}
	if m, a := g.calls(); !reflect.DeepEqual(m, []string{"30"}) || !reflect.DeepEqual(a, []string{"10"}) {
		t.Fatalf("guard calls: got minimized %v activated %v, want [30] then [10]", m, a)
	}
	if shown, _ := n.history(); len(shown) != 1 || shown[0].Summary != "Drifting: Firefox" {
		t.Fatalf("nudges: got %+v, want one %q", shown, "Drifting: Firefox")
	}
	if len(h.rec.nudges) != 1 || h.rec.nudges[0] != "Firefox: a browser tab about cats" {
		t.Fatalf("Nudge signals: got %q, want [%q]", h.rec.nudges, "Firefox: a browser tab about cats")
	}
}

func TestLateVerdictAfterTheGraceConfirmsDriftAtOnce(t *testing.T) {
	j := &slowJudge{}
	h, g, n := newDriftHarness(t, driftOpts{judge: j, grace: 5 * time.Second})
	h.RecordWindow(editor)
	h.start(t, LevelBlock, "Editor")
	h.RecordWindow(browser)
	h.clock.Advance(8 * time.Second)
	j.answer(0, Verdict{Task: TaskOff, Reason: "\x1b[31mvideo\x1b[0m\nsite " + strings.Repeat("x", 300)})
	h.settle()
	v := h.View()
	if v.Drift != DriftDrifting || v.MinimizeCount != 1 {
		t.Fatalf("a verdict after the grace: Drift, MinimizeCount: got %s %d, want %s 1", v.Drift, v.MinimizeCount, DriftDrifting)
	}
	if strings.ContainsAny(v.DriftReason, "\x1b\n") || utf8.RuneCountInString(v.DriftReason) > MaxReasonLen || !strings.HasPrefix(v.DriftReason, "[31mvideo [0m site xxx") {
		t.Fatalf("DriftReason: got %q, want the model's reason cleaned: one line, no ESC, at most %d characters, starting %q", v.DriftReason, MaxReasonLen, "[31mvideo [0m site xxx")
	}
	if m, _ := g.calls(); len(m) != 1 {
		t.Fatalf("minimized: got %v, want one window", m)
	}
	if shown, _ := n.history(); len(shown) != 1 {
		t.Fatalf("nudges: got %+v, want one", shown)
	}
}

func TestLateVerdictLosesToARuleAndRetriesAfterUnknown(t *testing.T) {
	j := &slowJudge{}
	h, _, _ := newDriftHarness(t, driftOpts{judge: j})
	h.RecordWindow(editor)
	h.start(t, LevelWarn, "Editor")
	h.RecordWindow(browser)
	j.answer(0, Verdict{Task: TaskUnknown, Reason: "judge unreachable: connection refused"})
	if v := h.View(); v.Drift != DriftUnknown || v.DriftReason != "judge unreachable: connection refused" {
		t.Fatalf("a failed judge: got %s (%q), want %s (%q)", v.Drift, v.DriftReason, DriftUnknown, "judge unreachable: connection refused")
	}
	j.answer(0, Verdict{Task: TaskOff, Reason: "off topic"}) // the judge's retry
	if v := h.View(); v.Drift != DriftDrifting {
		t.Fatalf("the retry's verdict: Drift: got %s (%q), want %s", v.Drift, v.DriftReason, DriftDrifting)
	}

	h.RecordWindow(distraction)
	must(t, h.Allow("Distraction"))
	j.answer(1, Verdict{Task: TaskOff, Reason: "the model disagrees"})
	if v := h.View(); v.Drift != DriftOnTask {
		t.Fatalf("a late verdict against the person's rule: Drift: got %s (%q), want %s", v.Drift, v.DriftReason, DriftOnTask)
	}
}

func TestAPrivateClassTitleNeverReachesTheJudge(t *testing.T) {
	var asked []Question
	h, _, _ := newDriftHarness(t, driftOpts{private: []string{"Signal"}, judge: judgeFunc(func(q Question, _ func(Verdict)) (Verdict, bool) {
		asked = append(asked, q)
		return Verdict{}, false
	})})
	h.start(t, LevelWarn, "Editor")
	h.RecordWindow(titled("7", "Signal", "Alice: the secret plan"))
	if len(asked) != 1 || asked[0].Title != "" || asked[0].Class != "Signal" {
		t.Fatalf("the judge was asked: got %+v, want once about Signal with no title", asked)
	}
}

// During the grace Drift still reads on_task, and GraceEnds says it is a
// grace and when it ends; drifting, or back on task, it is 0.
func TestGraceEndsSaysTheGraceRuns(t *testing.T) {
	h, _, _ := newDriftHarness(t, driftOpts{grace: 5 * time.Second})
	h.RecordWindow(editor)
	h.start(t, LevelWarn, "Editor")
	if v := h.View(); v.GraceEnds != 0 {
		t.Fatalf("on task: GraceEnds: got %d, want 0", v.GraceEnds)
	}
	h.clock.Advance(time.Minute)
	h.RecordWindow(distraction)
	h.settle()
	want := h.clock.Now().Add(5 * time.Second).Unix()
	if v := h.View(); v.Drift != DriftOnTask || v.GraceEnds != want {
		t.Fatalf("in the grace: Drift, GraceEnds: got %s %d, want %s %d", v.Drift, v.GraceEnds, DriftOnTask, want)
	}
	h.clock.Advance(5 * time.Second)
	h.settle()
	if v := h.View(); v.Drift != DriftDrifting || v.GraceEnds != 0 {
		t.Fatalf("drifting: Drift, GraceEnds: got %s %d, want %s 0", v.Drift, v.GraceEnds, DriftDrifting)
	}
	h.RecordWindow(editor)
	h.settle()
	if v := h.View(); v.Drift != DriftOnTask || v.GraceEnds != 0 {
		t.Fatalf("back on task: Drift, GraceEnds: got %s %d, want %s 0", v.Drift, v.GraceEnds, DriftOnTask)
	}
}
