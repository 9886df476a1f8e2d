package testenv

import (
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"syscall"
	"testing"
)

// Sway is a headless sway (1.10 from Debian 13, 1.12 from testing: its
// Release) running in a suite's rootfs, with its
// Wayland socket and its IPC socket under a fresh XDG_RUNTIME_DIR in the
// host's /tmp, so the test reaches both directly. It runs as root, like the
// tests that enter the rootfs. Methods are not safe for concurrent use.
type Sway struct {
	Release    Release
	RuntimeDir string // XDG_RUNTIME_DIR of sway and its clients
	Display    string // WAYLAND_DISPLAY: the socket's name in RuntimeDir
	SwaySock   string // SWAYSOCK: sway's IPC socket

	r    *Rootfs
	dir  string
	proc *Process
	apps []*Process
}

// swayConfig is all the config sway gets: no bar, no bindings, no
// background; new windows take focus as by default.
const swayConfig = "output HEADLESS-1 resolution 1280x720\n"

// StartSway is StartSwayRelease of Debian 13's sway 1.10.
func StartSway(t testing.TB) *Sway {
	t.Helper()
	return StartSwayRelease(t, Stable(SwayReleases))
}

// StartSwayRelease starts rel's sway (one of SwayReleases) in its suite's
// rootfs and returns once its sockets are up. It skips (or fails under
// ANTIDRIFT_E2E=require) like NeedSuiteRootfs.
func StartSwayRelease(t testing.TB, rel Release) *Sway {
	t.Helper()
	r := NeedSuiteRootfs(t, rel.Suite)
	CheckRelease(t, r, rel)
	dir := r.TempDir(t)
	s := &Sway{Release: rel, r: r, dir: dir, RuntimeDir: filepath.Join(dir, "run"), SwaySock: filepath.Join(dir, "run", "sway.sock")}
	if err := os.Mkdir(s.RuntimeDir, 0o700); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(filepath.Join(dir, "config"), []byte(swayConfig), 0o644); err != nil {
		t.Fatal(err)
	}
	s.start(t)
	return s
}

func (s *Sway) start(t testing.TB) {
	t.Helper()
	s.proc = s.r.Start(t, s.dir, 0, []string{
		"HOME=" + s.dir, "XDG_RUNTIME_DIR=" + s.RuntimeDir, "SWAYSOCK=" + s.SwaySock,
		"WLR_BACKENDS=headless", "WLR_RENDERER=pixman", "WLR_LIBINPUT_NO_DEVICES=1",
	}, "sway", "-c", filepath.Join(s.dir, "config"))
	WaitUntil(t, readyTimeout, "sway's sockets", func() bool {
		if s.proc.Exited() {
			t.Fatalf("sway exited:\n%s", s.proc.Output())
		}
		s.Display = waylandSocket(s.RuntimeDir)
		_, err := os.Stat(s.SwaySock)
		return s.Display != "" && err == nil
	})
}

// waylandSocket is the name of the Wayland socket in dir ("" if none yet).
func waylandSocket(dir string) string {
	names, _ := filepath.Glob(filepath.Join(dir, "wayland-*"))
	for _, n := range names {
		if !strings.HasSuffix(n, ".lock") {
			return filepath.Base(n)
		}
	}
	return ""
}

// Env is the environment of a client of this sway.
func (s *Sway) Env() []string {
	return []string{"HOME=" + s.dir, "XDG_RUNTIME_DIR=" + s.RuntimeDir, "WAYLAND_DISPLAY=" + s.Display, "SWAYSOCK=" + s.SwaySock}
}

// Run runs a short client of this sway (swaymsg, wtype) in the rootfs.
func (s *Sway) Run(argv ...string) (string, error) {
	return s.r.Run(0, s.Env(), runTimeout, argv...)
}

// Command is argv as a client of this sway in the rootfs, not started: for
// a long-running client whose output the test reads as it comes (swaymsg
// -m). Its process is the client's own (the wrappers exec it).
func (s *Sway) Command(argv ...string) *exec.Cmd {
	name, args := s.r.command(0, s.Env(), argv...)
	cmd := exec.Command(name, args...)
	cmd.Env = []string{"PATH=" + os.Getenv("PATH")}
	return cmd
}

// Msg runs swaymsg with args, failing the test if it fails.
func (s *Sway) Msg(t testing.TB, args ...string) string {
	t.Helper()
	out, err := s.Run(append([]string{"swaymsg"}, args...)...)
	if err != nil {
		t.Fatalf("swaymsg %s: %v\n%s", strings.Join(args, " "), err, out)
	}
	return out
}

// Foot opens a foot terminal with app id appID and title title, and
// returns a function that sets its title (through an escape sequence the
// terminal's shell prints). It does not wait for the window to map.
func (s *Sway) Foot(t testing.TB, appID, title string) (setTitle func(string)) {
	t.Helper()
	fifo := filepath.Join(s.dir, fmt.Sprintf("title-%d", len(s.apps)))
	if err := mkfifo(fifo); err != nil {
		t.Fatal(err)
	}
	// The shell holds the FIFO open read-write, so writers never block and
	// it never sees end-of-file.
	script := `exec 3<>"$0"; while read -r t <&3; do printf '\033]2;%s\007' "$t"; done`
	p := s.r.Start(t, s.dir, 0, s.Env(), "foot", "--app-id="+appID, "--title="+title, "sh", "-c", script, fifo)
	s.apps = append(s.apps, p)
	return func(title string) {
		f, err := os.OpenFile(fifo, os.O_WRONLY, 0)
		if err != nil {
			t.Fatal(err)
		}
		defer f.Close()
		if _, err := f.WriteString(title + "\n"); err != nil {
			t.Fatal(err)
		}
	}
}

// Kill stops sway (its clients lose their connection and exit).
func (s *Sway) Kill() { s.proc.Stop() }

// Restart starts sway again in the same runtime directory, where it takes
// the same socket name.
func (s *Sway) Restart(t testing.TB) {
	t.Helper()
	s.Kill()
	was := s.Display
	os.Remove(s.SwaySock)
	s.start(t)
	if s.Display != was {
		t.Fatalf("sway came back as %s, was %s", s.Display, was)
	}
}

// Output is what sway logged so far, for failure messages.
func (s *Sway) Output() string { return s.proc.Output() }

func mkfifo(path string) error { return syscall.Mkfifo(path, 0o600) }
