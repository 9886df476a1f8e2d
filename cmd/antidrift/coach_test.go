package main

import (
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"net/http"
	"net/http/httptest"
	"os/exec"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/antidrift/antidrift/internal/testsupport/testenv"
)

// The coach end to end: a real daemon on a private bus, the CLI, busctl,
// and a stand-in model server answering the coach's requests with fixed,
// malformed, oversized and slow replies.

// standInModel answers chat completions with what reply says, and says on
// asked when a coach request arrives.
type standInModel struct {
	mu    sync.Mutex
	reply string        // the message content; "" holds the request until release or its end
	asked chan struct{} // a coach request arrived
	hold  chan struct{} // closed: held requests are answered with good
}

const goodProposalJSON = `{"next_action":"write the 300-word opening of chapter 2","success_condition":"the opening is committed","timebox_minutes":45,"allowed_rules":["xterm","url:scholar.google.com"],"why":"a first step you can see"}`

func startStandInModel(t *testing.T) (*standInModel, string) {
	m := &standInModel{asked: make(chan struct{}, 8), hold: make(chan struct{}), reply: goodProposalJSON}
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		var req struct {
			ResponseFormat struct {
				JSONSchema struct{ Name string } `json:"json_schema"`
			} `json:"response_format"`
		}
		_ = json.NewDecoder(r.Body).Decode(&req)
		content := `{"on_task":true,"reason":"fine"}`
		if req.ResponseFormat.JSONSchema.Name == "proposal" {
			m.asked <- struct{}{}
			m.mu.Lock()
			var hold chan struct{}
			content, hold = m.reply, m.hold
			m.mu.Unlock()
			if content == "" {
				select {
				case <-hold:
					content = goodProposalJSON
				case <-r.Context().Done():
					return
				}
			}
		}
		b, _ := json.Marshal(map[string]any{"choices": []any{map[string]any{"finish_reason": "stop", "message": map[string]any{"role": "assistant", "content": content}}}})
		w.Write(b)
	}))
	t.Cleanup(srv.Close)
	return m, srv.URL + "/v1"
}

func (m *standInModel) answer(content string) {
	m.mu.Lock()
	m.reply = content
	m.mu.Unlock()
}

func coachConfig(url string) string {
	return fmt.Sprintf("[judge]\nkind = \"llm\"\nendpoint = %q\ncoach_timeout = \"3s\"\n", url)
}

func (s *session) state(t *testing.T) string {
	t.Helper()
	out, err := s.d.Busctl(t, "get-property", "State")
	if err != nil {
		t.Fatal(err)
	}
	return out
}

func TestCoachWithoutAModelSaysSoAndChangesNothing(t *testing.T) {
	s := startDaemon(t, "")
	r := s.run(t, "plan", "--coach", "thesis")
	if r.code != 1 || !strings.Contains(r.stderr, "there is no model to ask") || !strings.Contains(r.stderr, "Nothing was changed.") || r.stdout != "" {
		t.Fatalf("plan --coach without a model: got %v, want exit 1 saying there is no model and nothing changed", r)
	}
	if got := s.state(t); got != `s "locked"` {
		t.Fatalf("State: got %s, want locked (nothing changed)", got)
	}
}

func TestCoachProposesAndStartFromPlanAcceptsItWithFlagsOverriding(t *testing.T) {
	_, url := startStandInModel(t)
	s := startDaemon(t, coachConfig(url))
	out := s.ok(t, "plan", "--coach", "thesis")
	for _, want := range []string{"The coach proposes (nothing has started):", "next action: write the 300-word opening of chapter 2",
		"done when:   the opening is committed", "for:         45m", "allow:       xterm, url:scholar.google.com", "antidrift start --from-plan"} {
		if !strings.Contains(out, want) {
			t.Fatalf("plan --coach: got\n%s\nwant it to say %q", out, want)
		}
	}
	// --json: the proposal as an object (asked again, kept again).
	j := okJSON[map[string]any](t, s, "plan", "--coach", "thesis")
	if j["next_action"] != "write the 300-word opening of chapter 2" || fmt.Sprint(j["timebox_secs"]) != "2700" || fmt.Sprint(j["allowed_rules"]) != "[xterm url:scholar.google.com]" {
		t.Fatalf("plan --coach --json: got %v, want the proposal's fields", j)
	}
	// Nothing started before acceptance.
	if got := s.state(t); got != `s "planning"` {
		t.Fatalf("State after the proposal: got %s, want planning", got)
	}
	if got, err := s.d.Busctl(t, "get-property", "Proposal"); err != nil || !strings.Contains(got, `"write the 300-word opening of chapter 2" "the opening is committed" 2700 2 "xterm" "url:scholar.google.com"`) {
		t.Fatalf("Proposal: got %s (%v), want the proposal kept", got, err)
	}
	// Accepted, one field changed by a flag.
	s.ok(t, "start", "--from-plan", "--for", "30m")
	st := okJSON[map[string]any](t, s, "status")
	if st["state"] != "active" || st["next_action"] != "write the 300-word opening of chapter 2" || st["success_condition"] != "the opening is committed" ||
		fmt.Sprint(st["timebox_seconds"]) != "1800" || fmt.Sprint(st["allowed_classes"]) != "[xterm url:scholar.google.com]" {
		t.Fatalf("after start --from-plan --for 30m: got %v, want the proposal with a 30m timebox", st)
	}
	if got, _ := s.d.Busctl(t, "get-property", "Proposal"); got != `(sstass) "" "" 0 0 ""` {
		t.Fatalf("Proposal after Start: got %s, want none", got)
	}
}

func TestStartFromPlanWithoutAProposalIsRefused(t *testing.T) {
	s := startDaemon(t, "")
	s.ok(t, "plan")
	r := s.run(t, "start", "--from-plan")
	if r.code != 1 || !strings.Contains(r.stderr, "there is no proposal to start from") {
		t.Fatalf("start --from-plan with no proposal: got %v, want exit 1 saying there is none", r)
	}
	if got := s.state(t); got != `s "planning"` {
		t.Fatalf("State: got %s, want planning", got)
	}
}

func TestCoachRefusesAnUnusableReplyAndKeepsNothing(t *testing.T) {
	m, url := startStandInModel(t)
	s := startDaemon(t, coachConfig(url))
	for _, c := range []struct{ name, reply, want string }{
		{"prose", "Sure! Write chapter two.", "the model's proposal was not usable: it is not the JSON object asked for"},
		{"an escape in the next action", strings.Replace(goodProposalJSON, "write the", `write\u001b[2J the`, 1), "the model's proposal was not usable: next_action must not contain control characters"},
		{"oversized", strings.Replace(goodProposalJSON, "the opening is committed", strings.Repeat("y", 600), 1), "the model's proposal was not usable: success_condition is 600 characters; at most 500 are allowed"},
		{"a rule that does not parse", strings.Replace(goodProposalJSON, `"xterm"`, `"url:"`, 1), "the model's proposal was not usable: allowed_classes entry 1"},
	} {
		t.Run(c.name, func(t *testing.T) {
			m.answer(c.reply)
			r := s.run(t, "plan", "--coach", "thesis")
			if r.code != 1 || !strings.Contains(r.stderr, c.want) || !strings.Contains(r.stderr, "Nothing has started.") || r.stdout != "" {
				t.Fatalf("got %v, want exit 1 saying %q", r, c.want)
			}
			if got, _ := s.d.Busctl(t, "get-property", "Proposal"); got != `(sstass) "" "" 0 0 ""` {
				t.Fatalf("Proposal after an unusable reply: got %s, want none (never half of one)", got)
			}
			if r := s.run(t, "start", "--from-plan"); r.code != 1 || !strings.Contains(r.stderr, "no proposal") {
				t.Fatalf("start --from-plan after an unusable reply: got %v, want refused", r)
			}
			if got := s.state(t); got != `s "planning"` {
				t.Fatalf("State: got %s, want planning", got)
			}
		})
	}
}

func TestCoachTextIsNeutralizedWhereShown(t *testing.T) {
	m, url := startStandInModel(t)
	s := startDaemon(t, coachConfig(url))
	m.answer(strings.Replace(goodProposalJSON, "a first step you can see", "see \u202egnp.exe", 1))
	out := s.ok(t, "plan", "--coach", "thesis")
	if strings.ContainsRune(out, '\u202e') {
		t.Fatalf("plan --coach printed a bidirectional control from the model: %q", out)
	}
}

func TestAnotherMethodAnswersWhileTheModelIsSlow(t *testing.T) {
	testenv.Need(t, "busctl")
	m, url := startStandInModel(t)
	// A coach timeout longer than the test waits: the model answers only
	// when released.
	s := startDaemon(t, strings.Replace(coachConfig(url), `"3s"`, `"25s"`, 1))
	m.answer("") // held until released
	ctx, cancel := context.WithTimeout(context.Background(), wait)
	defer cancel()
	cmd := exec.CommandContext(ctx, testenv.Binary(t, "antidrift"), "plan", "--coach", "thesis")
	cmd.Env = s.d.Bus.Env()
	var stdout, stderr bytes.Buffer
	cmd.Stdout, cmd.Stderr = &stdout, &stderr
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	done := make(chan error, 1)
	go func() { done <- cmd.Wait() }()
	select {
	case <-m.asked:
	case <-time.After(wait):
		t.Fatal("the coach's request: got none at the stand-in, want one")
	}
	// The model has not answered: the daemon answers others meanwhile.
	if got := s.state(t); got != `s "planning"` {
		t.Fatalf("State while the model thinks: got %s, want planning", got)
	}
	if r := s.run(t, "status"); r.code != 0 {
		t.Fatalf("status while the model thinks: got %v, want an answer", r)
	}
	select {
	case err := <-done:
		t.Fatalf("plan --coach ended before the model answered (%v): the State read above did not happen while the model thought\n%s", err, stderr.String())
	default:
	}
	close(m.hold)
	if err := <-done; err != nil || !strings.Contains(stdout.String(), "The coach proposes") {
		t.Fatalf("plan --coach once the model answered: %v\n%s%s", err, stdout.String(), stderr.String())
	}
}

func TestAModelThatNeverAnswersIsTooSlow(t *testing.T) {
	m, url := startStandInModel(t)
	s := startDaemon(t, coachConfig(url))
	m.answer("") // never released
	r := s.run(t, "plan", "--coach", "thesis")
	if r.code != 1 || !strings.Contains(r.stderr, "the model was too slow: no answer within 3s") {
		t.Fatalf("a model that does not answer: got %v, want exit 1 saying it was too slow", r)
	}
	if got := s.state(t); got != `s "planning"` {
		t.Fatalf("State: got %s, want planning", got)
	}
}

// Against llama.cpp's llama-server with the tiny random-weights model (the
// judge's tests build it): the daemon's coach request is one a real server
// takes, its schema-constrained reply is a proposal the core accepts as
// Start's arguments, it is printed, nothing starts, and start --from-plan
// starts it. Random weights write random words: the sense is not checked.
func TestCoachAgainstARealModelServer(t *testing.T) {
	llama := testenv.StartLlamaServer(t, "")
	// Generous but bounded: the tiny model writes a whole proposal, on two
	// cores shared with everything else, under the race detector.
	const slow = 110 * time.Second
	s := startDaemon(t, fmt.Sprintf("[judge]\nkind = \"llm\"\nendpoint = %q\ncoach_timeout = %q\n", llama.URL, slow.String()))
	env := append(s.d.Bus.Env(), "ANTIDRIFT_TIMEOUT="+(slow+10*time.Second).String())
	ctx, cancel := context.WithTimeout(context.Background(), slow+20*time.Second)
	defer cancel()
	cmd := exec.CommandContext(ctx, testenv.Binary(t, "antidrift"), "plan", "--coach", "thesis chapter 2")
	cmd.Env = env
	var stdout, stderr bytes.Buffer
	cmd.Stdout, cmd.Stderr = &stdout, &stderr
	if err := cmd.Run(); err != nil || !strings.Contains(stdout.String(), "The coach proposes (nothing has started):") {
		t.Fatalf("plan --coach against llama-server: got %v\n%s%s\nwant a proposal printed\n%s", err, stdout.String(), stderr.String(), llama.Output())
	}
	t.Logf("the tiny model proposed:\n%s", stdout.String())
	if got := s.state(t); got != `s "planning"` {
		t.Fatalf("State after the proposal: got %s, want planning", got)
	}
	s.ok(t, "start", "--from-plan")
	if got := s.state(t); got != `s "active"` {
		t.Fatalf("State after start --from-plan: got %s, want active", got)
	}
}
