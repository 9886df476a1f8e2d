package llmjudge

import (
	"context"
	"encoding/json"
	"fmt"
	"io"
	"net/http"
	"net/http/httptest"
	"strings"
	"testing"
	"time"

	"github.com/antidrift/antidrift/service"
)

var facts = service.ReviewFacts{NextAction: "write the intro", SuccessCondition: "intro is committed", Outcome: service.OutcomeCompleted,
	DriftSeconds: 300, Classes: []service.ClassSeconds{{Class: "Emacs", Seconds: 1200}, {Class: "Zeal", Seconds: 60}},
	Proposals: []string{`allowed_classes + "Zeal"`}}

// The note's request carries the scrubbed facts under the note's schema;
// only a schema-valid reply is a note, anything else an error.
func TestReviewNoteAsksWithTheFactsAndReadsOnlyASchemaValidNote(t *testing.T) {
	var request string
	for _, c := range []struct {
		name, body, want, err string
	}{
		{"a note", reply(`{"note":"You kept to the intro. Allow Zeal next time."}`, "stop"), "You kept to the intro. Allow Zeal next time.", ""},
		{"extra field", reply(`{"note":"x","mood":"good"}`, "stop"), "", "did not match its schema"},
		{"prose", reply(`Great session!`, "stop"), "", "did not match its schema"},
		{"trailing text", reply(`{"note":"x"} hope this helps`, "stop"), "", "did not match its schema"},
		{"cut off", reply(`{"note":"x"}`, "length"), "", "cut off"},
		{"not a completion", `<html>hello</html>`, "", "not a chat completion"},
	} {
		t.Run(c.name, func(t *testing.T) {
			srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
				b, _ := io.ReadAll(r.Body)
				request = string(b)
				fmt.Fprint(w, c.body)
			}))
			t.Cleanup(srv.Close)
			note, err := newJudge(t, srv.URL, time.Second, nil).ReviewNote(context.Background(), facts)
			if note != c.want || (c.err == "") != (err == nil) || (err != nil && !strings.Contains(err.Error(), c.err)) {
				t.Fatalf("got %q, %v; want %q, an error with %q", note, err, c.want, c.err)
			}
		})
	}
	var req chatRequest
	if err := json.Unmarshal([]byte(request), &req); err != nil || len(req.Messages) != 2 || req.ResponseFormat.JSONSchema.Name != "review_note" {
		t.Fatalf("the request: got %s (%v), want a system and a user message under the review_note schema", request, err)
	}
	if want, _ := json.Marshal(facts); req.Messages[1].Content != string(want) {
		t.Errorf("the user message: got %s, want the facts %s", req.Messages[1].Content, want)
	}
}

// A model slower than the note's time gives no note, in words.
func TestReviewNoteTimesOut(t *testing.T) {
	done := make(chan struct{})
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		select {
		case <-r.Context().Done():
		case <-done:
		}
	}))
	t.Cleanup(srv.Close)
	t.Cleanup(func() { close(done) }) // runs first: the handler returns, so Close does not wait
	j := newJudge(t, srv.URL, 10*time.Millisecond, nil)
	ctx, cancel := context.WithTimeout(context.Background(), 200*time.Millisecond)
	defer cancel()
	note, err := j.ReviewNote(ctx, facts)
	if note != "" || err == nil {
		t.Fatalf("got %q, %v; want no note and why", note, err)
	}
}
