package service

import (
	"context"
	"errors"
	"slices"
	"strings"
	"testing"
)

// fakeCoach answers with a fixed proposal or error, and records what it
// was told. block, when set, holds the answer until it is closed.
type fakeCoach struct {
	p      Proposal
	err    error
	block  chan struct{}
	asked  chan Brief
	briefs []Brief
}

func (c *fakeCoach) Coach(ctx context.Context, b Brief) (Proposal, error) {
	c.briefs = append(c.briefs, b)
	if c.asked != nil {
		c.asked <- b
	}
	if c.block != nil {
		<-c.block
	}
	return c.p, c.err
}

func newCoachHarness(t *testing.T, c Coach, allowed ...string) *harness {
	t.Helper()
	h := &harness{clock: newFakeClock(), store: newFakeStore(), reporter: &fakeReporter{}}
	h.Service = New(Options{Store: h.store, Clock: h.clock, Version: "test", Logger: quiet, Coach: c, DefaultAllowed: allowed})
	h.rec = &recorder{s: h.Service}
	h.AddListener(h.rec)
	if err := h.Recover(Snapshot{}); err != nil {
		t.Fatal(err)
	}
	return h
}

var goodProposal = Proposal{
	NextAction:       "write the 300-word opening of chapter 2",
	SuccessCondition: "the opening is committed",
	TimeboxSecs:      45 * 60,
	Allowed:          []string{"emacs", "url:scholar.google.com"},
	Why:              "a visible first step\nwith a check",
}

func wantKind(t *testing.T, err error, k ErrorKind) *Error {
	t.Helper()
	var e *Error
	if !errors.As(err, &e) || e.Kind != k {
		t.Fatalf("error: got %v, want a %s", err, k)
	}
	return e
}

func TestCoachKeepsAUsableProposalAndStartsNothing(t *testing.T) {
	h := newCoachHarness(t, &fakeCoach{p: goodProposal})
	p, err := h.Coach("  thesis  ", "")
	must(t, err)
	if p.NextAction != goodProposal.NextAction || p.Why != "a visible first step with a check" {
		t.Fatalf("proposal: got %+v, want the model's, its why on one line", p)
	}
	v := h.View()
	if v.State != StatePlanning || v.SessionID != "" {
		t.Fatalf("after Coach from locked: got state %s session %q, want planning and no session", v.State, v.SessionID)
	}
	if v.Proposal.NextAction != goodProposal.NextAction || !slices.Equal(v.Proposal.Allowed, goodProposal.Allowed) || v.Proposal.TimeboxSecs != 2700 {
		t.Fatalf("Proposal: got %+v, want the proposal kept", v.Proposal)
	}
	if _, err := h.Start(p.NextAction, p.SuccessCondition, p.TimeboxSecs, "", p.Allowed); err != nil {
		t.Fatal(err)
	}
	if v := h.View(); !v.Proposal.Empty() || v.State != StateActive || !slices.Equal(v.AllowedClasses, goodProposal.Allowed) {
		t.Fatalf("after Start: got state %s, proposal %+v, allowed %q; want active, none, the proposal's", v.State, v.Proposal, v.AllowedClasses)
	}
}

func TestCoachWithoutAModelChangesNothing(t *testing.T) {
	h := newCoachHarness(t, nil)
	_, err := h.Coach("thesis", "")
	e := wantKind(t, err, NoModel)
	if !strings.Contains(e.Msg, "no model is configured") {
		t.Fatalf("message: got %q, want it to say no model is configured", e.Msg)
	}
	if v := h.View(); v.State != StateLocked {
		t.Fatalf("state: got %s, want locked (nothing changed)", v.State)
	}
}

func TestCoachRefusesAnUnusableProposalWhole(t *testing.T) {
	for name, tc := range map[string]struct {
		p    Proposal
		want string
	}{
		"empty next action":    {Proposal{SuccessCondition: "x", TimeboxSecs: 60}, "next_action must not be empty"},
		"control characters":   {Proposal{NextAction: "a\x1b[2Jb", SuccessCondition: "x", TimeboxSecs: 60}, "next_action must not contain control characters"},
		"oversized condition":  {Proposal{NextAction: "a", SuccessCondition: strings.Repeat("y", MaxTextLen+1), TimeboxSecs: 60}, "success_condition is 501 characters"},
		"no timebox":           {Proposal{NextAction: "a", SuccessCondition: "x"}, "timebox_secs must be between 1 second and 24 hours"},
		"a rule that is wrong": {Proposal{NextAction: "a", SuccessCondition: "x", TimeboxSecs: 60, Allowed: []string{"emacs", "url:"}}, "allowed_classes entry 2"},
		"too many rules":       {Proposal{NextAction: "a", SuccessCondition: "x", TimeboxSecs: 60, Allowed: make([]string, MaxCoachAllowed+1)}, "allowed_classes has 9 entries"},
	} {
		t.Run(name, func(t *testing.T) {
			h := newCoachHarness(t, &fakeCoach{p: goodProposal})
			_, err := h.Coach("thesis", "")
			must(t, err)
			h.coach = &fakeCoach{p: tc.p}
			_, err = h.Coach("thesis again", "")
			e := wantKind(t, err, CoachFailed)
			if !strings.HasPrefix(e.Msg, "the model's proposal was not usable: "+tc.want) {
				t.Fatalf("message: got %q, want it to start %q", e.Msg, "the model's proposal was not usable: "+tc.want)
			}
			if v := h.View(); !v.Proposal.Empty() || v.State != StatePlanning {
				t.Fatalf("after a refused proposal: got %+v in %s, want no proposal (not half of one), still planning", v.Proposal, v.State)
			}
		})
	}
}

func TestCoachFailureSaysWhy(t *testing.T) {
	h := newCoachHarness(t, &fakeCoach{err: errors.New("the model was too slow: no answer within 1s")})
	_, err := h.Coach("thesis", "")
	if e := wantKind(t, err, CoachFailed); e.Msg != "the coach could not make a proposal: the model was too slow: no answer within 1s; nothing was changed" {
		t.Fatalf("message: got %q", e.Msg)
	}
}

func TestCoachIsRefusedWhileActiveAndAskedOffTheLock(t *testing.T) {
	c := &fakeCoach{p: goodProposal, block: make(chan struct{}), asked: make(chan Brief, 1)}
	h := newCoachHarness(t, c)
	done := make(chan error, 1)
	go func() { _, err := h.Coach("thesis", ""); done <- err }()
	<-c.asked
	// The model is thinking: the core answers meanwhile, and a Start
	// made now drops the answer still coming.
	if v := h.View(); v.State != StatePlanning {
		t.Fatalf("while the model thinks: state %s, want planning", v.State)
	}
	if _, err := h.Start("something else", "done", 60, "", nil); err != nil {
		t.Fatal(err)
	}
	close(c.block)
	e := wantKind(t, <-done, CoachFailed)
	if !strings.Contains(e.Msg, "dropped") {
		t.Fatalf("message: got %q, want the proposal dropped", e.Msg)
	}
	if v := h.View(); !v.Proposal.Empty() || v.NextAction != "something else" {
		t.Fatalf("after a late answer: got proposal %+v, next action %q; want none, the started one", v.Proposal, v.NextAction)
	}
	_, err := h.Coach("thesis", "")
	wantKind(t, err, NotPermitted)
}

func TestCoachHearsMatchingSessionsWithoutTitles(t *testing.T) {
	c := &fakeCoach{p: goodProposal}
	h := newCoachHarness(t, c, "emacs", "firefox:*Scholar*")
	h.store.audit = []Summary{
		{NextAction: "write the thesis outline", SuccessCondition: "outline pushed", TimeboxSecs: 1800, Outcome: OutcomeCompleted,
			Buckets: []Bucket{{Class: "Emacs", Title: "secret-title.tex", Seconds: 900}, {Title: AwayTitle, Seconds: 60}, {Class: "firefox", Title: "Bank", Seconds: 30}},
			Sites:   []SiteTime{{Host: "scholar.google.com", Seconds: 600}, {Host: "news.example", Seconds: 300, DriftSeconds: 300}}},
		{NextAction: "answer mail", SuccessCondition: "inbox zero", TimeboxSecs: 600, Outcome: OutcomeAbandoned,
			Buckets: []Bucket{{Class: "thunderbird", Title: "x", Seconds: 500}}},
	}
	_, err := h.Coach("Thesis: chapter two", "")
	must(t, err)
	b := c.briefs[0]
	if b.Intention != "Thesis: chapter two" || !slices.Equal(b.Allowed, []string{"emacs", "firefox:*Scholar*"}) || len(b.Recent) != 1 {
		t.Fatalf("brief: got %+v, want the intention, the configured rules and the one matching session", b)
	}
	r := b.Recent[0]
	if r.NextAction != "write the thesis outline" || !slices.Equal(r.Classes, []string{"Emacs", "firefox"}) || !slices.Equal(r.Sites, []string{"scholar.google.com"}) {
		t.Fatalf("recent session: got %+v, want its classes (no reserved bucket) and its mostly on-task site", r)
	}
	for _, s := range []string{"secret-title", "Bank", "news.example"} {
		if strings.Contains(strings.Join(append(append(r.Classes, r.Sites...), r.NextAction), " "), s) {
			t.Fatalf("brief: %q was told to the coach: %+v", s, r)
		}
	}
}

func TestCoachHearsTheTasksTitle(t *testing.T) {
	c := &fakeCoach{p: goodProposal}
	h := &harness{clock: newFakeClock(), store: newFakeStore(), reporter: &fakeReporter{}}
	h.Service = New(Options{Store: h.store, Clock: h.clock, Version: "test", Logger: quiet, Coach: c, Tasks: []TaskSource{newFakeTasks("work")}})
	must(t, h.Recover(Snapshot{}))
	if _, err := h.Coach("", "work:t1"); err != nil {
		t.Fatal(err)
	}
	if b := c.briefs[0]; b.TaskTitle != "Write the report" || b.Intention != "" {
		t.Fatalf("brief: got %+v, want the task's title and no intention", b)
	}
	// A task no source has: refused before anything changes.
	h2 := &harness{clock: newFakeClock(), store: newFakeStore(), reporter: &fakeReporter{}}
	h2.Service = New(Options{Store: h2.store, Clock: h2.clock, Version: "test", Logger: quiet, Coach: c, Tasks: []TaskSource{newFakeTasks("work")}})
	must(t, h2.Recover(Snapshot{}))
	_, err := h2.Coach("thesis", "work:nope")
	wantKind(t, err, InvalidArgument)
	if v := h2.View(); v.State != StateLocked {
		t.Fatalf("state after a task that is not there: got %s, want locked", v.State)
	}
}

func TestCoachWithATaskRefButNoTaskSourceIsRefused(t *testing.T) {
	h := newCoachHarness(t, &fakeCoach{p: goodProposal})
	_, err := h.Coach("thesis", "taskwarrior:1234")
	wantKind(t, err, InvalidArgument)
	if v := h.View(); v.State != StateLocked {
		t.Fatalf("state: got %s, want locked", v.State)
	}
}

func TestCancelPlanDropsTheProposal(t *testing.T) {
	h := newCoachHarness(t, &fakeCoach{p: goodProposal})
	_, err := h.Coach("thesis", "")
	must(t, err)
	must(t, h.CancelPlan())
	if v := h.View(); !v.Proposal.Empty() || v.State != StateLocked {
		t.Fatalf("after CancelPlan: got %+v in %s, want none in locked", v.Proposal, v.State)
	}
}

// A forged intention changes nothing: refused as Start refuses its text,
// before the permission table, the model or a state change.
func TestCoachRefusesAForgedIntentionAndChangesNothing(t *testing.T) {
	c := &fakeCoach{p: goodProposal}
	h := newCoachHarness(t, c)
	for _, in := range []string{"", "  ", "a\x1b]0;owned\x07b", strings.Repeat("x", MaxTextLen+1), "\xff\xfe"} {
		_, err := h.Coach(in, "")
		wantKind(t, err, InvalidArgument)
	}
	if v := h.View(); v.State != StateLocked || len(c.briefs) != 0 {
		t.Fatalf("after forged intentions: state %s, the model asked %d times; want locked, never", v.State, len(c.briefs))
	}
}
