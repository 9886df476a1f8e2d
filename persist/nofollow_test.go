package persist

import (
	"bytes"
	"encoding/json"
	"errors"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"golang.org/x/sys/unix"

	"github.com/antidrift/antidrift/service"
)

// plantLink makes the store's name a symbolic link to target.
func plantLink(t *testing.T, dir, name, target string) {
	t.Helper()
	if err := os.Symlink(target, filepath.Join(dir, name)); err != nil {
		t.Fatal(err)
	}
}

// assertSetAside checks that name in dir is no longer a link, that the link
// now stands beside it as name.symlink-* still pointing at target, and
// that problems name both.
func assertSetAside(t *testing.T, dir, name, target string, problems []string) {
	t.Helper()
	if isSymlink(filepath.Join(dir, name)) {
		t.Errorf("%s: got a symbolic link still, want it set aside", name)
	}
	aside, _ := filepath.Glob(filepath.Join(dir, name+".symlink-*"))
	if len(aside) != 1 {
		t.Fatalf("set aside: got %v, want the link set aside once as %s.symlink-*", aside, name)
	}
	if got, err := os.Readlink(aside[0]); err != nil || got != target {
		t.Errorf("%s: got it pointing to %q (%v), want the link kept as it was, to %s", aside[0], got, err, target)
	}
	text := strings.Join(problems, "\n")
	if !containsAll(text, name, filepath.Base(aside[0]), "symbolic link", target) {
		t.Errorf("problems: got %q, want the link (%s), where it went (%s) and where it pointed (%s) named", text, name, filepath.Base(aside[0]), target)
	}
}

// openWithProblems opens dir, fails the test on error, and returns the
// store (closed when the test ends) with Open's problems.
func openWithProblems(t *testing.T, dir string) (*Store, []string) {
	t.Helper()
	s, problems, err := Open(dir)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { s.Close() })
	return s, problems
}

// unchanged fails the test unless path still holds exactly want.
func unchanged(t *testing.T, path string, want []byte) {
	t.Helper()
	if got, err := os.ReadFile(path); err != nil || !bytes.Equal(got, want) {
		t.Errorf("the link's target %s: got %q (%v), want it unchanged, %q", path, got, err, want)
	}
}

// The attack: an audit.jsonl link to a file whose last line is
// unterminated. Following it would cut that line and append sealed lines
// to someone else's file.
func TestAuditSymlinkIsSetAsideNeverFollowed(t *testing.T) {
	dir := existingStateDir(t)
	target := filepath.Join(t.TempDir(), "notes.txt")
	content := []byte("a file of the person's own\nwith a last line and no newline")
	writeFile(t, target, content)
	plantLink(t, dir, auditFileName, target)

	s, problems := openWithProblems(t, dir)
	assertSetAside(t, dir, auditFileName, target, problems)
	if _, err := s.AppendAudit(sampleSummary(1)); err != nil {
		t.Fatal(err)
	}
	unchanged(t, target, content)
	if lines := auditLines(t, s); len(lines) != 1 {
		t.Errorf("the new audit.jsonl: got %d lines, want the one sealed", len(lines))
	}
	if r := s.VerifyAudit(); !r.OK || r.Entries != 1 {
		t.Errorf("the new chain: got %+v, want OK with 1 entry", r)
	}
}

// A link planted while the daemon runs is not followed either: the seal
// fails naming it, and the target is untouched.
func TestAuditSymlinkPlantedLaterIsRefused(t *testing.T) {
	dir := newStateDir(t)
	s := openStore(t, dir)
	appendSummaries(t, s, 1)
	target := filepath.Join(t.TempDir(), "elsewhere.jsonl")
	writeFile(t, target, []byte("torn"))
	if err := os.Rename(filepath.Join(dir, auditFileName), filepath.Join(dir, "moved")); err != nil {
		t.Fatal(err)
	}
	plantLink(t, dir, auditFileName, target)

	_, err := s.AppendAudit(sampleSummary(2))
	if !errors.Is(err, errSymlink) || !strings.Contains(err.Error(), auditFileName) {
		t.Fatalf("sealing through a link: got %v, want errSymlink naming %s", err, auditFileName)
	}
	if r := s.VerifyAudit(); r.OK || !strings.Contains(r.Problem, "symbolic link") {
		t.Errorf("verify through a link: got %+v, want not OK, naming the symbolic link", r)
	}
	if _, err := s.History(0); !errors.Is(err, errSymlink) {
		t.Errorf("History through a link: got %v, want errSymlink", err)
	}
	unchanged(t, target, []byte("torn"))
}

// A state.json link is set aside before it is read: a forged snapshot it
// points to is not loaded, and the next save writes a file of its own.
func TestStateSymlinkIsSetAsideNeverFollowed(t *testing.T) {
	dir := existingStateDir(t)
	target := filepath.Join(t.TempDir(), "forged.json")
	forged, err := json.Marshal(service.Snapshot{Version: service.SnapshotVersion, State: service.StateLocked, Pending: []service.Summary{sampleSummary(5)}})
	if err != nil {
		t.Fatal(err)
	}
	writeFile(t, target, forged)
	plantLink(t, dir, stateFileName, target)

	s, problems := openWithProblems(t, dir)
	assertSetAside(t, dir, stateFileName, target, problems)
	snap, found, problem, err := s.LoadSnapshot()
	if err != nil || found || len(snap.Pending) != 0 || problem != "" {
		t.Fatalf("LoadSnapshot after the link was set aside: got found %v, pending %+v, problem %q, err %v; want nothing found, no problem", found, snap.Pending, problem, err)
	}
	if err := s.SaveSnapshot(activeSnapshot()); err != nil {
		t.Fatal(err)
	}
	unchanged(t, target, forged)
	if info, err := os.Lstat(s.statePath()); err != nil || !info.Mode().IsRegular() {
		t.Errorf("state.json after the save: got %v, %v; want a regular file", info, err)
	}
}

// A sessions/ link would put raw logs, with their window titles, wherever
// it points. It is set aside and a real directory made; so is a link in
// sessions/ where one session's log belongs.
func TestSessionsSymlinkIsSetAsideNoTitleWrittenThrough(t *testing.T) {
	dir := existingStateDir(t)
	elsewhere := t.TempDir()
	plantLink(t, dir, sessionsDirName, elsewhere)

	s, problems := openWithProblems(t, dir)
	assertSetAside(t, dir, sessionsDirName, elsewhere, problems)
	event := service.FocusEvent{AtUnixMillis: 1, Class: "Firefox", Title: "private title", Available: true}
	if err := s.AppendEvent("s1", event); err != nil {
		t.Fatal(err)
	}
	s.CloseSession("s1")
	if entries, _ := os.ReadDir(elsewhere); len(entries) != 0 {
		t.Errorf("the link's target after writing raw logs: got %v, want it empty", entries)
	}
	if info, err := os.Lstat(filepath.Join(dir, sessionsDirName)); err != nil || !info.IsDir() {
		t.Fatalf("sessions/: got %v, %v; want a directory of its own", info, err)
	}
	if events, err := s.ReplayEvents("s1"); err != nil || len(events) != 1 || events[0].Title != "private title" {
		t.Errorf("replay: got %+v, %v; want the one event with its private title", events, err)
	}

	// A session log that is a link.
	target := filepath.Join(t.TempDir(), "target.jsonl")
	writeFile(t, target, nil)
	sessions := filepath.Join(dir, sessionsDirName)
	plantLink(t, sessions, "s2.jsonl", target)
	s, problems = reopen(t, s)
	assertSetAside(t, sessions, "s2.jsonl", target, problems)
	if err := s.AppendEvent("s2", event); err != nil {
		t.Fatal(err)
	}
	s.CloseSession("s2")
	unchanged(t, target, nil)
}

// A sessions/ link planted while the daemon runs is refused for writing,
// reading and pruning alike.
func TestSessionsSymlinkPlantedLaterIsRefused(t *testing.T) {
	dir := newStateDir(t)
	s := openStore(t, dir)
	elsewhere := t.TempDir()
	writeFile(t, filepath.Join(elsewhere, "old.jsonl"), []byte("{}\n"))
	plantLink(t, dir, sessionsDirName, elsewhere)

	if err := s.AppendEvent("s1", service.FocusEvent{Class: "x", Title: "private"}); !errors.Is(err, errSymlink) {
		t.Errorf("appending through a sessions/ link: got %v, want errSymlink", err)
	}
	if err := s.EachEvent("old", func(service.FocusEvent) {}); !errors.Is(err, errSymlink) {
		t.Errorf("replaying through a sessions/ link: got %v, want errSymlink", err)
	}
	if _, err := s.PruneSessions(0, time.Now().Add(time.Hour), ""); !errors.Is(err, errSymlink) {
		t.Errorf("pruning through a sessions/ link: got %v, want errSymlink", err)
	}
	if entries, _ := os.ReadDir(elsewhere); len(entries) != 1 {
		t.Errorf("the link's target directory: got %v, want its one file, unchanged", entries)
	}
}

// A pending.spare link to a spare holding a forged summary: adopting it
// would seal a session that never ran.
func TestSpareSymlinkIsNotAdopted(t *testing.T) {
	forger := openStore(t, newStateDir(t))
	if err := forger.SaveSnapshot(service.Snapshot{State: service.StateLocked}); err != nil {
		t.Fatal(err)
	}
	forged := sampleSummary(99)
	if _, err := forger.spare.keep([]service.Summary{forged}); err != nil {
		t.Fatal(err)
	}
	target := forger.spare.path
	content := readFile(t, target)

	dir := existingStateDir(t)
	plantLink(t, dir, spareFileName, target)
	s, problems := openWithProblems(t, dir)
	assertSetAside(t, dir, spareFileName, target, problems)
	snap, _, problem, err := s.LoadSnapshot()
	if err != nil || len(snap.Pending) != 0 || strings.Contains(problem, forged.SessionID) {
		t.Fatalf("LoadSnapshot: got pending %+v, problem %q, err %v; want the forged summary not adopted", snap.Pending, problem, err)
	}
	if err := s.SaveSnapshot(service.Snapshot{State: service.StateLocked}); err != nil {
		t.Fatal(err)
	}
	if sealed, _ := s.AuditContains(forged.SessionID); sealed {
		t.Error("the forged session: got it sealed, want it not")
	}
	unchanged(t, target, content)
}

// Like ssh with ~/.ssh: a state directory that another user owns, or that
// group or others may write in, is refused with a message that names it
// and the fix; nothing in it is touched.
func TestOpenRefusesAStateDirOthersControl(t *testing.T) {
	for _, tc := range []struct {
		name  string
		setup func(t *testing.T, dir string)
		says  []string
	}{
		{"owned by another uid", func(t *testing.T, dir string) {
			if os.Geteuid() != 0 {
				t.Skip("chown to another uid needs root")
			}
			if err := os.Chown(dir, 4242, 4242); err != nil {
				t.Fatal(err)
			}
		}, []string{"belongs to uid 4242", "chown -R"}},
		{"group-writable", func(t *testing.T, dir string) { chmod(t, dir, 0o770) }, []string{"mode 0770", "chmod 700"}},
		{"world-writable", func(t *testing.T, dir string) { chmod(t, dir, 0o707) }, []string{"mode 0707", "chmod 700"}},
		{"group-writable sessions/", func(t *testing.T, dir string) {
			sessions := filepath.Join(dir, sessionsDirName)
			if err := os.Mkdir(sessions, privateDirMode); err != nil {
				t.Fatal(err)
			}
			chmod(t, sessions, 0o730)
		}, []string{"sessions directory", "mode 0730", "chmod 700"}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			dir := existingStateDir(t)
			writeFile(t, filepath.Join(dir, stateFileName), []byte("{}"))
			tc.setup(t, dir)
			before, _ := os.Stat(dir)
			s, _, err := Open(dir)
			if err == nil {
				s.Close()
				t.Fatal("Open: got the directory accepted, want a refusal")
			}
			if !containsAll(err.Error(), append(tc.says, dir)...) {
				t.Errorf("the refusal: got %v, want it to name the directory and the fix %q", err, tc.says)
			}
			if after, _ := os.Stat(dir); after.Mode() != before.Mode() {
				t.Errorf("the refused directory's mode: got %v, want %v, unchanged", after.Mode(), before.Mode())
			}
			if aside, _ := filepath.Glob(filepath.Join(dir, "*.damaged-*")); len(aside) != 0 {
				t.Errorf("files in a refused directory: got %v set aside, want none", aside)
			}
			// And the directory is not locked: fixing it and opening again works.
			chmod(t, dir, privateDirMode)
			os.Chown(dir, os.Geteuid(), os.Getegid())
			chmod(t, filepath.Join(dir, sessionsDirName), privateDirMode)
			if s, _, err := Open(dir); err != nil {
				t.Errorf("Open after the fix: got %v, want success", err)
			} else {
				s.Close()
			}
		})
	}
}

func chmod(t *testing.T, path string, mode os.FileMode) {
	t.Helper()
	if err := os.Chmod(path, mode); err != nil && !os.IsNotExist(err) {
		t.Fatal(err)
	}
}

// A FIFO where audit.jsonl belongs does not hang the daemon's start: it
// is not a file, and the start says so.
func TestAuditFIFODoesNotHangOpen(t *testing.T) {
	dir := existingStateDir(t)
	if err := unix.Mkfifo(filepath.Join(dir, auditFileName), 0o600); err != nil {
		t.Fatal(err)
	}
	s, problems := openWithProblems(t, dir)
	if !containsAll(strings.Join(problems, "\n"), auditFileName, "not a regular file") {
		t.Errorf("problems: got %q, want %s named as not a regular file", problems, auditFileName)
	}
	if _, err := s.AppendAudit(sampleSummary(1)); !errors.Is(err, errNotRegular) {
		t.Errorf("sealing into a FIFO: got %v, want errNotRegular", err)
	}
}

// antidrift report and verify read the directory beside the daemon: they
// do not follow links either.
func TestReaderDoesNotFollowLinks(t *testing.T) {
	real := newStateDir(t)
	s := openStore(t, real)
	appendSummaries(t, s, 2)
	if err := s.SaveSnapshot(service.Snapshot{State: service.StateLocked, Pending: []service.Summary{sampleSummary(9)}}); err != nil {
		t.Fatal(err)
	}
	if err := s.AppendEvent("s1", service.FocusEvent{Class: "x", Title: "t"}); err != nil {
		t.Fatal(err)
	}
	s.Close()

	dir := existingStateDir(t)
	for _, name := range []string{auditFileName, stateFileName, sessionsDirName} {
		plantLink(t, dir, name, filepath.Join(real, name))
	}
	r := NewReader(dir)
	if sums, err := r.History(); !errors.Is(err, errSymlink) || len(sums) != 0 {
		t.Errorf("History read through a link: got %d summaries, %v; want none and errSymlink", len(sums), err)
	}
	if v := r.VerifyAudit(); v.OK || v.Entries != 0 || !strings.Contains(v.Problem, "symbolic link") {
		t.Errorf("VerifyAudit through a link: got %+v, want not OK, no entries, naming the symbolic link", v)
	}
	if p, _, err := r.Pending(); !errors.Is(err, errSymlink) || len(p) != 0 {
		t.Errorf("Pending through a link: got %+v, %v; want none and errSymlink", p, err)
	}
	if r.HasRawLog("s1") {
		t.Error("HasRawLog through a sessions/ link: got true, want false (not looked through)")
	}
	if _, err := ReadStateFile(filepath.Join(dir, auditFileName)); !errors.Is(err, errSymlink) {
		t.Errorf("ReadStateFile through a link: got %v, want errSymlink", err)
	}
}

// Links planted where state.json or pending.spare belongs while the daemon
// runs are refused, not replaced: the rename of a save would not follow
// them, but it would delete them, and links are set aside, never deleted.
func TestStateAndSpareLinksPlantedLaterAreRefusedNotReplaced(t *testing.T) {
	dir := newStateDir(t)
	s := openStore(t, dir)
	if err := s.SaveSnapshot(activeSnapshot()); err != nil {
		t.Fatal(err)
	}
	target := filepath.Join(t.TempDir(), "target")
	writeFile(t, target, []byte("mine"))
	for _, name := range []string{stateFileName, spareFileName} {
		if err := os.Remove(filepath.Join(dir, name)); err != nil {
			t.Fatal(err)
		}
		plantLink(t, dir, name, target)
	}
	s.spare.ready = false // as on a start that found no spare

	err := s.SaveSnapshot(activeSnapshot())
	if !errors.Is(err, errSymlink) || !strings.Contains(err.Error(), stateFileName) {
		t.Fatalf("saving over a state.json link: got %v, want errSymlink naming %s", err, stateFileName)
	}
	if err := s.spare.prepare(); !errors.Is(err, errSymlink) {
		t.Errorf("preparing the spare over a link: got %v, want errSymlink", err)
	}
	s.spare.ready = true // as if prepared before the link was planted
	if _, err := s.spare.keep([]service.Summary{sampleSummary(1)}); !errors.Is(err, errSymlink) {
		t.Errorf("keeping summaries in a spare that is a link: got %v, want errSymlink", err)
	}
	for _, name := range []string{stateFileName, spareFileName} {
		if !isSymlink(filepath.Join(dir, name)) {
			t.Errorf("%s: got the link replaced or removed, want it left", name)
		}
	}
	unchanged(t, target, []byte("mine"))
}
