package llmjudge

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"io"
	"net/http"
	"strings"
	"time"

	"github.com/antidrift/antidrift/service"
)

// The review's note (service.ReviewNoter): two sentences about an ended
// session, asked of the judge's model with its endpoint, transport and
// privacy rules. The model is told the scrubbed summary only — the
// commitment, the figures, window classes and site hosts, the changes the
// review proposes — never a window title.

const noteSystemPrompt = `You write a short note on a person's ended focus session, for them to read beside its figures.
You are given the session as JSON: the next action they committed to, their success condition, the outcome,
seconds of drift and away time, window switches, time per window class, time per site host, and the rule
changes antidrift proposes. Write exactly two plain sentences: what went well or what pulled them away, and
one concrete suggestion for the next session. No lists, no markdown, no greeting.`

// maxNote is the longest note the schema lets the model write: two
// sentences, with room (the core keeps at most service.MaxReviewNote).
const maxNote = 300

var noteSchema = map[string]any{
	"type":                 "object",
	"properties":           map[string]any{"note": map[string]any{"type": "string", "maxLength": maxNote}},
	"required":             []string{"note"},
	"additionalProperties": false,
}

// noteMaxTokens bounds the note's reply: the longest note the schema
// allows, even a token per character, and its JSON.
const noteMaxTokens = maxNote + 64

// noteTimeout is how long a note may take: longer than a verdict, since
// the model writes more, and nothing waits for it.
func (j *Judge) noteTimeout() time.Duration { return max(4*j.timeout, 10*time.Second) }

// ReviewNote implements service.ReviewNoter.
func (j *Judge) ReviewNote(ctx context.Context, f service.ReviewFacts) (string, error) {
	body, err := chatBody(j.model, noteSystemPrompt, f, noteMaxTokens, "review_note", noteSchema)
	if err != nil {
		return "", err
	}
	ctx, cancel := context.WithTimeout(ctx, j.noteTimeout())
	defer cancel()
	stop := context.AfterFunc(j.ctx, cancel) // Close ends it too
	defer stop()
	req, err := http.NewRequestWithContext(ctx, http.MethodPost, j.url, bytes.NewReader(body))
	if err != nil {
		return "", err
	}
	req.Header.Set("Content-Type", "application/json")
	resp, err := j.client.Do(req)
	if err != nil {
		return "", errors.New(describe(err, j.noteTimeout()))
	}
	defer resp.Body.Close()
	content, err := readContent(resp, noteMaxTokens)
	if err != nil {
		return "", err
	}
	dec := json.NewDecoder(strings.NewReader(content))
	dec.DisallowUnknownFields()
	var v struct {
		Note *string `json:"note"`
	}
	if err := dec.Decode(&v); err != nil || v.Note == nil || dec.More() {
		return "", errors.New("the model's note did not match its schema")
	}
	if _, err := dec.Token(); err != io.EOF {
		return "", errors.New("the model's note did not match its schema")
	}
	return *v.Note, nil
}
