package service

import (
	"context"
	"encoding/json"
	"errors"
	"strings"
	"sync"
	"testing"
	"time"
)

// fakeNoter stands in for the model: it records what it was told.
type fakeNoter struct {
	mu    sync.Mutex
	told  []ReviewFacts
	note  string
	err   error
	asked chan struct{}
}

func (f *fakeNoter) ReviewNote(_ context.Context, facts ReviewFacts) (string, error) {
	f.mu.Lock()
	f.told = append(f.told, facts)
	f.mu.Unlock()
	defer func() { f.asked <- struct{}{} }()
	return f.note, f.err
}

// noteStore is the fake store that keeps notes.
type noteStore struct {
	*fakeStore
	mu    sync.Mutex
	notes map[string]string
}

func (n *noteStore) ReviewNoteOf(id string) (string, error) {
	n.mu.Lock()
	defer n.mu.Unlock()
	return n.notes[id], nil
}

func (n *noteStore) SaveReviewNote(id, note string) error {
	n.mu.Lock()
	defer n.mu.Unlock()
	n.notes[id] = note
	return nil
}

func TestReviewNoteIsShownKeptBesideAndNeverSealed(t *testing.T) {
	for _, tc := range []struct {
		name, note string
		err        error
		want       string
	}{
		{"a note", "You kept to the handler.\n\tNext time allow the docs.\x1b[31m", nil, "You kept to the handler. Next time allow the docs. [31m"},
		{"a failing model", "", errors.New("judge unreachable: connection refused"), ""},
		{"an oversized note", strings.Repeat("word ", 200), nil, strings.Repeat("word ", 80)[:MaxReviewNote-1] + "…"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			noter := &fakeNoter{note: tc.note, err: tc.err, asked: make(chan struct{}, 1)}
			store := &noteStore{fakeStore: newFakeStore(), notes: map[string]string{}}
			clock := newFakeClock()
			h := &harness{clock: clock, store: store.fakeStore}
			h.Service = New(Options{Store: store, Clock: clock, Logger: quiet, DefaultAllowed: []string{"Editor"}, Noter: noter})
			must(t, h.Recover(Snapshot{}))
			t.Cleanup(h.Shutdown)
			h.RecordWindow(win("Editor", "secret-plan.txt - Editor"))
			id := h.start(t, LevelWarn)
			clock.Advance(time.Minute)
			h.RecordWindow(win("Chat", "Alice: the secret launch date"))
			clock.Advance(time.Minute)
			must(t, h.Complete())
			select {
			case <-noter.asked:
			case <-time.After(10 * time.Second):
				t.Fatal("the model was never asked for a note")
			}
			h.settle() // the background ask has finished
			told, _ := json.Marshal(noter.told)
			if strings.Contains(string(told), "secret") || !strings.Contains(string(told), `"class":"Chat"`) || !strings.Contains(string(told), `"next_action":"write the intro"`) {
				t.Errorf("the model was told %s; want the classes and the commitment, never a title", told)
			}
			if got := h.View().ReviewNote; got != tc.want {
				t.Errorf("ReviewNote: got %q, want %q", got, tc.want)
			}
			if got := store.notes[id]; got != tc.want {
				t.Errorf("the note kept beside the summary: got %q, want %q", got, tc.want)
			}
			// A daemon restarted during the review shows the kept note again
			// (and does not ask the model again).
			h.Shutdown()
			h.Service = New(Options{Store: store, Clock: clock, Logger: quiet, DefaultAllowed: []string{"Editor"}, Noter: noter})
			must(t, h.Recover(store.last()))
			if got := h.View().ReviewNote; got != tc.want {
				t.Errorf("ReviewNote after a restart in review: got %q, want %q", got, tc.want)
			}
			if len(noter.told) != 1 {
				t.Errorf("the model was asked %d times, want once", len(noter.told))
			}
			hash, err := h.End()
			must(t, err)
			sealed := store.sealed()
			line, _ := json.Marshal(sealed[len(sealed)-1])
			if hash == "" || (tc.want != "" && strings.Contains(string(line), tc.want[:10])) {
				t.Errorf("the sealed summary %s: want it sealed (hash %q) without the note", line, hash)
			}
			if got := h.View().ReviewNote; got != "" {
				t.Errorf("ReviewNote after End: got %q, want none", got)
			}
		})
	}
}

// hangingNoter is a model that never answers until it is told to stop.
type hangingNoter struct{ asked chan struct{} }

func (h hangingNoter) ReviewNote(ctx context.Context, _ ReviewFacts) (string, error) {
	close(h.asked)
	<-ctx.Done()
	return "too late", ctx.Err()
}

// A model that hangs delays nothing: the move to review and its reads
// answer at once, and Shutdown does not wait for it.
func TestAHangingModelDelaysNothing(t *testing.T) {
	noter := hangingNoter{asked: make(chan struct{})}
	clock := newFakeClock()
	h := &harness{clock: clock, store: newFakeStore()}
	h.Service = New(Options{Store: h.store, Clock: clock, Logger: quiet, Noter: noter})
	must(t, h.Recover(Snapshot{}))
	h.RecordWindow(win("Editor", "notes"))
	h.start(t, LevelWarn)
	clock.Advance(time.Minute)
	must(t, h.Complete())
	<-noter.asked
	if _, err := h.ReviewProposals(); err != nil || h.View().ReviewNote != "" {
		t.Fatalf("in review while the model hangs: got %v, note %q; want the proposals and no note", err, h.View().ReviewNote)
	}
	done := make(chan struct{})
	go func() { h.Shutdown(); close(done) }()
	select {
	case <-done:
	case <-time.After(10 * time.Second):
		t.Fatal("Shutdown waited for a hanging model")
	}
}
