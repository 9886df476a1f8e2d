package testenv

import (
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"strings"
	"syscall"
	"testing"
	"time"
)

// Machine is a Debian 13 system booted with systemd as PID 1 of fresh
// namespaces, from the rootfs scripts/systemd-rootfs.sh builds: a real
// system manager, logind, and user 1000 ("alice") lingering, so its user
// manager (user@1000.service) and session bus run as on a desktop. It is how
// the tests check antidrift as a package installs it: D-Bus activation
// handed to systemd, the unit's watchdog, sandbox and journal.
//
// It boots on a private overlay of the cached tree (a tmpfs upper layer, in
// its own mount namespace), so installing packages in it changes nothing
// outside. It shares the host's network namespace: a server the test
// listens with on 127.0.0.1 is on the machine's loopback too.
type Machine struct {
	init int    // its systemd (PID 1 inside), as a host pid
	dir  string // host scratch directory: the boot log, the cgroup's name
	boot *proc
	cg   string // the dedicated cgroup2 directory it was started in
}

// The user whose manager the tests use, as the rootfs creates it.
const (
	MachineUID  = 1000
	MachineUser = "alice"
	MachineHome = "/home/alice"
)

// SessionBus selects the session bus of a Machine's user: the two
// implementations desktops ship.
type SessionBus string

const (
	DBusDaemon SessionBus = "dbus-daemon" // Debian's and Ubuntu's default
	DBusBroker SessionBus = "dbus-broker" // Fedora's and Arch's default
)

// NeedSystemdRootfs returns the built rootfs for Machine. It skips the test,
// naming what is missing, when it is not built, the test is not root, or
// the host has no cgroup2 hierarchy to boot it in; with ANTIDRIFT_E2E=require
// it fails instead. make test-deps builds it.
func NeedSystemdRootfs(t testing.TB) string {
	t.Helper()
	Need(t, "unshare", "nsenter", "setpriv")
	out, err := exec.Command(filepath.Join(scriptsDir(), "systemd-rootfs.sh"), "--path").CombinedOutput()
	why := strings.TrimSpace(string(out))
	switch {
	case err != nil:
	case os.Getuid() != 0:
		err, why = fmt.Errorf("not root"), "booting the systemd test rootfs needs root (namespaces, mounts, cgroups)"
	case cgroup2Root() == "":
		err, why = fmt.Errorf("no cgroup2"), "booting the systemd test rootfs needs a cgroup2 hierarchy on the host"
	}
	if err != nil {
		if os.Getenv(RequireEnv) == "require" {
			t.Fatalf("%s=require but %s", RequireEnv, why)
		}
		t.Skipf("%s (set %s=require to fail instead of skipping)", why, RequireEnv)
	}
	return why
}

// cgroup2Root is where the host mounts the unified cgroup hierarchy: the
// whole of /sys/fs/cgroup, or /sys/fs/cgroup/unified on a hybrid host.
func cgroup2Root() string {
	for _, dir := range []string{"/sys/fs/cgroup", "/sys/fs/cgroup/unified"} {
		var st syscall.Statfs_t
		if syscall.Statfs(dir, &st) == nil && st.Type == 0x63677270 { // CGROUP2_SUPER_MAGIC
			return dir
		}
	}
	return ""
}

// bootScript runs as PID 1 of the new namespaces. It lays a tmpfs overlay
// over the cached rootfs ($1) in scratch directory $2, mounts what systemd
// expects (proc with /proc/sys read-only, so the guest's systemd-sysctl
// cannot rewrite the host's sysctls; sysfs read-only; a cgroup2 of its own;
// a private /dev and /run), pivots into it and execs systemd. pivot_root, not
// chroot: a chrooted manager cannot create the namespaces PrivateTmp= and the
// like need, and silently does without them. $3 is the session bus to leave
// enabled for users. The host's X sockets are bound at /run/host-x11 for
// ShareX (the guest's /tmp is a tmpfs systemd mounts at boot).
const bootScript = `set -e
R=$1 T=$2 BUS=$3
mount --make-rprivate /
mount -t tmpfs -o mode=0755 antidrift-machine "$T"
mkdir "$T/upper" "$T/work" "$T/root"
mount -t overlay overlay -o "lowerdir=$R,upperdir=$T/upper,workdir=$T/work" "$T/root"
N=$T/root
if [ "$BUS" = dbus-daemon ]; then
	rm -f "$N/etc/systemd/user/dbus.service"
else
	ln -sf /usr/lib/systemd/user/dbus-broker.service "$N/etc/systemd/user/dbus.service"
fi
mount -t proc proc "$N/proc"
mount --bind "$N/proc/sys" "$N/proc/sys"
mount -o remount,bind,ro "$N/proc/sys"
mount -t sysfs -o ro sysfs "$N/sys"
mount -t cgroup2 cgroup2 "$N/sys/fs/cgroup"
mount -t tmpfs -o mode=0755 dev "$N/dev"
mknod -m 0666 "$N/dev/null" c 1 3
mknod -m 0666 "$N/dev/zero" c 1 5
mknod -m 0666 "$N/dev/full" c 1 7
mknod -m 0666 "$N/dev/random" c 1 8
mknod -m 0666 "$N/dev/urandom" c 1 9
mknod -m 0666 "$N/dev/tty" c 5 0
mkdir "$N/dev/pts" "$N/dev/shm"
mount -t devpts -o newinstance,ptmxmode=0666,mode=0620 devpts "$N/dev/pts"
ln -s pts/ptmx "$N/dev/ptmx"
mount -t tmpfs -o mode=1777 shm "$N/dev/shm"
mount -t tmpfs -o mode=0755 run "$N/run"
[ -d /tmp/.X11-unix ] || mkdir -m 1777 /tmp/.X11-unix
mkdir "$N/run/host-x11"
mount --bind /tmp/.X11-unix "$N/run/host-x11"
cd "$N"
mkdir -p .oldroot
pivot_root . .oldroot
umount -l /.oldroot
rmdir /.oldroot
exec /usr/lib/systemd/systemd systemd.mask=console-getty.service systemd.mask=systemd-modules-load.service
`

// BootMachine boots a Machine with bus as its users' session bus, and waits
// until user 1000's manager and session bus are up. It is shut down at
// cleanup.
func BootMachine(t testing.TB, bus SessionBus) *Machine {
	t.Helper()
	rootfs := NeedSystemdRootfs(t)
	dir := tempDir(t)
	scratch := filepath.Join(dir, "machine")
	if err := os.Mkdir(scratch, 0o700); err != nil {
		t.Fatal(err)
	}
	// A cgroup of its own, which becomes the root of its cgroup namespace;
	// named for this test process too, so one that a killed run could not
	// remove is never in the way of the next.
	cg := filepath.Join(cgroup2Root(), fmt.Sprintf("antidrift-machine-%d-%s", os.Getpid(), filepath.Base(dir)))
	if err := os.Mkdir(cg, 0o755); err != nil {
		t.Fatalf("the machine's cgroup: %v", err)
	}
	m := &Machine{dir: dir, cg: cg}
	m.boot = start(t, dir, []string{"PATH=/usr/sbin:/usr/bin:/sbin:/bin"}, nil, "/bin/sh", "-c",
		`echo $$ > "$1/cgroup.procs" && shift && exec unshare --mount --uts --ipc --pid --cgroup --fork --kill-child /bin/sh -c "$@"`,
		"sh", cg, bootScript, "boot", rootfs, scratch, string(bus))
	t.Cleanup(m.shutdown)
	WaitUntil(t, readyTimeout, "the machine's systemd to start", func() bool {
		m.init = m.initPID()
		return m.init != 0 || m.boot.exited()
	})
	if m.boot.exited() {
		t.Fatalf("the machine did not boot:\n%s", m.boot.output())
	}
	// The user manager, then its bus: the bus socket is a user unit.
	var state string
	if !waitUntil(2*readyTimeout, func() bool {
		state, _ = m.Run(0, 5*time.Second, "systemctl", "is-active", "user@1000.service")
		return strings.TrimSpace(state) == "active" || m.boot.exited()
	}) {
		t.Fatalf("user@1000.service is %q after %v:\n%s", strings.TrimSpace(state), 2*readyTimeout, m.boot.output())
	}
	WaitUntil(t, readyTimeout, "user 1000's session bus", func() bool {
		_, err := m.User(5*time.Second, "busctl", "--user", "status")
		return err == nil
	})
	return m
}

// initPID finds the systemd that unshare forked, by pid on the host.
func (m *Machine) initPID() int {
	raw, err := os.ReadFile(fmt.Sprintf("/proc/%d/task/%d/children", m.boot.pid(), m.boot.pid()))
	if err != nil {
		return 0
	}
	// The boot's shell execs unshare, whose only child is the new PID 1.
	fields := strings.Fields(string(raw))
	if len(fields) != 1 {
		return 0
	}
	pid, _ := strconv.Atoi(fields[0])
	if exe, _ := os.Readlink(fmt.Sprintf("/proc/%d/exe", pid)); !strings.HasSuffix(exe, "/systemd") {
		return 0
	}
	return pid
}

// Init is the machine's PID 1, as a host pid.
func (m *Machine) Init() int { return m.init }

// Log is what its systemd wrote to its console, for failure messages.
func (m *Machine) Log() string { return m.boot.output() }

// Path is name (an absolute path inside the machine) as the host reaches it.
func (m *Machine) Path(name string) string {
	return fmt.Sprintf("/proc/%d/root%s", m.init, name)
}

// Run runs argv inside the machine as uid, in all its namespaces, with the
// environment a login of that user has (for uid 1000: XDG_RUNTIME_DIR and
// the session bus), bounded by timeout; stderr is folded into the error.
func (m *Machine) Run(uid int, timeout time.Duration, argv ...string) (string, error) {
	env := []string{"PATH=/usr/local/bin:/usr/bin:/bin:/usr/sbin:/sbin", "LANG=C.UTF-8", "SYSTEMD_PAGER=", "SYSTEMD_COLORS=0"}
	if uid == 0 {
		env = append(env, "DEBIAN_FRONTEND=noninteractive")
	} else {
		rt := fmt.Sprintf("/run/user/%d", uid)
		env = append(env, "HOME="+MachineHome, "USER="+MachineUser, "XDG_RUNTIME_DIR="+rt,
			"DBUS_SESSION_BUS_ADDRESS=unix:path="+rt+"/bus")
	}
	args := []string{"--all", "--target", strconv.Itoa(m.init), "--root", "--wd",
		"setpriv", "--reuid", strconv.Itoa(uid), "--regid", strconv.Itoa(uid), "--clear-groups",
		"/usr/bin/env", "-i"}
	args = append(append(args, env...), argv...)
	return run([]string{"PATH=" + os.Getenv("PATH")}, timeout, "nsenter", args...)
}

// User runs argv as user 1000 (see Run).
func (m *Machine) User(timeout time.Duration, argv ...string) (string, error) {
	return m.Run(MachineUID, timeout, argv...)
}

// Root runs argv as root (see Run).
func (m *Machine) Root(timeout time.Duration, argv ...string) (string, error) {
	return m.Run(0, timeout, argv...)
}

// ShareX lets the user's services see the host's X display d: the host's
// X sockets (bound at /run/host-x11 at boot) over the machine's
// /tmp/.X11-unix, and DISPLAY in the user manager's environment, as a
// desktop session puts it there.
func (m *Machine) ShareX(t testing.TB, d *Display) {
	t.Helper()
	if out, err := m.Root(runTimeout, "sh", "-c", "mkdir -p /tmp/.X11-unix && mount --bind /run/host-x11 /tmp/.X11-unix"); err != nil {
		t.Fatalf("sharing the X sockets: %v\n%s", err, out)
	}
	if out, err := m.User(runTimeout, "systemctl", "--user", "set-environment", "DISPLAY="+d.Name); err != nil {
		t.Fatalf("systemctl --user set-environment: %v\n%s", err, out)
	}
}

// WriteFile puts data at name inside the machine, owned by uid, with perm.
func (m *Machine) WriteFile(t testing.TB, name string, data []byte, perm os.FileMode, uid int) {
	t.Helper()
	host := m.Path(name)
	if err := os.MkdirAll(filepath.Dir(host), 0o755); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(host, data, perm); err != nil {
		t.Fatal(err)
	}
	if err := os.Chown(host, uid, uid); err != nil {
		t.Fatal(err)
	}
}

// shutdown asks its systemd to power off (SIGRTMIN+4, by pid) and waits,
// killing it if it takes too long; then removes its cgroup.
func (m *Machine) shutdown() {
	if m.init != 0 && !m.boot.exited() {
		syscall.Kill(m.init, sigRTMin+4)
		if !waitUntil(30*time.Second, m.boot.exited) {
			syscall.Kill(m.init, syscall.SIGKILL) // takes the whole pid namespace with it
		}
	}
	m.boot.stop()
	// Bottom up: the cgroups its systemd made, then its own.
	var dirs []string
	filepath.WalkDir(m.cg, func(path string, d os.DirEntry, err error) error {
		if err == nil && d.IsDir() {
			dirs = append(dirs, path)
		}
		return nil
	})
	for i := len(dirs) - 1; i >= 0; i-- {
		os.Remove(dirs[i])
	}
}

// sigRTMin is SIGRTMIN as glibc, and so systemd, numbers it.
const sigRTMin = syscall.Signal(34)
