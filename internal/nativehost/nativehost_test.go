package nativehost

import (
	"errors"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"testing"
)

// fakeProc is a /proc of two processes: the host (pid 20) and its parent
// (pid 10), each an exe link and a stat file.
type fakeProc struct {
	dir, bin string
}

func newFakeProc(t *testing.T) *fakeProc {
	t.Helper()
	f := &fakeProc{dir: t.TempDir(), bin: t.TempDir()}
	return f
}

// program makes an executable file name under bin, mode perm.
func (f *fakeProc) program(t *testing.T, name string, perm os.FileMode) string {
	t.Helper()
	p := filepath.Join(f.bin, name)
	if err := os.MkdirAll(filepath.Dir(p), 0o755); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(p, []byte("#!/bin/true\n"), perm); err != nil {
		t.Fatal(err)
	}
	if err := os.Chmod(p, perm); err != nil {
		t.Fatal(err)
	}
	return p
}

// process makes /proc/<pid> running exe with parent ppid, its command name
// comm.
func (f *fakeProc) process(t *testing.T, pid, ppid int, exe, comm string) {
	t.Helper()
	d := filepath.Join(f.dir, strconv.Itoa(pid))
	if err := os.MkdirAll(d, 0o755); err != nil {
		t.Fatal(err)
	}
	if err := os.Symlink(exe, filepath.Join(d, "exe")); err != nil {
		t.Fatal(err)
	}
	stat := strconv.Itoa(pid) + " (" + comm + ") S " + strconv.Itoa(ppid) + " 1 1 0 -1\n"
	if err := os.WriteFile(filepath.Join(d, "stat"), []byte(stat), 0o644); err != nil {
		t.Fatal(err)
	}
}

func TestIdentifyBelievesOnlyTheHostABrowserStarted(t *testing.T) {
	for _, c := range []struct {
		name    string
		parent  string      // the parent's executable, under bin
		perm    os.FileMode // the parent's mode
		uid     int         // the daemon's user
		host    string      // the host's executable, under bin ("" = the real one)
		browser string      // the family Identify should find
		refused string      // what the refusal says
	}{
		{"Firefox ESR starts it", "usr/lib/firefox-esr/firefox-esr", 0o755, 1000, "", Firefox, ""},
		{"Chromium starts it", "usr/lib/chromium/chromium", 0o755, 1000, "", Chromium, ""},
		{"Google Chrome starts it", "opt/google/chrome/chrome", 0o755, 1000, "", Chromium, ""},
		{"a shell starts it", "usr/bin/bash", 0o755, 1000, "", "", "not a browser's own program"},
		{"a program under a browser's name the user could write", "home/me/firefox", 0o777, 1000, "", "", "your user could have written"},
		{"root believes any browser's program", "home/me/firefox", 0o777, 0, "", Firefox, ""},
		{"another program named like the host", "usr/lib/firefox-esr/firefox-esr", 0o755, 1000, "home/me/antidrift-native-host", "", "not "},
	} {
		t.Run(c.name, func(t *testing.T) {
			f := newFakeProc(t)
			real := f.program(t, "usr/bin/"+Name, 0o755)
			exe := real
			if c.host != "" {
				exe = f.program(t, c.host, 0o755)
			}
			f.process(t, 10, 1, f.program(t, c.parent, c.perm), "evil) S 99 (x")
			f.process(t, 20, 10, exe, Name)
			h, err := Checker{HostExe: real, Proc: f.dir, UID: c.uid}.Identify(20)
			if c.refused != "" {
				if err == nil || !errors.Is(err, ErrNotAHost) || !strings.Contains(err.Error(), c.refused) {
					t.Fatalf("Identify: got %+v, %v; want a refusal (ErrNotAHost) saying %q", h, err, c.refused)
				}
				return
			}
			if err != nil || h.Browser != c.browser || h.BrowserPID != 10 || h.PID != 20 {
				t.Fatalf("Identify: got %+v, %v; want the host of a %s browser, pid 10", h, err, c.browser)
			}
		})
	}
}

func TestIdentifyRefusesWhatItCannotRead(t *testing.T) {
	f := newFakeProc(t)
	real := f.program(t, "usr/bin/"+Name, 0o755)
	for _, c := range []struct {
		name string
		c    Checker
		pid  int
	}{
		{"no such process", Checker{HostExe: real, Proc: f.dir}, 77},
		{"no process at all", Checker{HostExe: real, Proc: f.dir}, 0},
		{"no host installed", Checker{HostExe: filepath.Join(f.bin, "missing"), Proc: f.dir}, 20},
	} {
		if _, err := c.c.Identify(c.pid); err == nil || !errors.Is(err, ErrNotAHost) {
			t.Errorf("%s: Identify = %v, want a refusal", c.name, err)
		}
	}
}

// A browser's program the user owns is one a program of theirs could have
// put there: not believed (unless the daemon is root).
func TestIdentifyRefusesABrowserTheUserOwns(t *testing.T) {
	if os.Geteuid() != 0 {
		t.Skip("giving a file to another user needs root")
	}
	f := newFakeProc(t)
	real := f.program(t, "usr/bin/"+Name, 0o755)
	browser := f.program(t, "home/me/firefox/firefox", 0o755)
	if err := os.Chown(browser, 1000, 1000); err != nil {
		t.Fatal(err)
	}
	f.process(t, 10, 1, browser, "firefox")
	f.process(t, 20, 10, real, Name)
	if _, err := (Checker{HostExe: real, Proc: f.dir, UID: 1000}).Identify(20); err == nil || !strings.Contains(err.Error(), "your user could have written") {
		t.Fatalf("Identify with the browser owned by the daemon's user: got %v, want a refusal saying the user could have written it", err)
	}
	if _, err := (Checker{HostExe: real, Proc: f.dir, UID: 1001}).Identify(20); err != nil {
		t.Fatalf("Identify with the browser owned by another user: got %v, want it believed", err)
	}
}

// A launcher (xdg-native-messaging-proxy) is believed only when the
// Checker lists it, and the family is then what the host's arguments say.
func TestALauncherIsBelievedOnlyWhenListed(t *testing.T) {
	f := newFakeProc(t)
	real := f.program(t, "usr/bin/"+Name, 0o755)
	f.process(t, 10, 1, f.program(t, "usr/libexec/xdg-native-messaging-proxy", 0o755), "xdg-native-mess")
	f.process(t, 20, 10, real, Name)
	cmdline := Name + "\x00chrome-extension://fopagejekiabnkobjkkggigkgddpcehh/\x00"
	if err := os.WriteFile(filepath.Join(f.dir, "20", "cmdline"), []byte(cmdline), 0o644); err != nil {
		t.Fatal(err)
	}
	if _, err := (Checker{HostExe: real, Proc: f.dir, UID: 1000}).Identify(20); err == nil || !strings.Contains(err.Error(), "not a browser's own program") {
		t.Fatalf("a host the proxy started, the proxy not listed: got %v, want a refusal", err)
	}
	h, err := (Checker{HostExe: real, Proc: f.dir, UID: 1000, Launchers: []string{"xdg-native-messaging-proxy"}}).Identify(20)
	if err != nil || h.Browser != Chromium {
		t.Fatalf("a host the proxy started for Chromium, the proxy listed: got %+v, %v; want it believed as chromium", h, err)
	}
}
