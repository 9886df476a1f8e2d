package persist

import (
	"os"
	"path/filepath"
	"testing"
)

func TestReviewNotesAreAppendedBesideTheChain(t *testing.T) {
	dir := filepath.Join(t.TempDir(), "state")
	s, _, err := Open(dir)
	if err != nil {
		t.Fatal(err)
	}
	defer s.Close()
	for _, n := range [][2]string{{"a", "first note"}, {"b", "a \"quoted\" note\n"}} {
		if err := s.SaveReviewNote(n[0], n[1]); err != nil {
			t.Fatal(err)
		}
	}
	path := filepath.Join(dir, ReviewNotesFileName)
	data, err := os.ReadFile(path)
	want := `{"version":1,"session_id":"a","note":"first note"}` + "\n" + `{"version":1,"session_id":"b","note":"a \"quoted\" note\n"}` + "\n"
	if err != nil || string(data) != want {
		t.Fatalf("review-notes.jsonl: got %q (%v), want %q", data, err, want)
	}
	for id, want := range map[string]string{"a": "first note", "b": "a \"quoted\" note\n", "c": ""} {
		if got, err := s.ReviewNoteOf(id); err != nil || got != want {
			t.Errorf("ReviewNoteOf(%s): got %q, %v; want %q", id, got, err, want)
		}
	}
	if fi, _ := os.Stat(path); fi.Mode().Perm() != 0o600 {
		t.Errorf("mode: got %v, want 0600", fi.Mode().Perm())
	}
	if _, err := os.Stat(filepath.Join(dir, auditFileName)); err == nil {
		if audit, _ := os.ReadFile(filepath.Join(dir, auditFileName)); len(audit) != 0 {
			t.Errorf("audit.jsonl after notes: got %q, want nothing of them", audit)
		}
	}
}
