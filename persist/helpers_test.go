package persist

import (
	"os"
	"path/filepath"
	"strings"
	"testing"
)

// newStateDir returns a state directory path that does not exist yet, as on
// a first start. (t.TempDir itself is 0755, which Open would tighten.)
func newStateDir(tb testing.TB) string {
	tb.Helper()
	return filepath.Join(tb.TempDir(), "antidrift")
}

// existingStateDir is newStateDir already created 0700, for tests that put
// files in place before Open.
func existingStateDir(tb testing.TB) string {
	tb.Helper()
	dir := newStateDir(tb)
	if err := os.Mkdir(dir, privateDirMode); err != nil {
		tb.Fatal(err)
	}
	return dir
}

// openStore opens dir, fails the test on error or on any problem, and
// closes the store when the test ends.
func openStore(tb testing.TB, dir string) *Store {
	tb.Helper()
	s, problems, err := Open(dir)
	if err != nil {
		tb.Fatalf("Open(%s): %v", dir, err)
	}
	if len(problems) > 0 {
		tb.Fatalf("Open(%s) of a healthy directory: got problems %q, want none", dir, problems)
	}
	tb.Cleanup(func() { s.Close() })
	return s
}

// assertMode fails unless path has exactly permission bits want.
func assertMode(t *testing.T, path string, want os.FileMode) {
	t.Helper()
	info, err := os.Stat(path)
	if err != nil {
		t.Fatal(err)
	}
	if got := info.Mode().Perm(); got != want {
		t.Errorf("%s has mode %04o, want %04o", path, got, want)
	}
}

func readFile(t *testing.T, path string) []byte {
	t.Helper()
	data, err := os.ReadFile(path)
	if err != nil {
		t.Fatal(err)
	}
	return data
}

func writeFile(t *testing.T, path string, data []byte) {
	t.Helper()
	if err := os.WriteFile(path, data, privateFileMode); err != nil {
		t.Fatal(err)
	}
}

func appendToFile(t *testing.T, path string, data []byte) {
	t.Helper()
	f, err := os.OpenFile(path, os.O_WRONLY|os.O_APPEND|os.O_CREATE, privateFileMode)
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	if _, err := f.Write(data); err != nil {
		t.Fatal(err)
	}
}

// reopen closes s and opens its directory again, as a daemon restart does,
// returning the new store and Open's problems.
func reopen(t *testing.T, s *Store) (*Store, []string) {
	t.Helper()
	if err := s.Close(); err != nil {
		t.Fatal(err)
	}
	s2, problems, err := Open(s.Dir())
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { s2.Close() })
	return s2, problems
}

// containsAll reports whether text holds every one of parts.
func containsAll(text string, parts ...string) bool {
	for _, p := range parts {
		if !strings.Contains(text, p) {
			return false
		}
	}
	return true
}
