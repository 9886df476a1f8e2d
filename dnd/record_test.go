package dnd

import (
	"os"
	"path/filepath"
	"strings"
	"testing"
)

func TestRecordRoundTrip(t *testing.T) {
	dir := t.TempDir()
	if rec, problem := loadRecord(dir); rec != nil || problem != "" {
		t.Fatalf("no record: got %+v, %q; want nil, no problem", rec, problem)
	}
	if err := saveRecord(dir, record{Kind: kindDunst, Previous: "false"}); err != nil {
		t.Fatal(err)
	}
	st, err := os.Lstat(filepath.Join(dir, RecordFile))
	if err != nil || st.Mode().Perm() != 0o600 {
		t.Fatalf("%s: %v, mode %v; want 0600", RecordFile, err, st.Mode())
	}
	rec, problem := loadRecord(dir)
	if problem != "" || rec == nil || *rec != (record{Version: recordVersion, Kind: kindDunst, Previous: "false"}) {
		t.Fatalf("read back: got %+v, %q", rec, problem)
	}
	if err := removeRecord(dir); err != nil {
		t.Fatal(err)
	}
	if rec, _ := loadRecord(dir); rec != nil {
		t.Fatalf("after removeRecord: got %+v, want none", rec)
	}
}

// A record that is not one — damaged, another version, a symlink planted
// to make antidrift read or overwrite another file — is set aside and
// named, never followed or believed.
func TestRecordNotBelieved(t *testing.T) {
	target := filepath.Join(t.TempDir(), "elsewhere.json")
	if err := os.WriteFile(target, []byte(`{"version":1,"kind":"dunst","previous":"true"}`), 0o600); err != nil {
		t.Fatal(err)
	}
	for name, plant := range map[string]func(path string) error{
		"damaged": func(p string) error { return os.WriteFile(p, []byte(`{"version":1,"kind":`), 0o600) },
		"other version": func(p string) error {
			return os.WriteFile(p, []byte(`{"version":2,"kind":"dunst","previous":"true"}`), 0o600)
		},
		"unknown field": func(p string) error {
			return os.WriteFile(p, []byte(`{"version":1,"kind":"dunst","previous":"true","run":"rm -rf ~"}`), 0o600)
		},
		"symlink":   func(p string) error { return os.Symlink(target, p) },
		"directory": func(p string) error { return os.Mkdir(p, 0o700) },
	} {
		t.Run(name, func(t *testing.T) {
			dir := t.TempDir()
			if err := plant(filepath.Join(dir, RecordFile)); err != nil {
				t.Fatal(err)
			}
			rec, problem := loadRecord(dir)
			if rec != nil || !strings.Contains(problem, "set aside as "+RecordFile+".damaged-") {
				t.Fatalf("got %+v, %q; want no record and a problem naming where it was set aside", rec, problem)
			}
			if _, err := os.Lstat(filepath.Join(dir, RecordFile)); !os.IsNotExist(err) {
				t.Fatalf("%s after: %v, want it moved away", RecordFile, err)
			}
			if b, _ := os.ReadFile(target); !strings.Contains(string(b), `"previous":"true"`) {
				t.Fatalf("the symlink's target changed: %s", b)
			}
		})
	}
}

func TestKindOf(t *testing.T) {
	for _, c := range []struct{ name, vendor, want string }{
		{"gnome-shell", "GNOME", kindGnome},
		{"dunst", "knopwob", kindDunst},
		{"Plasma", "KDE", kindPlasma},
		{"Xfce Notify Daemon", "Xfce", kindXfce},
		{"mako", "emersion", kindMako},
		{"notification-daemon", "GNOME", kindUnknown}, // not the Shell: show-banners is not its setting
		{"swaync", "erikreider", kindUnknown},
	} {
		if got := kindOf(c.name, c.vendor); got != c.want {
			t.Errorf("kindOf(%q, %q): got %q, want %q", c.name, c.vendor, got, c.want)
		}
	}
}
