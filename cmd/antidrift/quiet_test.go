package main

import (
	"strings"
	"testing"
)

// --quiet and --no-quiet decide for one session over config's quiet; the
// status says a quiet session is quiet.
func TestStartQuietFlags(t *testing.T) {
	s := startDaemon(t, "quiet = true\n")
	if st := s.status(t); st["quiet"] != true {
		t.Fatalf("status --json quiet with quiet = true, before a start: got %v, want true", st["quiet"])
	}
	s.ok(t, "start", "read mail", "--done-when", "inbox empty", "--for", "25m", "--no-quiet")
	if st := s.status(t); st["quiet"] != false {
		t.Fatalf("status --json quiet after start --no-quiet: got %v, want false", st["quiet"])
	}
	if out := s.ok(t, "status"); strings.Contains(out, "quiet") {
		t.Fatalf("status of a session that is not quiet: got\n%s\nwant no quiet line", out)
	}
	s.ok(t, "complete")
	s.ok(t, "end")

	s2 := startDaemon(t, "")
	s2.ok(t, "start", "write", "--done-when", "written", "--for", "25m", "--quiet")
	if st := s2.status(t); st["quiet"] != true {
		t.Fatalf("status --json quiet after start --quiet: got %v, want true", st["quiet"])
	}
	if out := s2.ok(t, "status"); !strings.Contains(out, "quiet") {
		t.Fatalf("status of a quiet session: got\n%s\nwant a quiet line", out)
	}
	r := s2.run(t, "start", "x", "--done-when", "y", "--for", "1m", "--quiet", "--no-quiet")
	if r.code == 0 || !strings.Contains(r.stderr, "choose one") {
		t.Fatalf("start --quiet --no-quiet: got code %d, %q; want a usage error saying to choose one", r.code, r.stderr)
	}
}
