package testenv

import (
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"syscall"
	"testing"
)

// Sway is a headless sway (1.10 from Debian 13, 1.12 from testing: its
// Release) running in a suite's rootfs, with its Wayland socket and its IPC
// socket under a fresh XDG_RUNTIME_DIR in the host's /tmp, so the test
// reaches both directly. It runs as root, like the tests that enter the
// rootfs. Methods are not safe for concurrent use.
type Sway struct {
	wlroots
	SwaySock string // SWAYSOCK: sway's IPC socket
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
	s := &Sway{wlroots: newWlroots(t, rel)}
	s.SwaySock = filepath.Join(s.RuntimeDir, "sway.sock")
	if err := os.WriteFile(filepath.Join(s.dir, "config"), []byte(swayConfig), 0o644); err != nil {
		t.Fatal(err)
	}
	s.start(t)
	return s
}

func (s *Sway) start(t testing.TB) {
	t.Helper()
	s.wlroots.start(t, append(s.headlessEnv(), "SWAYSOCK="+s.SwaySock), func() bool {
		_, err := os.Stat(s.SwaySock)
		return err == nil
	}, "sway", "-c", filepath.Join(s.dir, "config"))
}

// Env is the environment of a client of this sway.
func (s *Sway) Env() []string { return append(s.clientEnv(), "SWAYSOCK="+s.SwaySock) }

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
	return s.foot(t, s.Env(), appID, title)
}

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

func mkfifo(path string) error { return syscall.Mkfifo(path, 0o600) }
