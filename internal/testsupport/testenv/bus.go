package testenv

import (
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"strings"
	"testing"
)

// Bus is a private dbus-daemon. It has its own config file with its own
// <servicedir>, never the system's, so only services a test installs can be
// activated (the real dunst's activation file, for one, is invisible to it).
type Bus struct {
	Address    string // e.g. unix:path=/tmp/.../bus,guid=...
	ServiceDir string // activation (.service) files written here are used by this bus
	ConfigFile string // the generated bus config, for debugging
	proc       *proc
}

const busConfig = `<!DOCTYPE busconfig PUBLIC "-//freedesktop//DTD D-Bus Bus Configuration 1.0//EN"
 "http://www.freedesktop.org/standards/dbus/1.0/busconfig.dtd">
<busconfig>
  <type>session</type>
  <listen>unix:path=%s</listen>
  <auth>EXTERNAL</auth>
  <servicedir>%s</servicedir>
%s  <policy context="default">%s
    <allow own="*"/>
    <allow send_destination="*" eavesdrop="true"/>
    <allow receive_sender="*"/>
    <allow eavesdrop="true"/>
  </policy>
</busconfig>
`

// StartBus starts a session-type dbus-daemon listening on a unix socket in a
// temp dir. extraEnv (KEY=value) is added to the daemon's environment, which
// services it activates inherit: tests use it to hand XDG_STATE_HOME, DISPLAY
// or XDG_CONFIG_HOME to an activated antidriftd.
func StartBus(t testing.TB, extraEnv ...string) *Bus {
	t.Helper()
	return startBus(t, tempDir(t), "", "", extraEnv)
}

// stockSessionLimits are the limits of the session.conf dbus-daemon ships
// (Debian's and upstream's): "essentially infinite". A message up to
// 1,000,000,000 bytes is relayed, so a call of exactly 2^27 bytes reaches
// its destination longer than that, with the sender field the bus adds.
const stockSessionLimits = `  <limit name="max_incoming_bytes">1000000000</limit>
  <limit name="max_outgoing_bytes">1000000000</limit>
  <limit name="max_message_size">1000000000</limit>
  <limit name="max_replies_per_connection">50000</limit>
`

// StartStockSessionBus is StartBus with the stock session bus's limits, as
// every desktop runs it; attacks on message size are tried against it.
func StartStockSessionBus(t testing.TB, extraEnv ...string) *Bus {
	t.Helper()
	return startBus(t, tempDir(t), stockSessionLimits, "", extraEnv)
}

// StartOpenBus is StartBus for a bus that any local user may connect to,
// not only root: programs running as another uid inside the rootfs (a
// compositor, the daemon under test) share it with the test.
func StartOpenBus(t testing.TB, extraEnv ...string) *Bus {
	t.Helper()
	return startBus(t, sharedTempDir(t), "", "\n    <allow user=\"*\"/>", extraEnv)
}

// startBus starts the bus in dir with limits and with extraPolicy added to
// its default policy.
func startBus(t testing.TB, dir, limits, extraPolicy string, extraEnv []string) *Bus {
	t.Helper()
	Need(t, "dbus-daemon")
	b := &Bus{
		ServiceDir: filepath.Join(dir, "services"),
		ConfigFile: filepath.Join(dir, "bus.conf"),
	}
	if err := os.Mkdir(b.ServiceDir, 0o755); err != nil {
		t.Fatal(err)
	}
	conf := fmt.Sprintf(busConfig, filepath.Join(dir, "bus"), b.ServiceDir, limits, extraPolicy)
	if err := os.WriteFile(b.ConfigFile, []byte(conf), 0o644); err != nil {
		t.Fatal(err)
	}

	r, w, err := os.Pipe()
	if err != nil {
		t.Fatal(err)
	}
	defer r.Close()
	// Do not leak the caller's session bus into services activated here.
	env := withEnv(os.Environ(), append([]string{"DBUS_SESSION_BUS_ADDRESS="}, extraEnv...)...)
	b.proc = start(t, dir, env, func(c *exec.Cmd) { c.ExtraFiles = []*os.File{w} },
		"dbus-daemon", "--nofork", "--config-file="+b.ConfigFile, "--print-address=3")
	w.Close()
	// dbus-daemon prints the address once it is listening.
	addr, err := readLine(r, readyTimeout)
	if err != nil {
		t.Fatalf("dbus-daemon did not print its address: %v\n%s", err, b.proc.output())
	}
	b.Address = addr
	return b
}

// Env returns os.Environ() with DBUS_SESSION_BUS_ADDRESS pointing at this bus.
func (b *Bus) Env() []string {
	return withEnv(os.Environ(), "DBUS_SESSION_BUS_ADDRESS="+b.Address)
}

// Run runs a command with Env() and a 10s timeout; stderr is folded into err.
func (b *Bus) Run(t testing.TB, name string, args ...string) (stdout string, err error) {
	t.Helper()
	Need(t, name)
	return run(b.Env(), runTimeout, name, args...)
}

// OwnerPID returns the pid of the process owning name on this bus, or 0 if
// the name has no owner. Tests use it to wait until a service is up, and to
// tell a restarted server from the old one.
func (b *Bus) OwnerPID(t testing.TB, name string) int {
	t.Helper()
	out, err := b.Run(t, "dbus-send", "--session", "--print-reply=literal",
		"--dest=org.freedesktop.DBus", "/org/freedesktop/DBus",
		"org.freedesktop.DBus.GetConnectionUnixProcessID", "string:"+name)
	if err != nil {
		if strings.Contains(err.Error(), "NameHasNoOwner") {
			return 0
		}
		t.Fatalf("asking the bus who owns %s: %v\n%s", name, err, b.proc.output())
	}
	// The literal reply looks like "   uint32 1234".
	fields := strings.Fields(out)
	pid, err := 0, fmt.Errorf("empty reply")
	if len(fields) > 0 {
		pid, err = strconv.Atoi(fields[len(fields)-1])
	}
	if err != nil {
		t.Fatalf("unexpected GetConnectionUnixProcessID reply %q", out)
	}
	return pid
}

// waitForOwner waits until p (what, for messages) owns name on b, failing
// the test if p exits first.
func (b *Bus) waitForOwner(t testing.TB, what, name string, p *proc) {
	t.Helper()
	WaitFor(t, readyTimeout, what+" (pid "+strconv.Itoa(p.pid())+") to own "+name, func() string {
		if p.exited() {
			t.Fatalf("%s exited before owning %s\n%s", what, name, p.output())
		}
		return ownerShown(b.OwnerPID(t, name))
	}, func(owner string) bool { return owner == "pid "+strconv.Itoa(p.pid()) })
}

// ownerShown is who owns a name, as a failure says it.
func ownerShown(pid int) string {
	if pid == 0 {
		return "no owner"
	}
	return "pid " + strconv.Itoa(pid)
}

// Stop stops the daemon (and any service it activated) and waits. Idempotent.
func (b *Bus) Stop() { b.proc.stop() }
