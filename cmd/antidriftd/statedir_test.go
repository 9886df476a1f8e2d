package main

import (
	"errors"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"

	"github.com/antidrift/antidrift/internal/testsupport/testenv"
	"github.com/antidrift/antidrift/persist"
)

// The attack, against the real daemon: links planted where its
// files belong. Each is set aside and named in Problems, and a whole
// session — raw log, state.json, seal — writes nothing through any of them.
func TestPlantedLinksAreSetAsideNamedAndNeverWrittenThrough(t *testing.T) {
	testenv.Need(t, "dbus-daemon", "busctl", "dbus-send")
	dir := filepath.Join(t.TempDir(), "state")
	if err := os.MkdirAll(dir, 0o700); err != nil {
		t.Fatal(err)
	}
	elsewhere := t.TempDir()
	targets := map[string][]byte{
		"audit.jsonl":   []byte("{\"seq\":1}\na last line with no newline"),
		"state.json":    []byte(`{"version":1,"state":"review"}`),
		"pending.spare": []byte(strings.Repeat(" ", 8192)),
	}
	for name, content := range targets {
		target := filepath.Join(elsewhere, name)
		if err := os.WriteFile(target, content, 0o600); err != nil {
			t.Fatal(err)
		}
		if err := os.Symlink(target, filepath.Join(dir, name)); err != nil {
			t.Fatal(err)
		}
	}
	logsElsewhere := t.TempDir()
	if err := os.Symlink(logsElsewhere, filepath.Join(dir, "sessions")); err != nil {
		t.Fatal(err)
	}

	d := testenv.StartDaemon(t, testenv.StartBus(t), dir)
	s := d.Session(t)
	problems := strings.Join(s.Strings(t, "Problems"), "\n")
	for _, name := range []string{"audit.jsonl", "state.json", "pending.spare", "sessions"} {
		aside, _ := filepath.Glob(filepath.Join(dir, name+".symlink-*"))
		if len(aside) != 1 || !strings.Contains(problems, filepath.Base(aside[0])) {
			t.Errorf("%s: got set aside as %v, Problems %q; want one file set aside, named in Problems", name, aside, problems)
		}
	}
	id := startSession(t, s, "write the intro", "intro is committed", 600, "")
	completeAndEnd(t, s)
	d.Stop(t)

	for name, content := range targets {
		if got, _ := os.ReadFile(filepath.Join(elsewhere, name)); string(got) != string(content) {
			t.Errorf("the target of the %s link: got %q, want %q (unchanged)", name, got, content)
		}
	}
	if entries, _ := os.ReadDir(logsElsewhere); len(entries) != 0 {
		t.Errorf("the sessions link's target: got raw logs (window titles) %v written through it, want nothing", entries)
	}
	for _, path := range []string{filepath.Join(dir, "audit.jsonl"), filepath.Join(dir, "state.json"), filepath.Join(dir, "sessions", id+".jsonl")} {
		if info, err := os.Lstat(path); err != nil || !info.Mode().IsRegular() {
			t.Errorf("%s: got %v, want a regular file of the daemon's own", path, err)
		}
	}
	if audit, _ := os.ReadFile(filepath.Join(dir, "audit.jsonl")); !strings.Contains(string(audit), id) {
		t.Errorf("the new audit.jsonl: got %q, want the session %s sealed in it", audit, id)
	}
}

// A state directory others control is refused at start, as ssh refuses
// such a ~/.ssh: the daemon exits, naming the directory and the fix, and
// takes no name on the bus.
func TestAStateDirOthersControlIsRefusedAtStart(t *testing.T) {
	testenv.Need(t, "dbus-daemon")
	bin := testenv.Binary(t, "antidriftd")
	for _, tc := range []struct {
		name  string
		setup func(t *testing.T, dir string)
		says  string
	}{
		{"owned by another uid", func(t *testing.T, dir string) {
			if os.Geteuid() != 0 {
				t.Skip("chown to another uid needs root")
			}
			if err := os.Chown(dir, 4242, 4242); err != nil {
				t.Fatal(err)
			}
		}, "belongs to uid 4242"},
		{"group-writable", func(t *testing.T, dir string) {
			if err := os.Chmod(dir, 0o770); err != nil {
				t.Fatal(err)
			}
		}, "chmod 700 " + "DIR"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			dir := filepath.Join(t.TempDir(), "state")
			if err := os.Mkdir(dir, 0o700); err != nil {
				t.Fatal(err)
			}
			tc.setup(t, dir)
			bus := testenv.StartBus(t)
			out, err := bus.Run(t, bin, "--state-dir", dir)
			says := strings.ReplaceAll(tc.says, "DIR", dir)
			if err == nil || !strings.Contains(out+err.Error(), says) || !strings.Contains(out+err.Error(), dir) {
				t.Fatalf("antidriftd on a state dir %s: got %v %s, want it refused saying %q", tc.name, err, out, says)
			}
			if pid := bus.OwnerPID(t, "org.antidrift"); pid != 0 {
				t.Errorf("org.antidrift after a refused start: got owned by pid %d, want no owner", pid)
			}
		})
	}
}

// A state directory a later version of antidrift wrote (here state.json
// of a version above this build's) is refused at start with exit status 3
// and a message naming the file and the versions, and nothing in it
// changes: not even the mode of a file readable by others, which any other
// start tightens.
func TestALaterVersionsStateDirIsRefusedUntouched(t *testing.T) {
	testenv.Need(t, "dbus-daemon")
	bin := testenv.Binary(t, "antidriftd")
	dir := filepath.Join(t.TempDir(), "state")
	if err := os.Mkdir(dir, 0o700); err != nil {
		t.Fatal(err)
	}
	later := fmt.Sprintf(`{"version": %d, "state": "locked", "what_v2_adds": true}`+"\n", persist.StateFileVersion+1)
	if err := os.WriteFile(filepath.Join(dir, "state.json"), []byte(later), 0o644); err != nil {
		t.Fatal(err)
	}
	before := listDir(t, dir)
	bus := testenv.StartBus(t)
	out, err := bus.Run(t, bin, "--state-dir", dir)
	var exit *exec.ExitError
	if !errors.As(err, &exit) || exit.ExitCode() != 3 {
		t.Fatalf("antidriftd on a later version's state: got %v\n%s\nwant exit status 3", err, out)
	}
	want := fmt.Sprintf("state.json has format version %d, but this antidrift reads only up to version %d", persist.StateFileVersion+1, persist.StateFileVersion)
	if !strings.Contains(out+err.Error(), want) || !strings.Contains(out+err.Error(), "Nothing in the state directory was changed") {
		t.Fatalf("antidriftd's refusal: got %s, want it to say %q and that nothing was changed", out, want)
	}
	if after := listDir(t, dir); after != before {
		t.Fatalf("the state directory after the refusal: got\n%s\nwant it unchanged:\n%s", after, before)
	}
}

// listDir is every entry of dir with its mode and contents.
func listDir(t *testing.T, dir string) string {
	t.Helper()
	entries, err := os.ReadDir(dir)
	if err != nil {
		t.Fatal(err)
	}
	var b strings.Builder
	for _, e := range entries {
		info, err := e.Info()
		if err != nil {
			t.Fatal(err)
		}
		data, _ := os.ReadFile(filepath.Join(dir, e.Name()))
		fmt.Fprintf(&b, "%s %v %q\n", e.Name(), info.Mode(), data)
	}
	return b.String()
}
