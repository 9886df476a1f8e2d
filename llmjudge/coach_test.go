package llmjudge

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"net/http"
	"net/http/httptest"
	"reflect"
	"regexp"
	"strings"
	"testing"
	"time"

	"github.com/antidrift/antidrift/internal/testsupport/testenv"
	"github.com/antidrift/antidrift/service"
)

// The coach against a stand-in server (fixed, malformed, oversized and
// slow replies) and, last, against the real llama-server.

var brief = service.Brief{
	Intention: "thesis",
	Allowed:   []string{"emacs"},
	Recent: []service.RecentSession{{NextAction: "outline the thesis", SuccessCondition: "outline pushed", TimeboxSecs: 1500,
		Outcome: service.OutcomeCompleted, Classes: []string{"Emacs"}, Sites: []string{"scholar.google.com"}}},
}

const goodReply = `{"next_action":"write the 300-word opening of chapter 2","success_condition":"the opening is committed","timebox_minutes":45,"allowed_rules":["emacs","url:scholar.google.com"],"why":"a first step you can see"}`

func newCoach(t *testing.T, url string, timeout time.Duration) *Coach {
	t.Helper()
	c, err := NewCoach(CoachConfig{Endpoint: url, Model: "tiny", Timeout: timeout})
	if err != nil {
		t.Fatal(err)
	}
	return c
}

func standIn(t *testing.T, h http.HandlerFunc) string {
	srv := httptest.NewServer(h)
	t.Cleanup(srv.Close)
	return srv.URL + "/v1"
}

func TestCoachRequestCarriesTheBriefUnderASchemaAndNoTitle(t *testing.T) {
	var body map[string]any
	url := standIn(t, func(w http.ResponseWriter, r *http.Request) {
		_ = json.NewDecoder(r.Body).Decode(&body)
		fmt.Fprint(w, reply(goodReply, "stop"))
	})
	p, err := newCoach(t, url, time.Second).Coach(context.Background(), brief)
	if err != nil {
		t.Fatal(err)
	}
	want := service.Proposal{NextAction: "write the 300-word opening of chapter 2", SuccessCondition: "the opening is committed",
		TimeboxSecs: 2700, Allowed: []string{"emacs", "url:scholar.google.com"}, Why: "a first step you can see"}
	if !reflect.DeepEqual(p, want) {
		t.Fatalf("proposal: got %+v, want %+v", p, want)
	}
	format := body["response_format"].(map[string]any)
	schema := format["json_schema"].(map[string]any)["schema"].(map[string]any)
	if format["type"] != "json_schema" || schema["additionalProperties"] != false || len(schema["required"].([]any)) != 5 {
		t.Fatalf("response_format: got %v, want a json_schema requiring the five fields", format)
	}
	var facts map[string]any
	must(t, json.Unmarshal([]byte(body["messages"].([]any)[1].(map[string]any)["content"].(string)), &facts))
	wantFacts := map[string]any{"intention": "thesis", "allowed": []any{"emacs"}, "recent_sessions": []any{map[string]any{
		"next_action": "outline the thesis", "success_condition": "outline pushed", "timebox_minutes": 25.0, "outcome": "completed",
		"classes": []any{"Emacs"}, "sites": []any{"scholar.google.com"}}}}
	if !reflect.DeepEqual(facts, wantFacts) {
		t.Fatalf("the model was told %v, want exactly %v", facts, wantFacts)
	}
}

func TestCoachRepliesThatAreNoProposal(t *testing.T) {
	for _, c := range []struct{ name, body, want string }{
		{"prose", reply("Sure! Write chapter 2.", "stop"), "the model's proposal was not usable: it is not the JSON object asked for"},
		{"extra field", reply(strings.TrimSuffix(goodReply, "}")+`,"level":"observe"}`, "stop"), "not the JSON object asked for"},
		{"missing fields", reply(`{"next_action":"x","why":""}`, "stop"), "it lacks allowed_rules, success_condition, timebox_minutes"},
		{"string for minutes", reply(strings.Replace(goodReply, `45`, `"45"`, 1), "stop"), "not the JSON object asked for"},
		{"too long a timebox", reply(strings.Replace(goodReply, `45`, `100000`, 1), "stop"), "timebox_minutes must be 1 to 1440; got 100000"},
		{"trailing text", reply(goodReply+" hope it helps", "stop"), "it has more after the JSON object"},
		{"cut off", reply(goodReply, "length"), "its reply was cut off at 1024 tokens"},
		{"not a completion", `<html>`, "its reply was not a chat completion"},
		{"oversized", reply(`{"next_action":"`+strings.Repeat("x", 2<<20)+`"}`, "stop"), "its reply was not a chat completion"},
		{"HTTP 400", "", "the model's server failed: HTTP 400 Bad Request"},
	} {
		t.Run(c.name, func(t *testing.T) {
			url := standIn(t, func(w http.ResponseWriter, r *http.Request) {
				if c.body == "" {
					http.Error(w, "response_format not supported", http.StatusBadRequest)
					return
				}
				fmt.Fprint(w, c.body)
			})
			_, err := newCoach(t, url, 5*time.Second).Coach(context.Background(), brief)
			if err == nil || !strings.Contains(err.Error(), c.want) {
				t.Fatalf("got %v, want an error saying %q", err, c.want)
			}
			var u *service.UnusableProposal
			// Every reply that came is the model's proposal not usable; an
			// HTTP error is the server failing.
			if want := c.name != "HTTP 400"; errors.As(err, &u) != want {
				t.Fatalf("%v: got an UnusableProposal %v, want %v", err, !want, want)
			}
		})
	}
}

// The schema's patterns take what Start takes and refuse what it refuses
// (the core checks again; these keep a constrained model inside).
func TestCoachSchemaPatterns(t *testing.T) {
	text, rule := regexp.MustCompile(coachTextPattern), regexp.MustCompile(coachRulePattern)
	for _, c := range []struct {
		re   *regexp.Regexp
		s    string
		want bool
	}{
		{text, "write the 300-word opening of chapter 2", true},
		{text, "schreibe die Einleitung für Kapitel 2 – 300 Wörter", true},
		{text, " leading space", false},
		{text, "an\nescape", false},
		{text, "a \"quote\"", false},
		{text, "a\x1b[2Jterminal", false},
		{text, strings.Repeat("x", coachTextLen), true},
		{text, strings.Repeat("x", coachTextLen+1), false},
		{rule, "emacs", true},
		{rule, "org.gnome.Terminal", true},
		{rule, "url:scholar.google.com", true},
		{rule, "url:", false},
		{rule, "firefox:*GitHub*", false},
		{rule, "a b", false},
	} {
		if got := c.re.MatchString(c.s); got != c.want {
			t.Errorf("%s matching %q: got %v, want %v", c.re, c.s, got, c.want)
		}
	}
}

func TestCoachSlowAndUnreachableSayWhy(t *testing.T) {
	release := make(chan struct{})
	url := standIn(t, func(w http.ResponseWriter, r *http.Request) {
		select {
		case <-release:
		case <-r.Context().Done():
		}
	})
	defer close(release)
	_, err := newCoach(t, url, 200*time.Millisecond).Coach(context.Background(), brief)
	if err == nil || err.Error() != "the model was too slow: no answer within 200ms" {
		t.Fatalf("slow: got %v, want \"the model was too slow: no answer within 200ms\"", err)
	}
	_, err = newCoach(t, "http://127.0.0.1:1/v1", time.Second).Coach(context.Background(), brief)
	if err == nil || err.Error() != "the model is unreachable: connection refused" {
		t.Fatalf("unreachable: got %v, want \"the model is unreachable: connection refused\"", err)
	}
}

func TestCoachRefusesARemoteEndpointUnlessAllowed(t *testing.T) {
	if _, err := NewCoach(CoachConfig{Endpoint: "http://192.0.2.1:8080/v1"}); err == nil {
		t.Fatal("NewCoach with a remote endpoint: got nil, want refused (the intention stays on this machine)")
	}
	if _, err := NewCoach(CoachConfig{Endpoint: "http://192.0.2.1:8080/v1", AllowRemote: true}); err != nil {
		t.Fatalf("NewCoach with allow_remote: %v", err)
	}
}

// Against llama.cpp's llama-server with the tiny random-weights model: the
// request is one a real server accepts under response_format (no HTTP
// 400), and its schema-constrained reply reads as a proposal. Random
// weights write random words, so the proposal is not checked for sense;
// that it parses is the point.
func TestRealServerCoachRepliesParseIntoProposals(t *testing.T) {
	s := testenv.StartLlamaServer(t, "")
	p, err := newCoach(t, s.URL, realTimeout).Coach(context.Background(), brief)
	if err != nil {
		t.Fatalf("got %v, want a proposal the schema shaped\n%s", err, s.Output())
	}
	if p.TimeboxSecs < 60 || p.TimeboxSecs > 24*3600 || len(p.Allowed) > service.MaxCoachAllowed {
		t.Fatalf("proposal: got %+v, want one inside the schema's bounds", p)
	}
}
