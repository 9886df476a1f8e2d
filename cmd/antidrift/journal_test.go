package main

import (
	"os"
	"path/filepath"
	"strings"
	"testing"
)

// journalctl -o json output, as journalctl prints it (every field a
// string), holding three seals; the second was rewritten in the file and
// the third cut from it.
const journalOutput = `{"__REALTIME_TIMESTAMP":"1796055660000000","MESSAGE":"sealed into audit.jsonl","MESSAGE_ID":"257ea6b803dc4cdd96f89ac361a274a7","ANTIDRIFT_AUDIT_SEQ":"1","ANTIDRIFT_AUDIT_HASH":"aaaa1111","ANTIDRIFT_SESSION_ID":"s1"}
{"__REALTIME_TIMESTAMP":"1796055720000000","MESSAGE":"sealed into audit.jsonl","MESSAGE_ID":"257ea6b803dc4cdd96f89ac361a274a7","ANTIDRIFT_AUDIT_SEQ":"2","ANTIDRIFT_AUDIT_HASH":"bbbb2222","ANTIDRIFT_SESSION_ID":"s2"}

{"__REALTIME_TIMESTAMP":"1796055780000000","MESSAGE":"sealed into audit.jsonl","MESSAGE_ID":"257ea6b803dc4cdd96f89ac361a274a7","ANTIDRIFT_AUDIT_SEQ":"3","ANTIDRIFT_AUDIT_HASH":"cccc3333","ANTIDRIFT_SESSION_ID":"s3"}
{"MESSAGE":"not a seal"}
`

func TestJournalHeadsTheFileLacksAreNamed(t *testing.T) {
	heads, err := parseJournalHeads([]byte(journalOutput))
	if err != nil || len(heads) != 3 {
		t.Fatalf("parseJournalHeads: got %d heads (%v): %+v, want 3", len(heads), err, heads)
	}
	// Both files rewritten: the file's own chain is whole, seq 2 has
	// another hash, seq 3 is gone.
	missing := missingHeads(heads, map[uint64]string{1: "aaaa1111", 2: "ffff9999"})
	if len(missing) != 2 ||
		!strings.Contains(missing[0], "seq 2 with hash bbbb2222…") || !strings.Contains(missing[0], "has hash ffff9999…") ||
		!strings.Contains(missing[1], "seq 3 (hash cccc3333…, session s3)") || !strings.Contains(missing[1], "no seq 3") {
		t.Fatalf("missingHeads: got %q, want seq 2 with another hash and seq 3 gone", missing)
	}
	if m := missingHeads(heads, map[uint64]string{1: "aaaa1111", 2: "bbbb2222", 3: "cccc3333", 4: "dddd"}); len(m) != 0 {
		t.Fatalf("missingHeads of a file holding every head: got %q, want none", m)
	}
}

// verify --journal reads audit.jsonl beside the daemon, and like the
// daemon never through a symbolic link: a link's target is not taken for
// the chain.
func TestChainHeadsDoesNotFollowALink(t *testing.T) {
	dir := t.TempDir()
	target := filepath.Join(dir, "elsewhere.jsonl")
	if err := os.WriteFile(target, []byte(`{"seq":1,"hash":"abc"}`+"\n"), 0o600); err != nil {
		t.Fatal(err)
	}
	audit := filepath.Join(dir, "audit.jsonl")
	if err := os.Symlink(target, audit); err != nil {
		t.Fatal(err)
	}
	heads, err := chainHeads(audit)
	if err == nil || !strings.Contains(err.Error(), "symbolic link") || len(heads) != 0 {
		t.Errorf("chainHeads through a link: got %v, %v; want no heads and an error naming the symbolic link", heads, err)
	}
}

// Where no journal runs, verify --journal says so instead of "the journal
// recorded 0 seals", and exits by what it could check.
func TestVerifyJournalSaysWhenNoJournalIsReachable(t *testing.T) {
	if _, err := os.Stat("/run/systemd/journal/socket"); err == nil {
		t.Skip("systemd-journald runs here; TestJournalHasStructuredFieldsAndNoTitles (cmd/antidriftd) checks verify --journal against it")
	}
	s := startDaemon(t, "")
	s.ok(t, "start", "write", "--done-when", "done", "--for", "10m")
	s.ok(t, "complete")
	s.ok(t, "end")
	out := s.ok(t, "verify", "--journal", "--state-dir", s.d.StateDir)
	contains(t, "verify --journal", out, "No journal was reachable", "NOT checked", "The audit log is intact: 1 entry")
	if strings.Contains(out, "recorded 0 seals") {
		t.Errorf("verify --journal: got\n%s\nwant no \"recorded 0 seals\", which reads like a passed check", out)
	}
	v := okJSON[map[string]any](t, s, "verify", "--journal", "--state-dir", s.d.StateDir)
	if j, _ := v["journal"].(map[string]any); j == nil || j["checked"] != false || !strings.Contains(j["note"].(string), "No journal was reachable") {
		t.Errorf("verify --journal --json: got %v, want journal.checked false and a note saying no journal was reachable", v)
	}
}
