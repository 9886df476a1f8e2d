package service

import (
	"errors"
	"strings"
	"sync"
	"testing"
	"time"
)

// fakeRulesFile stands in for config's rules.toml.
type fakeRulesFile struct {
	mu      sync.Mutex
	applied []ReviewProposal
	err     error
}

func (f *fakeRulesFile) Apply(p ReviewProposal) (string, error) {
	f.mu.Lock()
	defer f.mu.Unlock()
	if f.err != nil {
		return "/cfg/rules.toml", f.err
	}
	f.applied = append(f.applied, p)
	return "/cfg/rules.toml", nil
}

func newReviewHarness(t *testing.T, store *fakeStore, clock *fakeClock, rf RulesFile) *harness {
	t.Helper()
	h := &harness{clock: clock, store: store}
	h.Service = New(Options{Store: store, Clock: clock, Logger: quiet, DriftGrace: 5 * time.Second, NudgeRepeat: 2 * time.Minute,
		Notifier: &fakeNotifier{}, DefaultAllowed: []string{"Editor"}, RulesFile: rf})
	h.rec = &recorder{s: h.Service}
	h.AddListener(h.rec)
	must(t, h.Recover(store.last()))
	t.Cleanup(h.Shutdown)
	return h
}

// A session that looked a docs window up three times between on-task work
// proposes allowing it; applying writes the rule and the next session,
// started with the person's allowed classes, judges the docs on task.
func TestReviewProposesAndAppliesForTheNextSession(t *testing.T) {
	rf := &fakeRulesFile{}
	store, clock := newFakeStore(), newFakeClock()
	h := newReviewHarness(t, store, clock, rf)
	editor, docs := winID("1", "Editor"), winID("2", "Docs")

	var refused *Error
	if _, err := h.ReviewProposals(); !errors.As(err, &refused) || refused.Kind != NotPermitted {
		t.Fatalf("ReviewProposals with no session: got %v, want NotPermitted", err)
	}
	h.RecordWindow(editor)
	if _, err := h.Start("write", "written", 3600, "", nil); err != nil {
		t.Fatal(err)
	}
	if _, err := h.ApplyProposal(1); !errors.As(err, &refused) || refused.Kind != NotPermitted {
		t.Fatalf("ApplyProposal while active: got %v, want NotPermitted", err)
	}
	for i := 0; i < 3; i++ {
		clock.Advance(time.Minute)
		h.RecordWindow(docs)
		clock.Advance(25 * time.Second)
		h.RecordWindow(editor)
	}
	clock.Advance(time.Minute)
	must(t, h.Complete())

	list, err := h.ReviewProposals()
	if err != nil || len(list) != 1 || list[0].Kind != ProposeAllow || list[0].Rule != "Docs" || !strings.Contains(list[0].Reason, "3 visits") {
		t.Fatalf("ReviewProposals: got %+v, %v; want one proposal to allow Docs", list, err)
	}
	// The same evidence after a restart in review: replayed from the raw log.
	h = newReviewHarness(t, store, clock, rf)
	if again, err := h.ReviewProposals(); err != nil || len(again) != 1 || again[0] != list[0] {
		t.Fatalf("after a restart: got %+v, %v; want %+v", again, err, list)
	}

	var bad *Error
	if _, err := h.ApplyProposal(2); !errors.As(err, &bad) || bad.Kind != InvalidArgument || bad.Fault == nil || bad.Fault.Rule != RuleProposal || bad.Fault.Limit != 1 {
		t.Fatalf("ApplyProposal(2): got %v, want InvalidArgument, rule proposal, limit 1", err)
	}
	rf.err = errors.New("disk full")
	if _, err := h.ApplyProposal(1); !errors.As(err, &bad) || bad.Kind != Storage || !strings.Contains(err.Error(), "disk full; nothing was applied") {
		t.Fatalf("ApplyProposal with a failing rules file: got %v, want Storage saying nothing was applied", err)
	}
	rf.err = nil
	done, err := h.ApplyProposal(1)
	if err != nil || done != `wrote allowed_classes + "Docs" to /cfg/rules.toml; the next session uses it` {
		t.Fatalf("ApplyProposal(1): got %q, %v", done, err)
	}
	if again, _ := h.ApplyProposal(1); !strings.HasPrefix(again, "already applied: ") || len(rf.applied) != 1 {
		t.Errorf("applying again: got %q and %d writes, want already applied and 1 write", again, len(rf.applied))
	}
	if l, _ := h.ReviewProposals(); len(l) != 1 || l[0].Number != 1 || !strings.HasSuffix(l[0].Reason, "(applied: "+done+")") {
		t.Errorf("after applying: got %+v, want proposal 1 still there, saying it was applied", l)
	}

	_, err = h.End()
	must(t, err)
	h.RecordWindow(editor)
	if _, err := h.Start("write more", "written", 3600, "", nil); err != nil {
		t.Fatal(err)
	}
	h.RecordWindow(docs)
	clock.Advance(10 * time.Second) // past the grace
	if v := h.View(); v.Drift != DriftOnTask || !strings.Contains(v.DriftReason, "allowed") {
		t.Errorf("the next session: Docs is %s (%s), want on task; allowed %q", v.Drift, v.DriftReason, v.AllowedClasses)
	}
}

func TestReviewWithoutARulesFile(t *testing.T) {
	h := newReviewHarness(t, newFakeStore(), newFakeClock(), nil)
	h.RecordWindow(winID("1", "Editor"))
	h.start(t, LevelWarn)
	for i := 0; i < 3; i++ {
		h.clock.Advance(time.Minute)
		h.RecordWindow(winID("2", "Docs"))
		h.clock.Advance(25 * time.Second)
		h.RecordWindow(winID("1", "Editor"))
	}
	must(t, h.Complete())
	var e *Error
	if _, err := h.ApplyProposal(1); !errors.As(err, &e) || e.Kind != Storage || !strings.Contains(e.Msg, "no rules file") {
		t.Errorf("got %v, want Storage: no rules file", err)
	}
}

// An entry allowed while the session was active is proposed for every
// session, also after a restart in review (state.json keeps it).
func TestReviewProposesWhatWasAllowedDuringTheSession(t *testing.T) {
	store, clock := newFakeStore(), newFakeClock()
	h := newReviewHarness(t, store, clock, &fakeRulesFile{})
	h.RecordWindow(winID("1", "Editor"))
	h.start(t, LevelWarn, "Editor", "Terminal") // allowed at start: not proposed
	h.RecordWindow(winID("2", "Docs"))
	must(t, h.Allow("Docs"))
	clock.Advance(5 * time.Minute)
	h.RecordWindow(winID("1", "Editor"))
	must(t, h.Complete())
	h = newReviewHarness(t, store, clock, &fakeRulesFile{})
	list, err := h.ReviewProposals()
	if err != nil || len(list) != 1 || list[0].Rule != "Docs" || !strings.Contains(list[0].Reason, "you allowed Docs during this session; it held 5m0s on task") {
		t.Fatalf("after a restart in review: got %+v, %v; want one proposal keeping Docs", list, err)
	}
}

// Applying the grace and the level changes the settings the next session
// starts from: its drift waits the new grace, and a Start without a level
// gets block.
func TestAppliedGraceAndLevelHoldForTheNextSession(t *testing.T) {
	rf := &fakeRulesFile{}
	store, clock := newFakeStore(), newFakeClock()
	h := newReviewHarness(t, store, clock, rf)
	editor, chat := winID("1", "Editor"), winID("2", "Chat")
	h.RecordWindow(editor)
	h.start(t, LevelWarn)
	// Three near misses of the 5 s grace, and two ignored nudges.
	for _, d := range []time.Duration{8 * time.Second, 9 * time.Second, 10 * time.Second, 3 * time.Minute, 3 * time.Minute} {
		clock.Advance(time.Minute)
		h.RecordWindow(chat)
		clock.Advance(d)
		h.RecordWindow(editor)
	}
	must(t, h.Complete())
	list, err := h.ReviewProposals()
	must(t, err)
	kinds := map[string]uint32{}
	for _, p := range list {
		kinds[p.Kind] = p.Number
	}
	if kinds[ProposeGrace] == 0 || kinds[ProposeLevel] == 0 {
		t.Fatalf("proposals: got %+v, want a grace and a level", list)
	}
	for _, n := range []uint32{kinds[ProposeGrace], kinds[ProposeLevel]} {
		if _, err := h.ApplyProposal(n); err != nil {
			t.Fatal(err)
		}
	}
	if len(rf.applied) != 2 || rf.applied[0].Grace != 15*time.Second || rf.applied[1].Level != LevelBlock {
		t.Fatalf("written: got %+v, want the grace 15s and level block", rf.applied)
	}
	_, err = h.End()
	must(t, err)
	h.RecordWindow(editor)
	if _, err := h.Start("more", "done", 3600, "", nil); err != nil {
		t.Fatal(err)
	}
	if v := h.View(); v.Enforcement != LevelBlock {
		t.Errorf("the next session's level: got %s, want block", v.Enforcement)
	}
	h.RecordWindow(chat)
	clock.Advance(12 * time.Second)
	if v := h.View(); v.Drift == DriftDrifting {
		t.Errorf("12 s into Chat with a grace of 15 s: got %s (%s), want not yet drifting", v.Drift, v.DriftReason)
	}
	clock.Advance(4 * time.Second)
	if v := h.View(); v.Drift != DriftDrifting {
		t.Errorf("16 s into Chat: got %s (%s), want drifting", v.Drift, v.DriftReason)
	}
}
