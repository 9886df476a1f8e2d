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
