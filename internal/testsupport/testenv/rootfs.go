package testenv

import (
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"runtime"
	"strconv"
	"strings"
	"syscall"
	"testing"
	"time"
)

// Rootfs is one Debian suite's root filesystem that scripts/desktop-rootfs.sh
// builds once into a cache outside the checkout. The host runs Debian 12,
// whose compositors are older than what people run; Debian 13's (sway 1.10,
// KWin 6.3, GNOME Shell 48), testing's (sway 1.12, labwc 0.20, KWin 6.7,
// GNOME Shell 50) and unstable's GNOME Shell 51 run from these instead,
// headless and without a GPU.
//
// Programs run inside it in a private mount namespace (unshare -m) under
// chroot, with /dev, /proc and /sys bound in and the host's /tmp bound at
// the same path. So a socket a compositor makes under /tmp has the same
// path on both sides: the host's private bus, the daemon under test and the
// test itself reach it as they would on a real desktop.
type Rootfs struct {
	Dir   string
	Suite string // trixie, forky, sid
}

// scriptsDir is the checkout's scripts/ directory, found from this file.
func scriptsDir() string {
	_, file, _, _ := runtime.Caller(0)
	return filepath.Join(filepath.Dir(file), "..", "..", "..", "scripts")
}

// NeedRootfs returns the built Debian 13 rootfs (see NeedSuiteRootfs).
func NeedRootfs(t testing.TB) *Rootfs {
	t.Helper()
	return NeedSuiteRootfs(t, "trixie")
}

// NeedSuiteRootfs returns the built rootfs of the Debian suite. It skips
// the test, naming what is missing, when that rootfs is not built or the
// test is not root (unshare -m and chroot need it); with ANTIDRIFT_E2E=require
// it fails instead. make test-deps builds every suite's rootfs.
func NeedSuiteRootfs(t testing.TB, suite string) *Rootfs {
	t.Helper()
	Need(t, "unshare", "chroot")
	out, err := exec.Command(filepath.Join(scriptsDir(), "desktop-rootfs.sh"), suite, "--path").CombinedOutput()
	why := strings.TrimSpace(string(out))
	if err == nil && os.Getuid() != 0 {
		err, why = fmt.Errorf("not root"), "entering the Wayland test rootfs needs root (unshare -m, chroot)"
	}
	if err != nil {
		if os.Getenv(RequireEnv) == "require" {
			t.Fatalf("%s=require but %s", RequireEnv, why)
		}
		t.Skipf("%s (set %s=require to fail instead of skipping)", why, RequireEnv)
	}
	return &Rootfs{Dir: why, Suite: suite}
}

// TempDir is a fresh directory under the host's /tmp (so it is visible at
// the same path inside the rootfs), traversable by any user, removed at
// cleanup. Compositors' XDG_RUNTIME_DIR and HOME go here.
func (r *Rootfs) TempDir(t testing.TB) string {
	t.Helper()
	return sharedTempDir(t)
}

// sharedTempDir is a fresh directory under /tmp that every user may
// traverse, removed at cleanup.
func sharedTempDir(t testing.TB) string {
	t.Helper()
	dir, err := os.MkdirTemp("/tmp", "antidrift-rootfs-")
	if err != nil {
		t.Fatal(err)
	}
	if err := os.Chmod(dir, 0o755); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { os.RemoveAll(dir) })
	return dir
}

// enterScript binds the host's directories into the rootfs ($1) and execs
// chroot as the user in $2 with only the environment given after it.
const enterScript = `R=$1; U=$2; shift 2
mount --rbind /dev "$R/dev" && mount --rbind /proc "$R/proc" && mount --rbind /sys "$R/sys" && mount --bind /tmp "$R/tmp" || exit 125
exec chroot --userspec="$U" "$R" /usr/bin/env -i "$@"`

// command is argv wrapped to run inside the rootfs as uid (0 for root; any
// other uid runs with the same gid) with exactly env plus a PATH.
func (r *Rootfs) command(uid int, env []string, argv ...string) (string, []string) {
	user := strconv.Itoa(uid) + ":" + strconv.Itoa(uid)
	args := []string{"-m", "--propagation", "private", "/bin/sh", "-c", enterScript, "sh", r.Dir, user,
		"PATH=/usr/local/bin:/usr/bin:/bin", ownerMark()}
	args = append(args, env...)
	return "unshare", append(args, argv...)
}

// Process is a long-running program started by Rootfs.Start.
type Process struct{ p *proc }

// Stop ends it and everything it started (idempotent; also done at cleanup).
func (p *Process) Stop() { p.p.stop() }

// Kill9 kills it and everything it started with SIGKILL, as a crash
// would, and waits for it.
func (p *Process) Kill9() {
	syscall.Kill(-p.p.pid(), syscall.SIGKILL)
	<-p.p.done
}

// Exited says whether it has exited.
func (p *Process) Exited() bool { return p.p.exited() }

// PID is its process id on the host.
func (p *Process) PID() int { return p.p.pid() }

// Output is what it wrote so far, for failure messages.
func (p *Process) Output() string { return p.p.output() }

// Start runs argv inside the rootfs as uid with env, in its own process
// group, its output logged to a file in dir; it is stopped at cleanup.
func (r *Rootfs) Start(t testing.TB, dir string, uid int, env []string, argv ...string) *Process {
	t.Helper()
	name, args := r.command(uid, env, argv...)
	return &Process{start(t, dir, []string{"PATH=" + os.Getenv("PATH")}, nil, name, args...)}
}

// Run runs a short command inside the rootfs as uid with env, bounded by
// timeout; stderr is folded into the error.
func (r *Rootfs) Run(uid int, env []string, timeout time.Duration, argv ...string) (string, error) {
	name, args := r.command(uid, env, argv...)
	return run([]string{"PATH=" + os.Getenv("PATH")}, timeout, name, args...)
}
