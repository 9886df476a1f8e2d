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
		t.Fatalf("on the editor: %s (%s)", v.Drift, v.DriftReason)
	}
	h.RecordWindow(distraction)
	h.clock.Advance(4 * time.Second)
	h.settle()
	if v := h.View(); v.Drift != DriftOnTask || !strings.Contains(v.DriftReason, "becomes drift after 5s") {
		t.Fatalf("inside the grace: %s (%s)", v.Drift, v.DriftReason)
	}
	if shown, _ := n.history(); len(shown) != 0 {
		t.Fatalf("nudged inside the grace: %+v", shown)
	}
	h.clock.Advance(time.Second)
	h.settle()
	v := h.View()
	if v.Drift != DriftDrifting || v.Enforced || v.DriftReason != "Distraction is not in this session's allowlist" {
		t.Fatalf("after the grace: %+v", v)
	}
	shown, _ := n.history()
	if len(shown) != 1 || shown[0].Summary != "Drifting: Distraction" ||
		!reflect.DeepEqual(actionKeys(shown[0]), []string{"refocus", "allow", "not_distraction"}) ||
		shown[0].Actions[1].Label != "Allow Distraction" || !strings.Contains(shown[0].Body, "write the intro") {
		t.Fatalf("nudge %+v", shown)
	}
	if strings.Contains(shown[0].Body, "Distraction window") {
		t.Fatal("the nudge carries the window title")
	}
	if len(h.rec.nudges) != 1 || h.rec.nudges[0] != "Distraction: Distraction is not in this session's allowlist" {
		t.Fatalf("Nudge signal %v", h.rec.nudges)
	}
	if m, a := g.calls(); len(m)+len(a) != 0 {
		t.Fatalf("the guard was called at warn: %v %v", m, a)
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
		t.Fatalf("%d nudges before the repeat interval", len(shown))
	}
	h.clock.Advance(time.Second)
	h.settle()
	shown, ids := n.history()
	if len(shown) != 2 || ids[0] != ids[1] || shown[1].ReplacesID != ids[0] {
		t.Fatalf("the repeat did not replace the first nudge: ids %v replaces %d", ids, shown[1].ReplacesID)
	}
	if len(h.rec.nudges) != 2 {
		t.Fatalf("Nudge signals %v", h.rec.nudges)
	}
	h.RecordWindow(editor)
	h.settle()
	if on := n.onScreen(); len(on) != 0 {
		t.Fatalf("nudge still on screen back on task: %+v", on)
	}
	if v := h.View(); v.Drift != DriftOnTask {
		t.Fatalf("back on task: %s", v.Drift)
	}
	h.clock.Advance(10 * time.Minute)
	h.settle()
	if shown, _ := n.history(); len(shown) != 2 {
		t.Fatalf("nudged again after drift ended: %d", len(shown))
	}
}

func TestBlockIconifiesTheJudgedWindowAndHandsFocusBack(t *testing.T) {
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
				t.Fatalf("MinimizeCount %d Enforced %v", v.MinimizeCount, v.Enforced)
			}
			shown, _ := n.history()
			want := []string{"refocus", "allow", "not_distraction"}
			if level == LevelLocked {
				want = []string{"refocus"} // no widening at locked
			}
			if !reflect.DeepEqual(actionKeys(shown[0]), want) {
				t.Fatalf("actions %v, want %v", actionKeys(shown[0]), want)
			}
			// Back on task, Enforced goes; re-raising and staying iconifies again.
			h.RecordWindow(editor)
			if h.View().Enforced {
				t.Fatal("Enforced while on task")
			}
			h.RecordWindow(distraction)
			h.clock.Advance(time.Second)
			h.settle()
			if m, _ := g.calls(); len(m) != 2 || h.View().MinimizeCount != 2 {
				t.Fatalf("re-raised distraction minimized %v times", len(m))
			}
			must(t, h.Complete())
			_, err := h.End()
			must(t, err)
			if s := h.store.sealed()[0]; s.MinimizeCount != 2 || s.DriftSeconds != 2 {
				t.Fatalf("summary minimize_count %d drift_seconds %d", s.MinimizeCount, s.DriftSeconds)
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
		t.Fatalf("after our own iconify the nudge should explain it: %+v", on)
	}
	_, ids := n.history()
	h.NotificationAction(ids[0], "allow")
	h.settle()
	if v := h.View(); len(v.AllowedClasses) != 2 || len(n.onScreen()) != 0 {
		t.Fatalf("Allow from the lingering nudge: %v, %d on screen", v.AllowedClasses, len(n.onScreen()))
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
			t.Errorf("%s (no guard %v): guard called %v %v", c.level, c.noGuard, m, a)
		}
		if shown, _ := n.history(); len(shown) != c.nudges {
			t.Errorf("%s: %d nudges, want %d", c.level, len(shown), c.nudges)
		}
		if v := h.View(); v.Drift != DriftDrifting || v.MinimizeCount != 0 {
			t.Errorf("%s: drift %s minimize %d", c.level, v.Drift, v.MinimizeCount)
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
		t.Fatalf("a skipped iconify was counted: %d", v.MinimizeCount)
	}
	if _, a := g.calls(); len(a) != 0 {
		t.Fatalf("focus handed back although nothing was iconified: %v", a)
	}
}

func TestUnknownWithoutEvidenceOrAllowlist(t *testing.T) {
	h, _, n := newDriftHarness(t, driftOpts{})
	h.RecordWindow(distraction)
	h.start(t, LevelWarn) // no classes
	if v := h.View(); v.Drift != DriftUnknown || !strings.Contains(v.DriftReason, "allows no window classes") {
		t.Fatalf("no allowlist: %s (%s)", v.Drift, v.DriftReason)
	}
	must(t, h.Allow("Editor"))
	if v := h.View(); v.Drift != DriftDrifting {
		t.Fatalf("after allowing Editor while on Distraction: %s", v.Drift)
	}
	h.RecordWindow(Window{Reason: "no window has focus"})
	h.settle()
	if v := h.View(); v.Drift != DriftUnknown || v.DriftReason != "evidence unavailable: no window has focus" {
		t.Fatalf("no evidence: %s (%s)", v.Drift, v.DriftReason)
	}
	if on := n.onScreen(); len(on) != 0 {
		t.Fatal("the nudge stayed up when evidence went away")
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
	_, ids := n.history()
	h.NotificationAction(ids[0]+100, "allow") // not ours: ignored
	if v := h.View(); len(v.AllowedClasses) != 1 {
		t.Fatalf("a foreign notification's action was obeyed: %v", v.AllowedClasses)
	}
	h.NotificationAction(ids[0], "allow")
	h.settle()
	v := h.View()
	if !reflect.DeepEqual(v.AllowedClasses, []string{"Editor", "Distraction"}) || v.Drift != DriftOnTask {
		t.Fatalf("after Allow: %v %s", v.AllowedClasses, v.Drift)
	}
	if on := n.onScreen(); len(on) != 0 {
		t.Fatal("the nudge stayed after allowing")
	}
}

func TestRefocusActivatesLastOnTaskWindow(t *testing.T) {
	h, g, n := newDriftHarness(t, driftOpts{grace: 5 * time.Second})
	h.RecordWindow(editor)
	h.start(t, LevelWarn, "Editor")
	h.RecordWindow(distraction)
	h.clock.Advance(5 * time.Second)
	h.settle()
	_, ids := n.history()
	h.NotificationAction(ids[0], "refocus")
	h.settle()
	if _, a := g.calls(); !reflect.DeepEqual(a, []string{"10"}) {
		t.Fatalf("Refocus activated %v, want the editor", a)
	}
	if v := h.View(); v.Drift != DriftOnTask || len(n.onScreen()) != 0 {
		t.Fatalf("after Refocus: %s, %d on screen", v.Drift, len(n.onScreen()))
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
		t.Fatalf("while judging: %s (%s)", v.Drift, v.DriftReason)
	}
	h.RecordWindow(browser)
	j.answer(0, Verdict{Task: TaskOff, Reason: "stale"}) // about Distraction: dropped
	if v := h.View(); v.Drift != DriftUnknown {
		t.Fatalf("a stale verdict was applied: %s (%s)", v.Drift, v.DriftReason)
	}
	j.answer(1, Verdict{Task: TaskOff, Reason: "Firefox is off task"})
	if v := h.View(); v.Drift != DriftDrifting || v.DriftReason != "Firefox is off task" {
		t.Fatalf("the current window's verdict: %s (%s)", v.Drift, v.DriftReason)
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
		t.Fatalf("deadline notification %+v", shown)
	}
	h.NotificationAction(ids[0], "extend")
	h.settle()
	if v := h.View(); v.State != StateActive || v.Deadline != h.clock.Now().Unix()+600 {
		t.Fatalf("+10 min: %s deadline %d", v.State, v.Deadline)
	}
	if len(n.onScreen()) != 0 {
		t.Fatal("Time's up stayed on screen after extending")
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
		t.Fatalf("restart lost enforcement state: %+v", v)
	}
	n.Service.mu.Lock()
	got := n.Service.stats.drift
	n.Service.mu.Unlock()
	if got != liveDrift || got != 30*time.Second {
		t.Fatalf("replayed drift %s, live %s", got, liveDrift)
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
		t.Fatalf("%+v", v)
	}
}

func TestLateOffVerdictKeepsTheGraceFromFocusAndEnforcesAsTheSyncPath(t *testing.T) {
	j := &slowJudge{}
	h, g, n := newDriftHarness(t, driftOpts{judge: j, grace: 5 * time.Second})
	h.RecordWindow(editor)
	h.start(t, LevelBlock, "Editor")
	h.RecordWindow(browser)
	if v := h.View(); v.Drift != DriftUnknown || v.DriftReason != "judging…" {
		t.Fatalf("while the model thinks: %s (%s)", v.Drift, v.DriftReason)
	}
	h.clock.Advance(3 * time.Second)
	j.answer(0, Verdict{Task: TaskOff, Reason: "a browser tab about cats"})
	if v := h.View(); v.Drift != DriftOnTask || !strings.Contains(v.DriftReason, "a browser tab about cats; it becomes drift after 5s") {
		t.Fatalf("inside the grace: %s (%s)", v.Drift, v.DriftReason)
	}
	h.clock.Advance(2 * time.Second) // 5 s after focus arrived, not after the verdict
	h.settle()
	v := h.View()
	if v.Drift != DriftDrifting || v.DriftReason != "a browser tab about cats" || !v.Enforced || v.MinimizeCount != 1 {
		t.Fatalf("after the grace: %+v", v)
	}
	if m, a := g.calls(); !reflect.DeepEqual(m, []string{"30"}) || !reflect.DeepEqual(a, []string{"10"}) {
		t.Fatalf("minimized %v activated %v", m, a)
	}
	if shown, _ := n.history(); len(shown) != 1 || shown[0].Summary != "Drifting: Firefox" {
		t.Fatalf("nudges %+v", shown)
	}
	if len(h.rec.nudges) != 1 || h.rec.nudges[0] != "Firefox: a browser tab about cats" {
		t.Fatalf("Nudge signals %v", h.rec.nudges)
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
		t.Fatalf("a verdict after the grace: %s, %d minimized", v.Drift, v.MinimizeCount)
	}
	if strings.ContainsAny(v.DriftReason, "\x1b\n") || utf8.RuneCountInString(v.DriftReason) > MaxReasonLen || !strings.HasPrefix(v.DriftReason, "[31mvideo [0m site xxx") {
		t.Fatalf("the model's reason was not cleaned: %q", v.DriftReason)
	}
	if m, _ := g.calls(); len(m) != 1 {
		t.Fatalf("minimized %v", m)
	}
	if shown, _ := n.history(); len(shown) != 1 {
		t.Fatalf("nudges %+v", shown)
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
		t.Fatalf("a failed judge: %s (%s)", v.Drift, v.DriftReason)
	}
	j.answer(0, Verdict{Task: TaskOff, Reason: "off topic"}) // the judge's retry
	if v := h.View(); v.Drift != DriftDrifting {
		t.Fatalf("the retry's verdict was dropped: %s (%s)", v.Drift, v.DriftReason)
	}

	h.RecordWindow(distraction)
	must(t, h.Allow("Distraction"))
	j.answer(1, Verdict{Task: TaskOff, Reason: "the model disagrees"})
	if v := h.View(); v.Drift != DriftOnTask {
		t.Fatalf("a late verdict overrode the person's rule: %s (%s)", v.Drift, v.DriftReason)
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
		t.Fatalf("asked %+v", asked)
	}
}
