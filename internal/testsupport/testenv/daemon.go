package testenv

import (
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"sync"
	"syscall"
	"testing"
	"time"
)

// binDir holds the binaries built for this test process; Main creates and
// removes it.
var (
	binDir   string
	binMu    sync.Mutex
	binBuilt = map[string]error{}
)

// Main runs a test package that uses Binary or StartDaemon: it gives the
// built binaries a home for the run and removes it afterwards. Use it as
// func TestMain(m *testing.M) { os.Exit(testenv.Main(m)) }.
func Main(m *testing.M) int {
	dir, err := os.MkdirTemp("", "antidrift-bin-")
	if err != nil {
		panic(err)
	}
	defer os.RemoveAll(dir)
	binDir = dir
	return m.Run()
}

// Binary builds ./cmd/<name> of this module once per test process and
// returns the path of the executable.
func Binary(t testing.TB, name string) string {
	t.Helper()
	return build(t, "./cmd/"+name, name)
}

// build builds the package pkg of this module once per test process, to
// rel under the binaries' directory, and returns the executable's path.
func build(t testing.TB, pkg, rel string) string {
	t.Helper()
	if binDir == "" {
		t.Fatal("testenv.Binary needs TestMain to call testenv.Main")
	}
	binMu.Lock()
	defer binMu.Unlock()
	out := filepath.Join(binDir, rel)
	err, done := binBuilt[rel]
	if !done {
		root, rerr := moduleRoot()
		if rerr != nil {
			t.Fatal(rerr)
		}
		cmd := exec.Command("go", "build", "-o", out, pkg)
		cmd.Dir = root
		if b, berr := cmd.CombinedOutput(); berr != nil {
			err = &buildError{name: rel, out: string(b), err: berr}
		}
		binBuilt[rel] = err
	}
	if err != nil {
		t.Fatal(err)
	}
	return out
}

type buildError struct {
	name, out string
	err       error
}

func (e *buildError) Error() string {
	return "building " + e.name + ": " + e.err.Error() + "\n" + e.out
}

// moduleRoot finds the directory holding go.mod, from the test's working
// directory (the package directory) upwards.
func moduleRoot() (string, error) {
	dir, err := os.Getwd()
	if err != nil {
		return "", err
	}
	for {
		if _, err := os.Stat(filepath.Join(dir, "go.mod")); err == nil {
			return dir, nil
		}
		parent := filepath.Dir(dir)
		if parent == dir {
			return "", os.ErrNotExist
		}
		dir = parent
	}
}

// Daemon is antidriftd running as a real process on a private bus.
type Daemon struct {
	Bus      *Bus
	StateDir string
	args     []string
	env      []string
	proc     *proc
	session  *Session // made by Session on first use
}

// StartDaemon starts antidriftd on b with its state in stateDir and waits
// until it owns org.antidrift. It sees no X display and reads no config,
// no desktop entries and no system bus unless extraEnv says otherwise
// (DISPLAY=…, XDG_CONFIG_HOME=…, XDG_DATA_HOME=… and XDG_DATA_DIRS=…,
// DBUS_SYSTEM_BUS_ADDRESS=…), so a test never watches the developer's own
// desktop or logind, or reads their config or names their windows by the
// apps installed (only /var/lib/flatpak and /var/lib/snapd, fixed paths,
// are still read where they exist).
func StartDaemon(t testing.TB, b *Bus, stateDir string, extraEnv ...string) *Daemon {
	t.Helper()
	isolated := []string{"DISPLAY=", "WAYLAND_DISPLAY=", "XDG_CONFIG_HOME=" + tempDir(t), "DBUS_SYSTEM_BUS_ADDRESS=unix:path=/nonexistent/antidrift-test",
		"XDG_DATA_HOME=" + tempDir(t), "XDG_DATA_DIRS=" + tempDir(t)}
	d := &Daemon{Bus: b, StateDir: stateDir, env: append(isolated, extraEnv...)}
	d.Start(t)
	return d
}

// Start (re)starts the daemon process and waits for its name.
func (d *Daemon) Start(t testing.TB) {
	t.Helper()
	bin := Binary(t, "antidriftd")
	env := withEnv(d.Bus.Env(), d.env...)
	d.proc = start(t, tempDir(t), env, nil, bin, "--state-dir", d.StateDir)
	d.Bus.waitForOwner(t, "antidriftd", "org.antidrift", d.proc)
}

// Kill9 kills the daemon with SIGKILL, as a crash would, and waits.
func (d *Daemon) Kill9(t testing.TB) {
	t.Helper()
	syscall.Kill(d.proc.pid(), syscall.SIGKILL)
	<-d.proc.done
}

// Stop sends SIGTERM, as systemd would, and waits for the daemon to exit.
func (d *Daemon) Stop(t testing.TB) {
	t.Helper()
	syscall.Kill(d.proc.pid(), syscall.SIGTERM)
	select {
	case <-d.proc.done:
	case <-time.After(readyTimeout):
		t.Fatalf("antidriftd did not exit on SIGTERM\n%s", d.proc.output())
	}
}

// ExitCode is the daemon's exit status; -1 while it runs.
func (d *Daemon) ExitCode() int {
	if !d.proc.exited() {
		return -1
	}
	return d.proc.cmd.ProcessState.ExitCode()
}

// PID is the daemon's process id.
func (d *Daemon) PID() int { return d.proc.pid() }

// Output is what the daemon logged so far.
func (d *Daemon) Output() string { return d.proc.output() }

// Busctl runs busctl --user against the daemon's object and interface.
// verb is e.g. "call" or "get-property"; args follow the object path and
// interface.
func (d *Daemon) Busctl(t testing.TB, verb string, args ...string) (string, error) {
	t.Helper()
	full := append([]string{"--user", verb, "org.antidrift", "/org/antidrift/Session1", "org.antidrift.Session1"}, args...)
	out, err := d.Bus.Run(t, "busctl", full...)
	return strings.TrimSpace(out), err
}
