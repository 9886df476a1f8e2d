package kwin

import (
	"os"
	"path/filepath"
	"strings"
	"testing"
)

// The script directory is private and a script appears whole or not at all.
func TestScriptDirIsPrivate(t *testing.T) {
	run := t.TempDir()
	if err := os.Mkdir(filepath.Join(run, "antidrift"), 0o755); err != nil { // made open by someone else of ours
		t.Fatal(err)
	}
	dir, err := openScriptDir(run)
	if err != nil {
		t.Fatal(err)
	}
	for _, d := range []string{filepath.Join(run, "antidrift"), string(dir)} {
		fi, err := os.Stat(d)
		if err != nil {
			t.Fatal(err)
		}
		if fi.Mode().Perm() != 0o700 {
			t.Errorf("%s has mode %v, want 0700", d, fi.Mode().Perm())
		}
	}
	path, err := dir.write("a.js", "one")
	if err != nil {
		t.Fatal(err)
	}
	if path, err = dir.write("a.js", "two"); err != nil {
		t.Fatal(err)
	}
	if b, _ := os.ReadFile(path); string(b) != "two" {
		t.Fatalf("after rewriting: got %q, want %q", b, "two")
	}
	fi, _ := os.Stat(path)
	if fi.Mode().Perm()&0o077 != 0 {
		t.Errorf("the script's mode: got %v, want no group or other bits", fi.Mode().Perm())
	}
	entries, _ := os.ReadDir(string(dir))
	if len(entries) != 1 {
		t.Fatalf("the script dir: got %v, want only the script (no temporary files left behind)", entries)
	}
	dir.remove("a.js")
	dir.remove("a.js") // gone already: fine
	if _, err := os.Stat(path); !os.IsNotExist(err) {
		t.Fatalf("after remove: %v", err)
	}
}

// A symlink where the directory should be, a relative or missing runtime
// directory: no script is written.
func TestScriptDirRefusesWhatItCannotTrust(t *testing.T) {
	run := t.TempDir()
	elsewhere := t.TempDir()
	if err := os.Symlink(elsewhere, filepath.Join(run, "antidrift")); err != nil {
		t.Fatal(err)
	}
	for _, c := range []struct{ dir, want string }{
		{run, "not a directory"},
		{"", "XDG_RUNTIME_DIR is not set"},
		{"relative/run", "not an absolute path"},
	} {
		if _, err := openScriptDir(c.dir); err == nil || !strings.Contains(err.Error(), c.want) {
			t.Errorf("openScriptDir(%q) = %v, want an error saying %q", c.dir, err, c.want)
		}
	}
	if entries, _ := os.ReadDir(elsewhere); len(entries) != 0 {
		t.Fatalf("through the symlink: got %v made, want nothing", entries)
	}
}
