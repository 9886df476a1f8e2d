// Package testenv starts the real desktop plumbing that antidrift talks to, for
// end-to-end tests: a private D-Bus daemon, an Xvfb display managed by openbox
// (or xfwm4, marco or muffin: xwm.go), dunst as the notification server, and
// dbus-monitor as a witness; and, from each Debian suite's rootfs (rootfs.go),
// the Wayland compositors people run, at each version a suite ships
// (release.go): sway (sway.go), labwc (labwc.go), KWin (kwin.go) and GNOME
// Shell with its extensions (gnome.go), with native Wayland windows.
//
// Everything lives in temp dirs and picks its own socket and display number, so
// tests can run next to each other and next to a real desktop session. Every
// child runs in its own process group; t.Cleanup kills the whole group and waits
// for it, so a test leaves no processes behind.
//
// Tests poll for conditions (WaitUntil) rather than sleeping, because they run
// on small, busy CI machines where any fixed delay is eventually too short.
package testenv

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"slices"
	"strconv"
	"strings"
	"sync"
	"syscall"
	"testing"
	"time"
)

// RequireEnv is the environment variable that turns missing tools from a skip
// into a failure. CI sets ANTIDRIFT_E2E=require so that a broken image cannot
// silently skip the whole end-to-end suite.
const RequireEnv = "ANTIDRIFT_E2E"

// readyTimeout bounds every "wait until it is up" in this package. It is long
// on purpose: it only matters when something is broken, and a loaded 2-core
// machine running the race detector can be slow to start X clients.
const readyTimeout = 30 * time.Second

// runTimeout bounds Bus.Run and Display.Run.
const runTimeout = 10 * time.Second

// aptPackages names the Debian package that ships each tool, so that a skip or
// failure says exactly what to install.
var aptPackages = map[string]string{
	"dbus-daemon":  "dbus",
	"dbus-monitor": "dbus",
	"dbus-send":    "dbus",
	"gdbus":        "libglib2.0-bin",
	"busctl":       "systemd",
	"Xvfb":         "xvfb",
	"xprop":        "x11-utils",
	"xdotool":      "xdotool",
	"wmctrl":       "wmctrl",
	"openbox":      "openbox",
	"dunst":        "dunst",
	"dunstctl":     "dunst",
	"notify-send":  "libnotify-bin",
	XfceNotifyd:    "xfce4-notifyd",
	Xfconfd:        "xfconf",
	"xfconf-query": "xfconf",
	"xterm":        "xterm",
	"chromium":     "chromium",
	"node":         "nodejs",
	"zip":          "zip",
	atspiLauncher:  "at-spi2-core",

	"systemd-analyze":   "systemd",
	"unshare":           "util-linux",
	"chroot":            "coreutils",
	"nsenter":           "util-linux",
	"setpriv":           "util-linux",
	"make":              "make",
	"dpkg-buildpackage": "dpkg-dev",
	"dpkg-deb":          "dpkg",
	"dh":                "debhelper",
	"man":               "man-db",
	"lexgrog":           "man-db",
	"git":               "git",
	"rpm":               "rpm",
	"rpmbuild":          "rpm",
	"rpmlint":           "rpmlint",
	"makepkg":           "makepkg",
	"fakeroot":          "fakeroot",
	"bsdtar":            "libarchive-tools",
	"task":              "taskwarrior",
}

// Need skips the test unless every tool is in PATH. With ANTIDRIFT_E2E=require
// it fails instead, naming the tools and the apt packages that provide them.
func Need(t testing.TB, tools ...string) {
	t.Helper()
	var missing, pkgs []string
	for _, tool := range tools {
		if _, err := exec.LookPath(tool); err == nil {
			continue
		}
		pkg, ok := aptPackages[tool]
		if !ok {
			missing = append(missing, tool+" (unknown apt package)")
			continue
		}
		missing = append(missing, fmt.Sprintf("%s (apt package %s)", tool, pkg))
		if !slices.Contains(pkgs, pkg) {
			pkgs = append(pkgs, pkg)
		}
	}
	if len(missing) == 0 {
		return
	}
	msg := "missing tools: " + strings.Join(missing, ", ")
	if len(pkgs) > 0 {
		msg += "; install with: apt-get install " + strings.Join(pkgs, " ")
	}
	if os.Getenv(RequireEnv) == "require" {
		t.Fatalf("%s=require but %s", RequireEnv, msg)
		return
	}
	t.Skipf("%s (set %s=require to fail instead of skipping)", msg, RequireEnv)
}

// WaitUntil polls cond every 20ms until it returns true, and fails the test
// with "timed out ... waiting for <what>" if that does not happen within
// timeout. Use it for conditions (a window got focus, a name got an owner),
// never as a disguised sleep. When the condition is about one value, use
// WaitFor or WaitForValue instead: their failure says the last value seen.
func WaitUntil(t testing.TB, timeout time.Duration, what string, cond func() bool) {
	t.Helper()
	if !waitUntil(timeout, cond) {
		t.Fatalf("timed out after %v waiting for %s", timeout, what)
	}
}

// WaitFor polls get every 20ms until done accepts what it returned, and
// returns that value. If that does not happen within timeout it fails the
// test naming what it waited for and the last value get returned, so a
// failure says what it saw:
//
//	timed out after 30s waiting for Drift to be "away"; last saw "on-task"
//
// Strings are shown quoted; other values as %v prints them.
func WaitFor[T any](t testing.TB, timeout time.Duration, what string, get func() T, done func(T) bool) T {
	t.Helper()
	var last T
	if !waitUntil(timeout, func() bool { last = get(); return done(last) }) {
		t.Fatalf("timed out after %v waiting for %s; last saw %s", timeout, what, shown(last))
	}
	return last
}

// WaitForValue waits, as WaitFor does, until get returns want; name is what
// get reads ("Drift").
func WaitForValue[T comparable](t testing.TB, timeout time.Duration, name string, want T, get func() T) T {
	t.Helper()
	return WaitFor(t, timeout, name+" to be "+shown(want), get, func(v T) bool { return v == want })
}

func shown(v any) string {
	if s, ok := v.(string); ok {
		return strconv.Quote(s)
	}
	return fmt.Sprintf("%v", v)
}

func waitUntil(timeout time.Duration, cond func() bool) bool {
	deadline := time.Now().Add(timeout)
	for !cond() {
		if time.Now().After(deadline) {
			return false
		}
		time.Sleep(20 * time.Millisecond)
	}
	return true
}

// ownerEnv is set in the environment of every process this package starts, and
// so inherited by their children (xterm's shell, bus-activated services). The
// package's own tests use it to prove that cleanup leaves nothing running.
const ownerEnv = "ANTIDRIFT_TESTENV_OWNER"

func ownerMark() string { return ownerEnv + "=" + strconv.Itoa(os.Getpid()) }

// withEnv returns base with each KEY=value in kv set, replacing earlier values.
func withEnv(base []string, kv ...string) []string {
	out := make([]string, 0, len(base)+len(kv))
	for _, e := range base {
		key, _, _ := strings.Cut(e, "=")
		if !slices.ContainsFunc(kv, func(s string) bool { return strings.HasPrefix(s, key+"=") }) {
			out = append(out, e)
		}
	}
	return append(out, kv...)
}

var safePath = regexp.MustCompile(`^[A-Za-z0-9/._+-]+$`)

// tempDir returns a fresh directory for one piece of the harness. Its path ends
// up in a unix socket address (at most 108 bytes) and in config files parsed by
// other programs (dunstrc, dbus XML, shell-like Exec lines), so if t.TempDir()
// is long or contains characters test names may contain (space, '#', '$') we
// fall back to a plain os.MkdirTemp directory, removed at cleanup.
func tempDir(t testing.TB) string {
	t.Helper()
	dir := t.TempDir()
	if len(dir) <= 80 && safePath.MatchString(dir) {
		return dir
	}
	dir, err := os.MkdirTemp("", "antidrift-testenv-")
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { os.RemoveAll(dir) })
	return dir
}

// proc is a long-running child in its own process group, so that stop takes
// down everything it spawned too (bus-activated services, dunst's menu script).
// Its stdout and stderr go to a log file, not a pipe: a grandchild holding a
// pipe open would otherwise make Wait hang.
type proc struct {
	name string
	cmd  *exec.Cmd
	log  string
	done chan struct{} // closed once the child has exited and been reaped
	once sync.Once
}

// start launches name with env in dir. setup may adjust the command (extra
// files, stdout) before it starts. The process is stopped at t's cleanup.
func start(t testing.TB, dir string, env []string, setup func(*exec.Cmd), name string, args ...string) *proc {
	t.Helper()
	logf, err := os.CreateTemp(dir, filepath.Base(name)+"-*.log")
	if err != nil {
		t.Fatal(err)
	}
	defer logf.Close()
	cmd := exec.Command(name, args...)
	cmd.Dir = dir
	cmd.Env = withEnv(env, ownerMark())
	cmd.Stdout, cmd.Stderr = logf, logf
	// Pdeathsig is a safety net for when the test binary dies without running
	// cleanups (e.g. go test -timeout panics): the direct child dies with it.
	cmd.SysProcAttr = &syscall.SysProcAttr{Setpgid: true, Pdeathsig: syscall.SIGKILL}
	if setup != nil {
		setup(cmd)
	}
	if err := cmd.Start(); err != nil {
		t.Fatalf("start %s: %v", name, err)
	}
	p := &proc{name: name, cmd: cmd, log: logf.Name(), done: make(chan struct{})}
	go func() {
		cmd.Wait()
		close(p.done)
	}()
	t.Cleanup(p.stop)
	return p
}

func (p *proc) pid() int { return p.cmd.Process.Pid }

func (p *proc) exited() bool {
	select {
	case <-p.done:
		return true
	default:
		return false
	}
}

// output is what the process wrote to stdout/stderr so far, for failure messages.
func (p *proc) output() string {
	b, err := os.ReadFile(p.log)
	if err != nil {
		return fmt.Sprintf("(no output from %s: %v)", p.name, err)
	}
	return fmt.Sprintf("--- %s (pid %d) output ---\n%s", p.name, p.pid(), b)
}

// stop sends SIGTERM to the process group (so X and D-Bus servers remove their
// sockets and lock files), escalates to SIGKILL after 5s, waits for the leader,
// then SIGKILLs whatever is left in the group. It is idempotent.
func (p *proc) stop() {
	p.once.Do(func() {
		pgid := p.pid()
		syscall.Kill(-pgid, syscall.SIGTERM)
		select {
		case <-p.done:
		case <-time.After(5 * time.Second):
			syscall.Kill(-pgid, syscall.SIGKILL)
			<-p.done
		}
		syscall.Kill(-pgid, syscall.SIGKILL)
	})
}

// run runs a short command to completion with env, killing its process group
// on timeout. stderr is folded into the returned error.
func run(env []string, timeout time.Duration, name string, args ...string) (string, error) {
	ctx, cancel := context.WithTimeout(context.Background(), timeout)
	defer cancel()
	cmd := exec.CommandContext(ctx, name, args...)
	cmd.Env = withEnv(env, ownerMark())
	cmd.SysProcAttr = &syscall.SysProcAttr{Setpgid: true}
	cmd.Cancel = func() error { return syscall.Kill(-cmd.Process.Pid, syscall.SIGKILL) }
	cmd.WaitDelay = time.Second
	var stdout, stderr bytes.Buffer
	cmd.Stdout, cmd.Stderr = &stdout, &stderr
	err := cmd.Run()
	if cmd.Process != nil {
		syscall.Kill(-cmd.Process.Pid, syscall.SIGKILL) // anything it left in the background
	}
	if err != nil && ctx.Err() != nil {
		err = fmt.Errorf("timed out after %v", timeout)
	}
	if err != nil {
		return stdout.String(), fmt.Errorf("%s %s: %w; stderr: %s",
			name, strings.Join(args, " "), err, strings.TrimSpace(stderr.String()))
	}
	return stdout.String(), nil
}

// readLine reads one newline-terminated line from a pipe, which is how
// dbus-daemon (--print-address) and Xvfb (-displayfd) say they are ready.
// It fails on timeout or when the writer exits without writing.
func readLine(r *os.File, timeout time.Duration) (string, error) {
	r.SetReadDeadline(time.Now().Add(timeout))
	var line []byte
	buf := make([]byte, 256)
	for {
		n, err := r.Read(buf)
		line = append(line, buf[:n]...)
		if i := bytes.IndexByte(line, '\n'); i >= 0 {
			return string(line[:i]), nil
		}
		if errors.Is(err, os.ErrDeadlineExceeded) {
			return "", fmt.Errorf("nothing written within %v", timeout)
		}
		if err != nil {
			return "", fmt.Errorf("exited before writing a line (got %q)", line)
		}
	}
}
