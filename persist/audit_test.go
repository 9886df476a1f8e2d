package persist

import (
	"bytes"
	"crypto/sha256"
	"encoding/hex"
	"encoding/json"
	"path/filepath"
	"reflect"
	"slices"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/antidrift/antidrift/service"
)

// recomputeHash applies the documented hash rule to a line read from the
// file, independently of the package's code: replace the value of the last
// `"hash":"` with nothing and hash prev_hash followed by those bytes.
func recomputeHash(t *testing.T, prevHash string, line []byte) string {
	t.Helper()
	i := bytes.LastIndex(line, []byte(`"hash":"`))
	if i < 0 {
		t.Fatalf("got line %s, want a hash in it", line)
	}
	unsealed := append(append([]byte{}, line[:i]...), `"hash":""}`...)
	sum := sha256.Sum256(append([]byte(prevHash), unsealed...))
	return hex.EncodeToString(sum[:])
}

// sealByHand turns an unsealed line (ending in `"hash":""}`) into a sealed
// one by the documented rule, as a later version of antidrift would.
func sealByHand(t *testing.T, prevHash string, unsealed []byte) []byte {
	t.Helper()
	if !bytes.HasSuffix(unsealed, []byte(`"hash":""}`)) {
		t.Fatalf("got %s, want an unsealed line (ending \"hash\":\"\"})", unsealed)
	}
	sum := sha256.Sum256(append([]byte(prevHash), unsealed...))
	sealed := append(append([]byte{}, unsealed[:len(unsealed)-2]...), hex.EncodeToString(sum[:])...)
	return append(sealed, `"}`...)
}

func auditLines(t *testing.T, s *Store) [][]byte {
	t.Helper()
	data := readFile(t, filepath.Join(s.Dir(), auditFileName))
	if len(data) > 0 && data[len(data)-1] != '\n' {
		t.Fatalf("audit.jsonl: got %q, want it to end in a newline", data)
	}
	return bytes.Split(bytes.TrimSuffix(data, []byte("\n")), []byte("\n"))
}

func writeAuditLines(t *testing.T, s *Store, lines [][]byte) {
	t.Helper()
	writeFile(t, filepath.Join(s.Dir(), auditFileName), append(bytes.Join(lines, []byte("\n")), '\n'))
}

func appendSummaries(t *testing.T, s *Store, n int) []service.Summary {
	t.Helper()
	var sealed []service.Summary
	for i := range n {
		sum, err := s.AppendAudit(sampleSummary(i))
		if err != nil {
			t.Fatal(err)
		}
		sealed = append(sealed, sum)
	}
	return sealed
}

func TestAuditChainLinksEverySummary(t *testing.T) {
	s := openStore(t, newStateDir(t))
	sealed := appendSummaries(t, s, 3)

	if r := s.VerifyAudit(); !r.OK || r.Entries != 3 || r.Problem != "" {
		t.Errorf("VerifyAudit: got %+v, want OK with 3 entries", r)
	}
	prevHash := strings.Repeat("0", 64) // genesis
	for i, line := range auditLines(t, s) {
		var onDisk service.Summary
		if err := json.Unmarshal(line, &onDisk); err != nil {
			t.Fatalf("line %d: got %v, want JSON", i+1, err)
		}
		if onDisk.Seq != uint64(i+1) {
			t.Errorf("line %d seq: got %d, want %d", i+1, onDisk.Seq, i+1)
		}
		if onDisk.PrevHash != prevHash {
			t.Errorf("line %d prev_hash: got %s, want %s", i+1, onDisk.PrevHash, prevHash)
		}
		if want := recomputeHash(t, prevHash, line); onDisk.Hash != want {
			t.Errorf("line %d hash: got %s, want %s, as the rule gives", i+1, onDisk.Hash, want)
		}
		if onDisk.Seq != sealed[i].Seq || onDisk.PrevHash != sealed[i].PrevHash || onDisk.Hash != sealed[i].Hash {
			t.Errorf("line %d on disk: got %d/%s/%s, want %d/%s/%s, what AppendAudit returned", i+1, onDisk.Seq, onDisk.PrevHash, onDisk.Hash,
				sealed[i].Seq, sealed[i].PrevHash, sealed[i].Hash)
		}
		prevHash = onDisk.Hash
	}
	if got := s.AuditHead(); got != sealed[2].Hash {
		t.Errorf("AuditHead: got %s, want the last hash %s", got, sealed[2].Hash)
	}
}

func TestAuditLineKeysAreInFormatOrder(t *testing.T) {
	s := openStore(t, newStateDir(t))
	sum := sampleSummary(1)
	sum.Buckets = nil
	if _, err := s.AppendAudit(sum); err != nil {
		t.Fatal(err)
	}
	line := string(auditLines(t, s)[0])
	order := []string{"seq", "prev_hash", "session_id", "next_action", "success_condition", "outcome", "enforcement",
		"started_unix", "ended_unix", "timebox_secs", "switch_count", "drift_seconds", "minimize_count", "break_glass",
		"buckets", "hash"}
	at := 0
	for _, key := range order {
		i := strings.Index(line[at:], `"`+key+`":`)
		if i < 0 {
			t.Fatalf("key %q: got it missing or out of order in %s, want the order %q", key, line, order)
		}
		at += i
	}
	if !strings.Contains(line, `"buckets":[]`) {
		t.Errorf("no buckets: got %s, want them written as []", line)
	}
}

func TestAuditContainsSealedSessions(t *testing.T) {
	s := openStore(t, newStateDir(t))
	if got := s.AuditHead(); got != "" {
		t.Errorf("AuditHead of an empty chain: got %q, want \"\"", got)
	}
	sealed := appendSummaries(t, s, 2)
	for _, check := range []struct {
		id   string
		want bool
	}{{sealed[0].SessionID, true}, {sealed[1].SessionID, true}, {"never-sealed", false}} {
		if got, err := s.AuditContains(check.id); err != nil || got != check.want {
			t.Errorf("AuditContains(%s): got %v, %v; want %v", check.id, got, err, check.want)
		}
	}

	// After a restart the answer comes from the file.
	s, _ = reopen(t, s)
	if got, _ := s.AuditContains(sealed[1].SessionID); !got {
		t.Error("AuditContains of a sealed session after restart: got false, want true (else it would be sealed twice)")
	}
	if got := s.AuditHead(); got != sealed[1].Hash {
		t.Errorf("AuditHead after restart: got %s, want %s", got, sealed[1].Hash)
	}
	next, err := s.AppendAudit(sampleSummary(9))
	if err != nil || next.Seq != 3 || next.PrevHash != sealed[1].Hash {
		t.Errorf("append after restart: got seq %d prev %s, err %v; want seq 3 after %s", next.Seq, next.PrevHash, err, sealed[1].Hash)
	}
}

func TestAuditNamesAnAlteredLine(t *testing.T) {
	s := openStore(t, newStateDir(t))
	appendSummaries(t, s, 3)
	lines := auditLines(t, s)
	lines[1] = bytes.Replace(lines[1], []byte("write the persist package"), []byte("write the persist package, honest"), 1)
	writeAuditLines(t, s, lines)

	r := s.VerifyAudit()
	if r.OK || r.Entries != 1 || !containsAll(r.Problem, "line 2 (seq 2)", "hash does not match", "altered") {
		t.Errorf("VerifyAudit: got %+v; want line 2 (seq 2) named as altered, 1 good entry", r)
	}
}

func TestAuditNamesARemovedLine(t *testing.T) {
	s := openStore(t, newStateDir(t))
	appendSummaries(t, s, 3)
	lines := auditLines(t, s)
	writeAuditLines(t, s, [][]byte{lines[0], lines[2]})

	r := s.VerifyAudit()
	if r.OK || r.Entries != 1 || !containsAll(r.Problem, "line 2 (seq 3)", "removed") {
		t.Errorf("VerifyAudit: got %+v; want line 2 (seq 3) named for a removed line", r)
	}
}

func TestAuditNamesARemovedFirstLine(t *testing.T) {
	s := openStore(t, newStateDir(t))
	appendSummaries(t, s, 2)
	writeAuditLines(t, s, auditLines(t, s)[1:])

	r := s.VerifyAudit()
	if r.OK || r.Entries != 0 || !containsAll(r.Problem, "line 1 (seq 2)", "removed") {
		t.Errorf("VerifyAudit: got %+v; want no entries and line 1 (seq 2) named for a removed line", r)
	}
}

// Someone who rewrites a line and recomputes its hash by the rule still
// breaks the link from the line after it.
func TestAuditNamesARewrittenAndResealedLine(t *testing.T) {
	s := openStore(t, newStateDir(t))
	sealed := appendSummaries(t, s, 3)
	lines := auditLines(t, s)
	forged := sealed[1]
	forged.Outcome = service.OutcomeCompleted
	forged.DriftSeconds = 0
	forged.Hash = ""
	unsealed, err := json.Marshal(forged)
	if err != nil {
		t.Fatal(err)
	}
	lines[1] = sealByHand(t, sealed[0].Hash, unsealed)
	writeAuditLines(t, s, lines)

	r := s.VerifyAudit()
	if r.OK || r.Entries != 2 || !containsAll(r.Problem, "line 3 (seq 3)", "prev_hash does not match line 2's hash") {
		t.Errorf("VerifyAudit: got %+v; want 2 entries and line 3 (seq 3) named: its prev_hash does not match line 2's hash", r)
	}
}

func TestAuditNamesALineThatIsNotJSON(t *testing.T) {
	s := openStore(t, newStateDir(t))
	appendSummaries(t, s, 2)
	lines := auditLines(t, s)
	writeAuditLines(t, s, [][]byte{lines[0], []byte(`{"seq":2, oops`), lines[1]})

	if r := s.VerifyAudit(); r.OK || r.Entries != 1 || !strings.HasPrefix(r.Problem, "line 2: not valid JSON.") || r.BadLines != 1 || !r.RestChains {
		t.Errorf("VerifyAudit: got %+v; want 1 entry, line 2 named as not valid JSON, 1 bad line, the rest chaining", r)
	}
}

// A line written by a later version with a key this version does not know
// verifies, because the hash covers the line's bytes, and the chain
// continues after it.
func TestAuditLineWithAFutureKeyVerifies(t *testing.T) {
	s := openStore(t, newStateDir(t))
	sealed := appendSummaries(t, s, 2)

	future := sampleSummary(3)
	future.Seq, future.PrevHash, future.Hash = 3, sealed[1].Hash, ""
	unsealed, err := json.Marshal(future)
	if err != nil {
		t.Fatal(err)
	}
	unsealed = bytes.Replace(unsealed, []byte(`"drift_seconds":40,`), []byte(`"drift_seconds":40,"away_seconds":120,`), 1)
	if !bytes.Contains(unsealed, []byte(`"away_seconds":120`)) {
		t.Fatalf("the future key inserted: got %s, want \"away_seconds\":120 in it", unsealed)
	}
	line := sealByHand(t, sealed[1].Hash, unsealed)
	appendToFile(t, filepath.Join(s.Dir(), auditFileName), append(line, '\n'))

	s, problems := reopen(t, s)
	if len(problems) != 0 {
		t.Errorf("Open: got problems %q, want none", problems)
	}
	if r := s.VerifyAudit(); !r.OK || r.Entries != 3 {
		t.Errorf("VerifyAudit: got %+v; want OK with 3 entries: a line with an extra key still verifies", r)
	}
	next, err := s.AppendAudit(sampleSummary(4))
	if err != nil || next.Seq != 4 || next.PrevHash != recomputeHash(t, sealed[1].Hash, line) {
		t.Errorf("the chain after the future line: got %+v, %v; want seq 4 chained to it", next, err)
	}
	if r := s.VerifyAudit(); !r.OK || r.Entries != 4 {
		t.Errorf("VerifyAudit after appending: got %+v, want OK with 4 entries", r)
	}
}

// A crash mid-append leaves a line without its newline. Opening the store
// moves exactly those bytes aside, and the chain continues.
func TestAuditTornTailIsSetAsideAndTheChainContinues(t *testing.T) {
	s := openStore(t, newStateDir(t))
	sealed := appendSummaries(t, s, 2)
	full, _, err := sealSummary(sampleSummary(3), sealed[1].Seq, sealed[1].Hash)
	if err != nil {
		t.Fatal(err)
	}
	torn := full[:len(full)/2]
	auditPath := filepath.Join(s.Dir(), auditFileName)
	before := readFile(t, auditPath)
	appendToFile(t, auditPath, torn)

	if err := s.Close(); err != nil {
		t.Fatal(err)
	}
	openedAt := time.Now().Unix()
	s, problems, err := Open(s.Dir())
	if err != nil {
		t.Fatal(err)
	}
	defer s.Close()

	matches, _ := filepath.Glob(auditPath + ".torn-*")
	if len(matches) != 1 {
		t.Fatalf("side files: got %q, want one audit.jsonl.torn-<unix>", matches)
	}
	side := filepath.Base(matches[0])
	if unix, err := strconv.ParseInt(strings.TrimPrefix(side, "audit.jsonl.torn-"), 10, 64); err != nil || unix < openedAt || unix > time.Now().Unix() {
		t.Errorf("side file: got %s, want audit.jsonl.torn-<unix time of the repair>, between %d and now", side, openedAt)
	}
	if got := readFile(t, matches[0]); !bytes.Equal(got, torn) {
		t.Errorf("side file: got %q, want exactly the torn bytes %q", got, torn)
	}
	assertMode(t, matches[0], 0o600)
	if got := readFile(t, auditPath); !bytes.Equal(got, before) {
		t.Errorf("audit.jsonl after repair: got %q, want what it held before the torn write, %q", got, before)
	}
	if len(problems) != 1 || !strings.Contains(problems[0], side) {
		t.Errorf("problems: got %q, want one, naming %s", problems, side)
	}
	if r := s.VerifyAudit(); !r.OK || r.Entries != 2 {
		t.Errorf("VerifyAudit after repair: got %+v, want OK with 2 entries", r)
	}

	next, err := s.AppendAudit(sampleSummary(3))
	if err != nil || next.Seq != 3 || next.PrevHash != sealed[1].Hash {
		t.Errorf("append after repair: got %+v, %v; want seq 3 after %s", next, err, sealed[1].Hash)
	}
	if r := s.VerifyAudit(); !r.OK || r.Entries != 3 {
		t.Errorf("VerifyAudit after the next append: got %+v, want OK with 3 entries", r)
	}
}

func TestAuditHistoryIsNewestFirst(t *testing.T) {
	s := openStore(t, newStateDir(t))
	if got, err := s.History(10); err != nil || len(got) != 0 {
		t.Errorf("History of an empty chain: got %v, %v; want none", got, err)
	}
	sealed := appendSummaries(t, s, 5)

	for _, check := range []struct {
		limit    int
		wantSeqs []uint64
	}{
		{2, []uint64{5, 4}},
		{0, []uint64{5, 4, 3, 2, 1}},
		{-1, []uint64{5, 4, 3, 2, 1}},
		{50, []uint64{5, 4, 3, 2, 1}},
	} {
		got, err := s.History(check.limit)
		if err != nil {
			t.Fatal(err)
		}
		var seqs []uint64
		for _, sum := range got {
			seqs = append(seqs, sum.Seq)
		}
		if !slices.Equal(seqs, check.wantSeqs) {
			t.Errorf("History(%d) seqs: got %v, want %v", check.limit, seqs, check.wantSeqs)
		}
	}
	got, _ := s.History(1)
	if !reflect.DeepEqual(got[0], sealed[4]) {
		t.Errorf("History(1)[0]: got %+v, want what AppendAudit returned: %+v", got[0], sealed[4])
	}
}

func TestAuditOfAnEmptyChainVerifies(t *testing.T) {
	s := openStore(t, newStateDir(t))
	if r := s.VerifyAudit(); !r.OK || r.Entries != 0 || r.Problem != "" {
		t.Errorf("VerifyAudit of a missing file: got %+v, want OK with no entries and no problem", r)
	}
	writeFile(t, filepath.Join(s.Dir(), auditFileName), nil)
	if r := s.VerifyAudit(); !r.OK || r.Entries != 0 {
		t.Errorf("VerifyAudit of an empty file: got %+v, want OK with no entries", r)
	}
}

// Bad bytes in audit.jsonl are reported, never a crash, and the store still
// seals new sessions.
func TestAuditGarbageIsReportedNotFatal(t *testing.T) {
	for name, content := range map[string]string{
		"binary":          "\x00\xff\xfe garbage\n",
		"blank line":      "\n",
		"hash not last":   `{"seq":1,"hash":"` + strings.Repeat("a", 64) + `","prev_hash":"x"}` + "\n",
		"uppercase hash":  `{"seq":1,"prev_hash":"","hash":"` + strings.Repeat("A", 64) + `"}` + "\n",
		"seq is a string": `{"seq":"1","prev_hash":"","hash":"` + strings.Repeat("a", 64) + `"}` + "\n",
		"deeply nested":   `{"x":` + strings.Repeat("[", 5000) + strings.Repeat("]", 5000) + "}\n",
		"json array":      "[1,2,3]\n",
		"very long line":  `{"seq":1,"pad":"` + strings.Repeat("x", 3<<20) + `"}` + "\n",
	} {
		t.Run(name, func(t *testing.T) {
			dir := existingStateDir(t)
			writeFile(t, filepath.Join(dir, auditFileName), []byte(content))
			s, _, err := Open(dir)
			if err != nil {
				t.Fatal(err)
			}
			defer s.Close()
			r := s.VerifyAudit()
			if r.OK || !strings.HasPrefix(r.Problem, "line 1") {
				t.Errorf("VerifyAudit: got %+v; want a problem naming line 1", r)
			}
			t.Log(r.Problem)
			if _, err := s.History(0); err != nil {
				t.Errorf("History: got %v, want no error", err)
			}
			if _, err := s.AppendAudit(sampleSummary(1)); err != nil {
				t.Errorf("AppendAudit after garbage: got %v, want no error", err)
			}
		})
	}
}

// TestAuditOldUnboundedLinesStillVerify: lines sealed before summaries were
// bounded (a thousand buckets, 80 KB) and lines sealed after (a few named
// titles, a remainder per class) verify in one chain, and History reads
// both back exactly: the line format did not change, only what is in it.
func TestAuditOldUnboundedLinesStillVerify(t *testing.T) {
	s := openStore(t, newStateDir(t))
	old := sampleSummary(0)
	old.Buckets = nil
	for i := range service.MaxBucketKeys {
		old.Buckets = append(old.Buckets, service.Bucket{Class: "firefox-esr", Title: "Design doc " + strconv.Itoa(i), Seconds: 0})
	}
	old.Buckets = append(old.Buckets, service.Bucket{Title: service.OtherTitle, Seconds: 12})
	bounded := sampleSummary(1)
	bounded.Buckets = []service.Bucket{
		{Class: "firefox-esr", Title: "Design doc #", Seconds: 1190},
		{Class: "firefox-esr", Title: service.OtherTitlesTitle, Seconds: 10},
	}
	if _, err := s.AppendAudit(old); err != nil {
		t.Fatal(err)
	}
	if _, err := s.AppendAudit(bounded); err != nil {
		t.Fatal(err)
	}
	lines := auditLines(t, s)
	if len(lines[0]) < 30_000 || len(lines[1]) > 2_000 {
		t.Fatalf("lines: got %d and %d bytes, want at least 30000 (the old one) and at most 2000 (the bounded one)", len(lines[0]), len(lines[1]))
	}
	if r := s.VerifyAudit(); !r.OK || r.Entries != 2 {
		t.Fatalf("VerifyAudit: got %+v, want OK with 2 entries", r)
	}
	h, err := s.History(10)
	if err != nil || len(h) != 2 || len(h[1].Buckets) != service.MaxBucketKeys+1 || !reflect.DeepEqual(h[0].Buckets, bounded.Buckets) {
		t.Fatalf("History: got %d summaries (%v), want 2, the old one's %d buckets and the bounded one's as written", len(h), err, service.MaxBucketKeys+1)
	}
}
