package service

import (
	"slices"
	"testing"
)

// An adapter's problem shows in Problems, the listeners hear of it (so
// the property changes on the bus), and it goes when cleared.
func TestNoteProblem(t *testing.T) {
	h := newHarness(t)
	before := len(h.rec.views)
	h.NoteProblem("publish", "the copy in sync_dir could not be written")
	if v := h.View(); !slices.Contains(v.Problems, "the copy in sync_dir could not be written") {
		t.Fatalf("Problems: got %q, want it to hold %q", v.Problems, "the copy in sync_dir could not be written")
	}
	if len(h.rec.views) == before {
		t.Fatalf("views the listeners were told of: got %d, want more than %d", len(h.rec.views), before)
	}
	h.NoteProblem("publish", "")
	if v := h.View(); len(v.Problems) != 0 {
		t.Fatalf("Problems after clearing: got %q, want none", v.Problems)
	}
}
