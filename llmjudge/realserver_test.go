package llmjudge

import (
	"fmt"
	"strings"
	"testing"
	"time"
	"unicode/utf8"

	"github.com/antidrift/antidrift/internal/testsupport/testenv"
	"github.com/antidrift/antidrift/service"
)

// Against llama.cpp's llama-server with a tiny random-weights model
// (scripts/llama-server.sh builds both once): the request is one a real
// server accepts under response_format, and its schema-constrained replies
// parse into verdicts. Random weights decide by chance, so where a test
// needs a particular verdict the server is steered (testenv.Steering).

// realTimeout is generous: the race detector and a busy 2-core machine
// slow the model down, and these tests are about correctness, not speed.
const realTimeout = 60 * time.Second

func TestRealServerRepliesParseIntoVerdicts(t *testing.T) {
	s := testenv.StartLlamaServer(t, "")
	j := newJudge(t, s.URL, realTimeout, nil)
	for i, q := range []service.Question{
		question,
		{NextAction: "fix the flaky test", SuccessCondition: "CI is green", Class: "XTerm", Title: "htop"},
		{NextAction: "write the intro", SuccessCondition: "intro is committed", Class: "KeePassXC", Title: ""},
	} {
		v := judgeLate(t, j, q)
		if v.Task == service.TaskUnknown || v.Reason == "" || utf8.RuneCountInString(v.Reason) > maxReason {
			t.Fatalf("question %d: %+v, want a verdict with a reason of at most %d characters\n%s", i, v, maxReason, s.Output())
		}
	}
}

func TestRealServerSteeredVerdictsMapToOnAndOffTask(t *testing.T) {
	for steer, want := range map[testenv.Steering]service.Task{"false": service.TaskOff, "true": service.TaskOn} {
		t.Run(steer, func(t *testing.T) {
			s := testenv.StartLlamaServer(t, steer)
			if v := judgeLate(t, newJudge(t, s.URL, realTimeout, nil), question); v.Task != want {
				t.Fatalf("a model that says on_task %s: got %+v, want %v\n%s", steer, v, want, s.Output())
			}
		})
	}
}

func TestRealServerTooSlowIsUnknown(t *testing.T) {
	s := testenv.StartLlamaServer(t, "")
	j := newJudge(t, s.URL, time.Millisecond, nil)
	if v := judgeLate(t, j, question); v != (service.Verdict{Task: service.TaskUnknown, Reason: "judge too slow: no answer within 1ms"}) {
		t.Fatalf("verdict: got %+v, want unknown, \"judge too slow: no answer within 1ms\"", v)
	}
}

func TestRealServerKilledAndRestartedMidSession(t *testing.T) {
	s := testenv.StartLlamaServer(t, "false")
	j := newJudge(t, s.URL, realTimeout, nil)
	if v := judgeLate(t, j, question); v.Task != service.TaskOff {
		t.Fatalf("before the crash: got %+v, want off task", v)
	}
	s.Kill()
	got := make(verdicts, 4)
	q := question
	q.Title = "another tab"
	if _, ok := j.Judge(q, got.deliver); ok {
		t.Fatal("Judge: got an answer at once with no outage known yet, want one later")
	}
	if v := got.next(t); v != (service.Verdict{Task: service.TaskUnknown, Reason: "judge unreachable: connection refused"}) {
		t.Fatalf("with the server dead: got %+v, want unknown, \"judge unreachable: connection refused\"", v)
	}
	s.Start(t)
	// The retry after the backoff asks again and delivers the verdict (a
	// retry that came before the server was up delivers unknown again).
	deadline := time.Now().Add(realTimeout)
	for v := got.next(t); v.Task != service.TaskOff; v = got.next(t) {
		if v.Task != service.TaskUnknown || time.Now().After(deadline) {
			t.Fatalf("after the restart: got %+v, want unknown until off task within %v\n%s", v, realTimeout, s.Output())
		}
	}
	for i := 0; i < 3; i++ { // and the judge is back to normal
		q.Title = fmt.Sprint("tab ", i)
		if v := judgeLate(t, j, q); v.Task != service.TaskOff || strings.HasPrefix(v.Reason, "judge") {
			t.Fatalf("after recovering: got %+v, want off task from the model", v)
		}
	}
}
