package persist

import (
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/antidrift/antidrift/service"
)

// sealAndSave seals n sessions and then saves state.json, as the core
// does after a seal, and returns them as written.
func sealAndSave(t *testing.T, s *Store, n int) []service.Summary {
	t.Helper()
	sealed := appendSummaries(t, s, n)
	if err := s.SaveSnapshot(service.Snapshot{State: service.StateLocked}); err != nil {
		t.Fatal(err)
	}
	return sealed
}

// restart closes the store and opens it again, loading state.json as the
// daemon does at start.
func restart(t *testing.T, s *Store) *Store {
	t.Helper()
	s2, _ := reopen(t, s)
	if _, _, _, err := s2.LoadSnapshot(); err != nil {
		t.Fatal(err)
	}
	return s2
}

// Cutting the chain at a line boundary — the last line, the last two, or
// the tail replaced by a fresh valid chain — leaves a file that verifies by
// itself; the head recorded at the last seal says it is short.
func TestACutTailIsBroken(t *testing.T) {
	for _, tc := range []struct {
		name string
		cut  func(t *testing.T, s *Store, lines [][]byte) [][]byte
		want []string
	}{
		{"last line deleted", func(_ *testing.T, _ *Store, l [][]byte) [][]byte { return l[:2] },
			[]string{"audit.jsonl ends at seq 2, but seq 3 (hash ", "was sealed at", "removed"}},
		{"last two lines deleted", func(_ *testing.T, _ *Store, l [][]byte) [][]byte { return l[:1] },
			[]string{"audit.jsonl ends at seq 1, but seq 3 (hash "}},
		{"tail rewritten as a fresh valid chain", func(t *testing.T, s *Store, l [][]byte) [][]byte {
			// A person who knows the hash rule reseals seq 2 and 3 with other
			// contents: every line verifies.
			prev := sampleSummary(0)
			prev.Hash = string(l[0][len(l[0])-66 : len(l[0])-2])
			out := [][]byte{l[0]}
			for i := 2; i <= 3; i++ {
				sum := sampleSummary(10 + i)
				sum.Outcome = service.OutcomeCompleted
				line, sealed, err := sealSummary(sum, uint64(i-1), prev.Hash)
				if err != nil {
					t.Fatal(err)
				}
				out = append(out, line[:len(line)-1])
				prev = sealed
			}
			return out
		}, []string{"seq 3 in audit.jsonl has hash ", "the tail was rewritten"}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			s := openStore(t, newStateDir(t))
			sealed := sealAndSave(t, s, 3)
			s.Close()
			writeAuditLines(t, s, tc.cut(t, s, auditLines(t, s)))
			s = restart(t, s)
			r := s.VerifyAudit()
			if r.OK || !r.MissingTail || !containsAll(r.Problem, tc.want...) || !strings.Contains(r.Problem, sealed[2].Hash[:8]) {
				t.Fatalf("VerifyAudit: got %+v, want not OK, a missing tail, a problem naming %q and %s", r, tc.want, sealed[2].Hash[:8])
			}
			// A later seal does not heal it: the anchor stays where it was.
			if _, err := s.AppendAudit(sampleSummary(50)); err != nil {
				t.Fatal(err)
			}
			if err := s.SaveSnapshot(service.Snapshot{State: service.StateLocked}); err != nil {
				t.Fatal(err)
			}
			s = restart(t, s)
			if r := s.VerifyAudit(); r.OK {
				t.Fatalf("VerifyAudit after another seal: got %+v, want the cut chain still not OK", r)
			}
		})
	}
}

// A crash between the append and the save of state.json leaves the file
// one line past the recorded head: that is fine, and the head catches up.
func TestAChainLongerThanItsHeadIsFine(t *testing.T) {
	s := openStore(t, newStateDir(t))
	sealAndSave(t, s, 2)
	late, err := s.AppendAudit(sampleSummary(2)) // state.json not saved after it
	if err != nil {
		t.Fatal(err)
	}
	snapBefore := readFile(t, filepath.Join(s.Dir(), stateFileName))
	s.Close()
	writeFile(t, filepath.Join(s.Dir(), stateFileName), snapBefore)
	s = restart(t, s)
	if r := s.VerifyAudit(); !r.OK || r.Entries != 3 || r.Head.Seq != 3 {
		t.Fatalf("VerifyAudit: got %+v, want OK, 3 entries, head seq 3", r)
	}
	if err := s.SaveSnapshot(service.Snapshot{State: service.StateLocked}); err != nil {
		t.Fatal(err)
	}
	if snap, _, _, _ := s.LoadSnapshot(); snap.AuditHead == nil || snap.AuditHead.Seq != 3 || snap.AuditHead.Hash != late.Hash {
		t.Fatalf("the recorded head after a save: got %+v, want seq 3, hash %s", snap.AuditHead, late.Hash)
	}
}

// The walk goes past a bad line: one altered line leaves the rest
// chaining; a spliced file does not.
func TestVerifyCountsEveryBadLine(t *testing.T) {
	s := openStore(t, newStateDir(t))
	sealAndSave(t, s, 5)
	lines := auditLines(t, s)
	altered := append([][]byte{}, lines...)
	altered[1] = []byte(strings.Replace(string(lines[1]), `"switch_count":12`, `"switch_count":2`, 1))
	writeAuditLines(t, s, altered)
	r := s.VerifyAudit()
	if r.OK || r.BadLines != 1 || !r.RestChains || r.Entries != 1 || !containsAll(r.Problem, "line 2 (seq 2)", "1 of 5", "still chain among themselves") {
		t.Fatalf("one altered line: got %+v, want 1 bad line (line 2, seq 2), 1 entry, the rest chaining among themselves", r)
	}

	spliced := [][]byte{lines[0], lines[2], lines[1], lines[4], lines[3]}
	writeAuditLines(t, s, spliced)
	r = s.VerifyAudit()
	if r.OK || r.BadLines != 4 || r.RestChains || len(r.FirstBad) != 3 || !containsAll(r.Problem, "4 of 5", "and 1 more", "do not chain either") {
		t.Fatalf("a spliced file: got %+v, want 4 bad lines (3 named and 1 more), the rest not chaining either", r)
	}
}

// state.json damaged (set aside) takes the recorded head with it: the
// store says the tail can no longer be checked from it.
func TestLosingStateJSONSaysTheTailIsUnchecked(t *testing.T) {
	s := openStore(t, newStateDir(t))
	sealAndSave(t, s, 2)
	s.Close()
	path := filepath.Join(s.Dir(), stateFileName)
	writeFile(t, path, []byte("{"))
	s2, _ := reopen(t, s)
	if _, _, problem, _ := s2.LoadSnapshot(); !containsAll(problem, "can no longer be noticed", "--journal") {
		t.Fatalf("a damaged state.json: got problem %q, want it to say a cut can no longer be noticed and name --journal", problem)
	}
	s2.Close()
	os.Remove(path)
	s3, _ := reopen(t, s2)
	if _, _, problem, _ := s3.LoadSnapshot(); !containsAll(problem, "state.json is missing", "2 sealed session(s)", "can no longer be noticed") {
		t.Fatalf("a missing state.json: got problem %q, want it to say so, name 2 sealed session(s), and that a cut can no longer be noticed", problem)
	}
}

// A Reader (antidrift report, the Report method) verifies as the daemon
// does: a whole chain is intact, and one whose last line was cut is broken
// by the head state.json recorded.
func TestReaderVerifiesAgainstTheRecordedHead(t *testing.T) {
	s := openStore(t, newStateDir(t))
	sealAndSave(t, s, 3)
	if r := NewReader(s.Dir()).VerifyAudit(); !r.OK || r.Entries != 3 {
		t.Fatalf("a whole chain read by a Reader: got %+v, want OK with 3 entries", r)
	}
	s.Close()
	writeAuditLines(t, s, auditLines(t, s)[:2])
	if r := NewReader(s.Dir()).VerifyAudit(); r.OK || !strings.Contains(r.Problem, "audit.jsonl ends at seq 2, but seq 3") {
		t.Fatalf("a cut chain read by a Reader: got %+v, want not OK: audit.jsonl ends at seq 2, but seq 3 …", r)
	}
}

// A last line torn mid-write (a crash, or a cut inside the line) is named,
// and the file is said to end at the last line whose seq can be read — not
// at seq 0 with seven good lines before it. The daemon and a Reader agree.
func TestATornTailNamesTheLastGoodSeq(t *testing.T) {
	s := openStore(t, newStateDir(t))
	sealAndSave(t, s, 8)
	path := filepath.Join(s.Dir(), auditFileName)
	lines := auditLines(t, s)
	torn := append(bytesJoinLines(lines[:7]), lines[7][:len(lines[7])/2]...)
	writeFile(t, path, torn)
	for name, r := range map[string]service.AuditReport{"the daemon": s.VerifyAudit(), "a Reader": NewReader(s.Dir()).VerifyAudit()} {
		if r.OK || r.Entries != 7 || !containsAll(r.Problem, "line 8: unfinished", "audit.jsonl ends at seq 7, but seq 8", "after seq 7") {
			t.Errorf("%s: VerifyAudit: got %+v, want not OK, 7 entries, line 8 unfinished and the chain ending at seq 7 named", name, r)
		}
	}
}

// bytesJoinLines joins lines, each ended by "\n".
func bytesJoinLines(lines [][]byte) []byte {
	var out []byte
	for _, l := range lines {
		out = append(append(out, l...), '\n')
	}
	return out
}
