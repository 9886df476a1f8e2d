package persist

import (
	"os"
	"path/filepath"
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
		tb.Fatalf("Open(%s) reported problems on a healthy directory: %q", dir, problems)
	}
	tb.Cleanup(func() { s.Close() })
	return s
}
