package testenv

import (
	"bytes"
	"context"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/godbus/dbus/v5"
)

// checkNoLeftovers, registered first, runs after every other cleanup of the
// test and fails it if any process this package started is still alive.
func checkNoLeftovers(t *testing.T) {
	t.Cleanup(func() {
		var left []string
		ok := waitUntil(10*time.Second, func() bool {
			left = leftovers()
			return len(left) == 0
		})
		if !ok {
			t.Errorf("processes after cleanup: got\n%s\nwant none left running", strings.Join(left, "\n"))
		}
	})
}

// leftovers lists live (non-zombie) processes carrying our owner mark.
func leftovers() []string {
	mark := []byte(ownerMark() + "\x00")
	var left []string
	pids, _ := filepath.Glob("/proc/[0-9]*")
	for _, dir := range pids {
		env, err := os.ReadFile(dir + "/environ")
		if err != nil || !bytes.Contains(env, mark) {
			continue
		}
		stat, _ := os.ReadFile(dir + "/stat")
		if _, rest, ok := bytes.Cut(stat, []byte(") ")); ok && bytes.HasPrefix(rest, []byte("Z")) {
			continue
		}
		cmdline, _ := os.ReadFile(dir + "/cmdline")
		left = append(left, filepath.Base(dir)+": "+string(bytes.ReplaceAll(cmdline, []byte{0}, []byte{' '})))
	}
	return left
}

// recorder captures Skipf/Fatalf instead of ending the test.
type recorder struct {
	testing.TB
	skipped, failed string
}

func (r *recorder) Helper()                   {}
func (r *recorder) Skipf(f string, a ...any)  { r.skipped = fmt.Sprintf(f, a...) }
func (r *recorder) Fatalf(f string, a ...any) { r.failed = fmt.Sprintf(f, a...) }

func TestNeed(t *testing.T) {
	for _, mode := range []string{"", "require"} {
		t.Run("mode="+mode, func(t *testing.T) {
			t.Setenv(RequireEnv, mode)
			// msg returns what Need reported, checking it skipped or failed per mode.
			msg := func(tools ...string) string {
				t.Helper()
				r := &recorder{TB: t}
				Need(r, tools...)
				got, other := r.skipped, r.failed
				if mode == "require" {
					got, other = other, got
				}
				if other != "" {
					t.Fatalf("mode %q: Need(%v): got skipped %q and failed %q, want only the one the mode calls for", mode, tools, r.skipped, r.failed)
				}
				return got
			}
			if got := msg("sh"); got != "" {
				t.Fatalf("Need(sh): got %q, want nothing", got)
			}
			if got := msg("sh", "antidrift-no-such-tool"); !strings.Contains(got, "antidrift-no-such-tool (unknown apt package)") {
				t.Fatalf("Need(unknown tool): got %q, want it to name antidrift-no-such-tool (unknown apt package)", got)
			}
			t.Setenv("PATH", t.TempDir())
			got := msg("xterm", "dunst", "dunstctl")
			for _, want := range []string{"xterm (apt package xterm)", "dunstctl (apt package dunst)", "apt-get install xterm dunst"} {
				if !strings.Contains(got, want) {
					t.Errorf("Need reported %q, want it to mention %q", got, want)
				}
			}
		})
	}
}

func TestBus(t *testing.T) {
	checkNoLeftovers(t)
	stateDir := t.TempDir()
	b := StartBus(t, "XDG_STATE_HOME="+stateDir, "ANTIDRIFT_TESTENV_HELPER=activated")

	conf, err := os.ReadFile(b.ConfigFile)
	if err != nil || !strings.Contains(string(conf), "<servicedir>"+b.ServiceDir+"</servicedir>") {
		t.Fatalf("config lacks our servicedir (%v):\n%s", err, conf)
	}

	out, err := b.Run(t, "busctl", "--user", "call", "org.freedesktop.DBus", "/org/freedesktop/DBus",
		"org.freedesktop.DBus", "ListNames")
	if err != nil || !strings.Contains(out, `"org.freedesktop.DBus"`) {
		t.Fatalf("busctl ListNames: %q, %v", out, err)
	}
	out, err = b.Run(t, "gdbus", "call", "--session", "--dest", "org.freedesktop.DBus",
		"--object-path", "/org/freedesktop/DBus", "--method", "org.freedesktop.DBus.ListNames")
	if err != nil || !strings.Contains(out, "'org.freedesktop.DBus'") {
		t.Fatalf("gdbus ListNames: %q, %v", out, err)
	}

	// Activation: the bus starts this test binary as a service, with the
	// daemon's environment (extraEnv included).
	exe, err := os.Executable()
	if err != nil {
		t.Fatal(err)
	}
	service := fmt.Sprintf("[D-BUS Service]\nName=%s\nExec=%s -test.run=^TestHelperActivatedService$\n", helperName, exe)
	if err := os.WriteFile(filepath.Join(b.ServiceDir, helperName+".service"), []byte(service), 0o644); err != nil {
		t.Fatal(err)
	}
	if pid := b.OwnerPID(t, helperName); pid != 0 {
		t.Fatalf("%s before activation: got owner %d, want none", helperName, pid)
	}
	out, err = b.Run(t, "busctl", "--user", "call", helperName, helperPath, helperName, "Getenv", "s", "XDG_STATE_HOME")
	if want := fmt.Sprintf("s %q\n", stateDir); err != nil || out != want {
		t.Fatalf("activated Getenv(XDG_STATE_HOME) = %q, %v; want %q", out, err, want)
	}
	if b.OwnerPID(t, helperName) == 0 {
		t.Fatalf("%s after activation: got no owner, want one", helperName)
	}

	b.Stop()
	b.Stop() // idempotent
	if _, err := b.Run(t, "gdbus", "call", "--session", "--dest", "org.freedesktop.DBus",
		"--object-path", "/org/freedesktop/DBus", "--method", "org.freedesktop.DBus.ListNames"); err == nil {
		t.Fatal("bus still answers after Stop")
	}
}

const (
	helperName = "org.antidrift.TestActivated"
	helperPath = "/org/antidrift/TestActivated"
)

type helperService struct{}

func (helperService) Getenv(key string) (string, *dbus.Error) { return os.Getenv(key), nil }

// TestHelperActivatedService is not a test: it is the service TestBus has the
// bus activate. It serves Getenv until the bus goes away.
func TestHelperActivatedService(t *testing.T) {
	if os.Getenv("ANTIDRIFT_TESTENV_HELPER") != "activated" {
		t.Skip("only runs when activated by TestBus's bus")
	}
	conn, err := dbus.ConnectSessionBus()
	if err != nil {
		t.Fatal(err)
	}
	if err := conn.Export(helperService{}, helperPath, helperName); err != nil {
		t.Fatal(err)
	}
	if reply, err := conn.RequestName(helperName, dbus.NameFlagDoNotQueue); err != nil || reply != dbus.RequestNameReplyPrimaryOwner {
		t.Fatalf("RequestName: %v, %v", reply, err)
	}
	<-conn.Context().Done()
}

func TestDisplay(t *testing.T) {
	checkNoLeftovers(t)
	d := StartX(t)
	if d.Name != fmt.Sprintf(":%d", d.Num) || !slices.Contains(d.Env(), "DISPLAY="+d.Name) {
		t.Fatalf("display: got Name %q, Num %d, want Name \":Num\" and DISPLAY=Name in Env", d.Name, d.Num)
	}

	a := d.XTerm(t, "AntidriftTermA", "first")
	b := d.XTerm(t, "AntidriftTermB", "second")
	if a == b {
		t.Fatalf("xterm windows: got %#x for both, want two", a)
	}
	d.Activate(t, a)
	if got := d.ActiveWindow(t); got != a {
		t.Fatalf("active window: got %#x, want %#x (just activated)", got, a)
	}
	d.Activate(t, b)
	if got := d.ActiveWindow(t); got != b {
		t.Fatalf("active window: got %#x, want %#x (just activated)", got, b)
	}

	d.SetTitle(t, a, "renamed by test")
	out, err := d.Run(t, "xprop", "-id", hexID(a), "WM_NAME")
	if err != nil || !strings.Contains(out, `"renamed by test"`) {
		t.Fatalf("WM_NAME after SetTitle: %q, %v", out, err)
	}

	if got := d.WMState(t, a); got != "Normal" {
		t.Fatalf("WMState before minimize: got %q, want \"Normal\"", got)
	}
	if _, err := d.Run(t, "xdotool", "windowminimize", "--sync", fmt.Sprint(a)); err != nil {
		t.Fatal(err)
	}
	WaitForValue(t, 10*time.Second, "the minimized xterm's WM_STATE", "Iconic", func() string { return d.WMState(t, a) })
	WaitFor(t, 10*time.Second, "the minimized xterm's _NET_WM_STATE to hold _NET_WM_STATE_HIDDEN", func() []string { return d.NetWMState(t, a) },
		func(states []string) bool { return slices.Contains(states, "_NET_WM_STATE_HIDDEN") })

	name := d.Name
	d.Kill()
	if _, err := d.Run(t, "xprop", "-root"); err == nil {
		t.Fatal("X still answers after Kill")
	}
	d.Restart(t)
	if d.Name != name {
		t.Fatalf("display after Restart: got %s, want %s", d.Name, name)
	}
	c := d.XTerm(t, "AntidriftTermC", "after restart")
	d.Activate(t, c)
	if got := d.ActiveWindow(t); got != c {
		t.Fatalf("active window after restart: got %#x, want %#x (just activated)", got, c)
	}
}

// TestDunst runs on the host's dunst (1.9) and the trixie rootfs's (1.12).
func TestDunst(t *testing.T) {
	for _, c := range []struct {
		name  string
		start func(testing.TB, *Bus, *Display) *Dunst
	}{{"host", StartDunst}, {"trixie", StartRootfsDunst}} {
		t.Run(c.name, func(t *testing.T) { testDunst(t, c.start) })
	}
}

func testDunst(t *testing.T, start func(testing.TB, *Bus, *Display) *Dunst) {
	checkNoLeftovers(t)
	d := StartX(t)
	b := StartBus(t, "DISPLAY="+d.Name)
	mon := StartMonitor(t, b, "type='method_call',interface='org.freedesktop.Notifications',member='Notify'")
	u := start(t, b, d)

	u.ChooseNext("Back to work")
	ns := notifySend(t, b, d, "--action=snooze=Snooze 5 minutes", "--action=refocus=Back to work",
		"--app-name=antidrift", "You drifted", "Go back to your task")
	call := mon.WaitFor(t, "member=Notify", 10*time.Second)
	for _, want := range []string{`string "antidrift"`, `string "You drifted"`, `string "refocus"`, `string "Back to work"`} {
		if !strings.Contains(call, want) {
			t.Errorf("Notify call lacks %s:\n%s", want, call)
		}
	}
	u.OpenMenu(t)
	if got := ns.wait(t); got != "refocus" {
		t.Fatalf("notify-send printed %q, want the refocus action key; menus:\n%s", got, u.Menus())
	}
	if !strings.Contains(u.Menus(), "#Back to work") {
		t.Errorf("menus: got\n%s\nwant the menu script to have seen the action", u.Menus())
	}

	// Restart: a new process owns the name and still answers menus.
	old := b.OwnerPID(t, NotificationsName)
	u.Kill()
	u.Kill()
	u.Restart(t)
	if pid := b.OwnerPID(t, NotificationsName); pid == old || pid == 0 {
		t.Fatalf("owner after Restart: got %d, want a new one (old %d)", pid, old)
	}
	u.ChooseNext("Dismiss me")
	ns = notifySend(t, b, d, "--action=dismiss=Dismiss me", "--app-name=antidrift", "Second")
	u.OpenMenu(t)
	if got := ns.wait(t); got != "dismiss" {
		t.Fatalf("notify-send after restart: got %q, want \"dismiss\"; menus:\n%s", got, u.Menus())
	}
	if n := strings.Count(mon.Output(), "member=Notify"); n != 2 {
		t.Errorf("monitor saw %d Notify calls, want 2:\n%s", n, mon.Output())
	}
}

// bg is a command running in the background whose stdout we want at the end.
type bg struct {
	cmd    *exec.Cmd
	stdout bytes.Buffer
	stderr bytes.Buffer
	done   chan error
}

// notifySend runs notify-send in the background: with actions it blocks until
// one is chosen, then prints its key.
func notifySend(t *testing.T, b *Bus, d *Display, args ...string) *bg {
	t.Helper()
	Need(t, "notify-send")
	ctx, cancel := context.WithTimeout(context.Background(), time.Minute)
	t.Cleanup(cancel)
	p := &bg{cmd: exec.CommandContext(ctx, "notify-send", args...), done: make(chan error, 1)}
	p.cmd.Env = withEnv(b.Env(), "DISPLAY="+d.Name, ownerMark())
	p.cmd.Stdout, p.cmd.Stderr = &p.stdout, &p.stderr
	if err := p.cmd.Start(); err != nil {
		t.Fatal(err)
	}
	go func() { p.done <- p.cmd.Wait() }()
	t.Cleanup(func() { cancel(); <-p.done })
	return p
}

func (p *bg) wait(t *testing.T) string {
	t.Helper()
	select {
	case err := <-p.done:
		p.done <- err // for the cleanup
		if err != nil {
			t.Fatalf("notify-send: %v: %s", err, p.stderr.String())
		}
	case <-time.After(30 * time.Second):
		t.Fatalf("notify-send after 30s: got no action, want one")
	}
	return strings.TrimSpace(p.stdout.String())
}
