package persist

import (
	"errors"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/antidrift/antidrift/internal/testsupport/testenv"
)

// A state directory that turned read-only (the kernel remounts a file
// system read-only after an I/O error) must not keep the daemon from
// starting: Open only reads until there is something to repair.
func TestOpenOnAReadOnlyDirectory(t *testing.T) {
	mnt := testenv.Tmpfs(t, "1m")
	dir := filepath.Join(mnt.Dir, "antidrift")
	s := openStore(t, dir)
	if _, err := s.AppendAudit(sampleSummary(1)); err != nil {
		t.Fatal(err)
	}
	s.Close()

	mnt.ReadOnly(t)
	s = openStore(t, dir) // no problems: a healthy chain needs no repair
	if r := s.VerifyAudit(); !r.OK || r.Entries != 1 {
		t.Fatalf("VerifyAudit on a read-only chain: got %+v, want OK with 1 entry", r)
	}
	if _, err := s.AppendAudit(sampleSummary(2)); err == nil {
		t.Fatal("appending to a read-only audit.jsonl: got success, want an error")
	}
	mnt.ReadWrite(t)
	if _, err := s.AppendAudit(sampleSummary(2)); err != nil {
		t.Fatalf("appending once writable again: got %v, want success", err)
	}
	if r := s.VerifyAudit(); !r.OK || r.Entries != 2 {
		t.Fatalf("VerifyAudit: got %+v, want OK with 2 entries", r)
	}
}

// A torn tail found on a read-only disk cannot be set aside yet: the store
// opens anyway, says so, and sets it aside before the next append.
func TestTornTailOnAReadOnlyDirectoryWaitsForTheDisk(t *testing.T) {
	mnt := testenv.Tmpfs(t, "1m")
	dir := filepath.Join(mnt.Dir, "antidrift")
	s := openStore(t, dir)
	if _, err := s.AppendAudit(sampleSummary(1)); err != nil {
		t.Fatal(err)
	}
	s.Close()
	path := filepath.Join(dir, auditFileName)
	whole := readFile(t, path)
	appendToFile(t, path, []byte(`{"seq":2,"prev_ha`))

	mnt.ReadOnly(t)
	s, problems, err := Open(dir)
	if err != nil {
		t.Fatalf("Open on a read-only directory with a torn audit tail: got %v, want it opened", err)
	}
	t.Cleanup(func() { s.Close() })
	if len(problems) != 1 || !strings.Contains(problems[0], auditFileName) {
		t.Fatalf("problems: got %q, want one naming %s", problems, auditFileName)
	}
	if _, err := s.AppendAudit(sampleSummary(2)); err == nil {
		t.Fatal("appending on a read-only disk: got success, want an error")
	}

	mnt.ReadWrite(t)
	sealed, err := s.AppendAudit(sampleSummary(2))
	if err != nil {
		t.Fatalf("appending once writable again: got %v, want success", err)
	}
	if sealed.Seq != 2 {
		t.Fatalf("sealed seq: got %d, want 2", sealed.Seq)
	}
	if r := s.VerifyAudit(); !r.OK || r.Entries != 2 {
		t.Fatalf("VerifyAudit: got %+v, want OK with 2 entries", r)
	}
	aside, _ := filepath.Glob(path + ".torn-*")
	if len(aside) != 1 || string(readFile(t, aside[0])) != `{"seq":2,"prev_ha` {
		t.Fatalf("torn bytes set aside: got %v, want one file holding {\"seq\":2,\"prev_ha", aside)
	}
	if got := readFile(t, path); !strings.HasPrefix(string(got), string(whole)) {
		t.Fatalf("audit.jsonl: got %q, want the sealed lines %q unchanged at its start", got, whole)
	}
}

// A seal that runs out of space halfway leaves audit.jsonl as it was: no
// unfinished line for the next start to mistake for a crash, nothing to
// set aside once there is room again.
func TestFullDiskLeavesTheChainAsItWas(t *testing.T) {
	mnt := testenv.Tmpfs(t, "64k")
	dir := filepath.Join(mnt.Dir, "antidrift")
	s := openStore(t, dir)
	path := filepath.Join(dir, auditFileName)
	// Seal until the last page cannot take another line, then fill the rest.
	for i := 0; ; i++ {
		if _, err := s.AppendAudit(sampleSummary(i)); err != nil {
			t.Fatal(err)
		}
		if n := len(readFile(t, path)); 4096-n%4096 < 600 {
			break
		}
	}
	before := readFile(t, path)
	ballast := filepath.Join(mnt.Dir, "ballast")
	testenv.Fill(t, ballast)
	if _, err := s.AppendAudit(sampleSummary(100)); err == nil {
		t.Fatal("sealing on a full disk: got success, want an error")
	}
	if got := readFile(t, path); string(got) != string(before) {
		t.Fatalf("audit.jsonl after a failed seal: got %d bytes more than before, want none", len(got)-len(before))
	}
	if err := os.Remove(ballast); err != nil {
		t.Fatal(err)
	}
	if _, err := s.AppendAudit(sampleSummary(100)); err != nil {
		t.Fatal(err)
	}
	if aside, _ := filepath.Glob(path + ".torn-*"); len(aside) != 0 {
		t.Fatalf("set aside after a failed seal: got %v, want nothing", aside)
	}
	if r := s.VerifyAudit(); !r.OK {
		t.Fatalf("VerifyAudit: got %+v, want OK", r)
	}
}

// A link found on a read-only disk cannot be set aside: the store opens
// anyway and names it, and nothing goes through it; once the disk is
// writable the next start sets it aside.
func TestLinkOnAReadOnlyDirectoryIsNamedAndRefused(t *testing.T) {
	mnt := testenv.Tmpfs(t, "1m")
	dir := filepath.Join(mnt.Dir, "antidrift")
	s := openStore(t, dir)
	s.Close()
	target := filepath.Join(t.TempDir(), "target")
	writeFile(t, target, []byte("mine"))
	if err := os.Symlink(target, filepath.Join(dir, auditFileName)); err != nil {
		t.Fatal(err)
	}

	mnt.ReadOnly(t)
	s, problems, err := Open(dir)
	if err != nil {
		t.Fatalf("Open on a read-only directory with a link: got %v, want it opened", err)
	}
	if !containsAll(strings.Join(problems, "\n"), auditFileName, "could not be set aside", target) {
		t.Errorf("problems: got %q, want %s named as a link that could not be set aside, with its target %s", problems, auditFileName, target)
	}
	if r := s.VerifyAudit(); r.OK || !strings.Contains(r.Problem, "symbolic link") {
		t.Errorf("VerifyAudit through a link: got %+v, want not OK, naming the symbolic link", r)
	}
	mnt.ReadWrite(t)
	if _, err := s.AppendAudit(sampleSummary(1)); !errors.Is(err, errSymlink) {
		t.Errorf("sealing through a link: got %v, want errSymlink", err)
	}
	s, problems = reopen(t, s)
	if !containsAll(strings.Join(problems, "\n"), auditFileName, "moved the link aside") {
		t.Errorf("after the disk came back: got problems %q, want %s named and the link moved aside", problems, auditFileName)
	}
	if got := readFile(t, target); string(got) != "mine" {
		t.Errorf("the link's target: got %q, want \"mine\", unchanged", got)
	}
}
