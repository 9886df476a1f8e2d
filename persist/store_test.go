package persist

import (
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/antidrift/antidrift/service"
)

func TestDefaultDirFollowsXDGStateHome(t *testing.T) {
	t.Setenv("HOME", "/home/someone")

	t.Setenv("XDG_STATE_HOME", "/custom/state")
	if got, err := DefaultDir(); err != nil || got != "/custom/state/antidrift" {
		t.Errorf("with XDG_STATE_HOME set: DefaultDir(): got %q, %v; want /custom/state/antidrift", got, err)
	}

	for _, ignored := range []string{"", "relative/state"} {
		t.Setenv("XDG_STATE_HOME", ignored)
		if got, err := DefaultDir(); err != nil || got != "/home/someone/.local/state/antidrift" {
			t.Errorf("with XDG_STATE_HOME=%q: DefaultDir() = %q, %v; want the ~/.local/state fallback", ignored, got, err)
		}
	}
}

func TestFilesArePrivateToTheUser(t *testing.T) {
	s := openStore(t, newStateDir(t))
	if err := s.SaveSnapshot(service.Snapshot{State: service.StateLocked}); err != nil {
		t.Fatal(err)
	}
	if err := s.AppendEvent("s1", service.FocusEvent{Title: "secret.txt - Mail"}); err != nil {
		t.Fatal(err)
	}
	if _, err := s.AppendAudit(sampleSummary(1)); err != nil {
		t.Fatal(err)
	}

	assertMode(t, s.Dir(), 0o700)
	assertMode(t, filepath.Join(s.Dir(), sessionsDirName), 0o700)
	for _, name := range []string{stateFileName, auditFileName, filepath.Join(sessionsDirName, "s1.jsonl")} {
		assertMode(t, filepath.Join(s.Dir(), name), 0o600)
	}
}

func TestOpenTightensLooseModesAndSaysSo(t *testing.T) {
	dir := existingStateDir(t)
	sessions := filepath.Join(dir, sessionsDirName)
	if err := os.Mkdir(sessions, privateDirMode); err != nil {
		t.Fatal(err)
	}
	looseDirs := []string{dir, sessions}
	looseFiles := []string{
		filepath.Join(dir, stateFileName),
		filepath.Join(dir, auditFileName),
		filepath.Join(sessions, "old.jsonl"),
	}
	for _, path := range looseFiles {
		writeFile(t, path, nil)
		if err := os.Chmod(path, 0o644); err != nil {
			t.Fatal(err)
		}
	}
	for _, path := range looseDirs {
		if err := os.Chmod(path, 0o755); err != nil {
			t.Fatal(err)
		}
	}

	s, problems, err := Open(dir)
	if err != nil {
		t.Fatal(err)
	}
	defer s.Close()

	for _, path := range looseDirs {
		assertMode(t, path, 0o700)
	}
	for _, path := range looseFiles {
		assertMode(t, path, 0o600)
	}
	for _, path := range append(looseDirs, looseFiles...) {
		if !containsAny(problems, path) {
			t.Errorf("problems: got %q, want a warning naming %s", problems, path)
		}
	}
	if want := len(looseDirs) + len(looseFiles); len(problems) != want {
		t.Errorf("got %d warnings for %d loose paths: %q", len(problems), want, problems)
	}
}

// containsAny reports whether one of texts names path (followed by a space,
// so a directory's name does not match its files' warnings).
func containsAny(texts []string, part string) bool {
	for _, text := range texts {
		if strings.Contains(text, part+" ") {
			return true
		}
	}
	return false
}

func TestSecondDaemonIsLockedOut(t *testing.T) {
	dir := newStateDir(t)
	first, _, err := Open(dir)
	if err != nil {
		t.Fatal(err)
	}

	second, _, err := Open(dir)
	if err == nil {
		second.Close()
		t.Fatal("a second Open of the same directory: got success, want a refusal: two daemons would interleave writes")
	}
	if !containsAll(err.Error(), "another antidriftd is already using "+dir, "stop it first") {
		t.Errorf("second Open: got %v, want it to say another antidriftd is already using %s and to stop it first", err, dir)
	}

	if err := first.Close(); err != nil {
		t.Fatal(err)
	}
	third, _, err := Open(dir)
	if err != nil {
		t.Fatalf("Open after the first store closed: got %v, want success", err)
	}
	third.Close()
}

func TestClosedStoreRefusesWrites(t *testing.T) {
	s, _, err := Open(newStateDir(t))
	if err != nil {
		t.Fatal(err)
	}
	if err := s.Close(); err != nil {
		t.Fatal(err)
	}
	if err := s.Close(); err != nil {
		t.Errorf("second Close: got %v, want nil", err)
	}
	// Once the lock is released another daemon may own the directory.
	if err := s.SaveSnapshot(service.Snapshot{State: service.StateLocked}); err == nil {
		t.Error("SaveSnapshot after Close: got success, want an error")
	}
	if err := s.AppendEvent("s1", service.FocusEvent{}); err == nil {
		t.Error("AppendEvent after Close: got success, want an error")
	}
	if _, err := s.AppendAudit(sampleSummary(1)); err == nil {
		t.Error("AppendAudit after Close: got success, want an error")
	}
}
