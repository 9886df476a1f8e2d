package testenv

import (
	"fmt"
	"math/rand/v2"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"strconv"
	"strings"
	"testing"
	"unicode"
)

// Display is an Xvfb server with openbox as the EWMH window manager, so that
// _NET_ACTIVE_WINDOW, _NET_WM_STATE and friends behave as on a real desktop.
// Methods are not safe for concurrent use.
type Display struct {
	Name string // ":N"
	Num  int
	dir  string
	xvfb *proc
	wm   *proc
	// rootfsWM, when set, is the window manager from a rootfs that runs
	// in openbox's place (StartXRelease).
	rootfsWM *rootfsWM
}

// openboxRC is a minimal openbox config: focus new windows, one desktop, no
// bindings. With it (and HOME/XDG dirs in a temp dir) openbox reads nothing
// from the real home or /etc/xdg/openbox.
const openboxRC = `<?xml version="1.0" encoding="UTF-8"?>
<openbox_config xmlns="http://openbox.org/3.4/rc">
  <focus><focusNew>yes</focusNew><followMouse>no</followMouse></focus>
  <placement><policy>Smart</policy></placement>
  <desktops><number>1</number></desktops>
</openbox_config>
`

// StartX starts Xvfb on a free display number plus openbox, and returns once
// the window manager is up.
//
// The display number is chosen at random from a high range rather than by
// Xvfb's own -displayfd search, which hands out the lowest free number: with
// that, another test package starting X in the window between Kill and Restart
// would take our number and Restart could not get it back. -displayfd is still
// used, to learn when the server is ready.
func StartX(t testing.TB) *Display {
	t.Helper()
	Need(t, "openbox")
	return startX(t, nil)
}

// startX is StartX with wm (nil: openbox) as the window manager.
func startX(t testing.TB, wm *rootfsWM) *Display {
	t.Helper()
	Need(t, "Xvfb", "xprop")
	d := &Display{dir: tempDir(t), rootfsWM: wm}
	home := filepath.Join(d.dir, "home")
	for _, sub := range []string{".config", ".cache", ".local/share", "xdg"} {
		if err := os.MkdirAll(filepath.Join(home, sub), 0o755); err != nil {
			t.Fatal(err)
		}
	}
	if err := os.WriteFile(filepath.Join(d.dir, "rc.xml"), []byte(openboxRC), 0o644); err != nil {
		t.Fatal(err)
	}
	var errs []string
	for len(errs) < 10 {
		err := d.startXvfb(t, 100+rand.IntN(30000))
		if err == nil {
			d.startWM(t)
			return d
		}
		errs = append(errs, err.Error())
	}
	t.Fatalf("could not start Xvfb:\n%s", strings.Join(errs, "\n"))
	return nil
}

// startXvfb starts Xvfb on display num. -noreset matters: without it the
// server resets whenever its last client disconnects, and a client that
// connects during the reset (openbox, while our readiness probe comes and
// goes) is refused with "cannot open display".
func (d *Display) startXvfb(t testing.TB, num int) error {
	t.Helper()
	r, w, err := os.Pipe()
	if err != nil {
		t.Fatal(err)
	}
	defer r.Close()
	p := start(t, d.dir, os.Environ(), func(c *exec.Cmd) { c.ExtraFiles = []*os.File{w} },
		"Xvfb", ":"+strconv.Itoa(num), "-displayfd", "3", "-screen", "0", "1280x800x24", "-nolisten", "tcp", "-noreset")
	w.Close()
	line, err := readLine(r, readyTimeout)
	if err == nil && line != strconv.Itoa(num) {
		err = fmt.Errorf("asked for display %d, Xvfb reported %q", num, line)
	}
	if err != nil {
		p.stop()
		return fmt.Errorf("Xvfb :%d: %v\n%s", num, err, p.output())
	}
	d.xvfb, d.Num, d.Name = p, num, ":"+strconv.Itoa(num)
	return nil
}

// childEnv is the environment for the X clients we start: DISPLAY set, and
// HOME/XDG dirs in our temp dir so they read no user config.
func (d *Display) childEnv() []string {
	home := filepath.Join(d.dir, "home")
	return withEnv(d.Env(),
		"HOME="+home,
		"XDG_CONFIG_HOME="+filepath.Join(home, ".config"),
		"XDG_CACHE_HOME="+filepath.Join(home, ".cache"),
		"XDG_DATA_HOME="+filepath.Join(home, ".local/share"),
		"XDG_CONFIG_DIRS="+filepath.Join(home, "xdg"),
		"SESSION_MANAGER=",
	)
}

// startWM starts openbox and waits until it has claimed the screen, i.e. the
// root window has _NET_SUPPORTING_WM_CHECK. From then on openbox has
// SubstructureRedirect, so windows mapped afterwards are managed even if it is
// still finishing its startup.
func (d *Display) startWM(t testing.TB) {
	t.Helper()
	name := "openbox"
	if d.rootfsWM != nil {
		name = d.rootfsWM.rel.Desktop
		d.wm = d.rootfsWM.start(t, d)
	} else {
		d.wm = start(t, d.dir, d.childEnv(), nil,
			"openbox", "--sm-disable", "--config-file", filepath.Join(d.dir, "rc.xml"))
	}
	up := func() bool {
		out, err := run(d.Env(), runTimeout, "xprop", "-root", "-notype", "_NET_SUPPORTING_WM_CHECK")
		return err == nil && strings.Contains(out, "window id #")
	}
	if !waitUntil(readyTimeout, func() bool { return d.wm.exited() || d.xvfb.exited() || up() }) || !up() {
		t.Fatalf("%s did not come up on %s (it exited: %v, Xvfb exited: %v)\n%s\n%s", name, d.Name, d.wm.exited(), d.xvfb.exited(), d.wm.output(), d.xvfb.output())
	}
}

// Env returns os.Environ() with DISPLAY set to this display.
func (d *Display) Env() []string { return withEnv(os.Environ(), "DISPLAY="+d.Name) }

// Kill kills Xvfb now, then openbox, and waits for both. Xvfb goes first so
// that clients see the X server vanish, as in a real crash, rather than the
// window manager exiting first. X clients (xterms, the code under test) are
// left to notice on their own.
func (d *Display) Kill() {
	d.xvfb.stop()
	d.wm.stop()
}

// Restart kills the display if it is still running, then starts a new Xvfb on
// the same display number plus openbox, and waits until the WM is up. The new
// processes are stopped at t's cleanup.
func (d *Display) Restart(t testing.TB) {
	t.Helper()
	d.Kill()
	if err := d.startXvfb(t, d.Num); err != nil {
		t.Fatalf("restarting display %s: %v", d.Name, err)
	}
	d.startWM(t)
}

// Run runs a command with DISPLAY set and a 10s timeout; stderr is folded into err.
func (d *Display) Run(t testing.TB, name string, args ...string) (string, error) {
	t.Helper()
	Need(t, name)
	return run(d.Env(), runTimeout, name, args...)
}

// must runs an X tool and fails the test if it fails.
func (d *Display) must(t testing.TB, name string, args ...string) string {
	t.Helper()
	out, err := d.Run(t, name, args...)
	if err != nil {
		t.Fatalf("on display %s: %v", d.Name, err)
	}
	return out
}

// XTerm starts an xterm with the given WM_CLASS class and title, waits until
// the window manager has mapped it, and returns its X window id. It is killed
// at cleanup.
func (d *Display) XTerm(t testing.TB, class, title string) uint32 {
	t.Helper()
	Need(t, "xterm", "xdotool")
	p := start(t, d.dir, d.childEnv(), nil, "xterm", "-class", class, "-title", title, "-e", "sleep", "100000")
	// Match on xterm's pid as well as the class, so that two xterms with the same
	// class cannot be confused. xdotool's class match is a case-insensitive regex.
	out, err := run(d.Env(), readyTimeout, "xdotool", "search", "--sync", "--all", "--onlyvisible",
		"--pid", strconv.Itoa(p.pid()), "--class", "^"+regexp.QuoteMeta(class)+"$")
	if err != nil {
		t.Fatalf("xterm %q never got a visible window: %v\n%s", class, err, p.output())
	}
	first, _, _ := strings.Cut(strings.TrimSpace(out), "\n")
	id, err := strconv.ParseUint(first, 10, 32)
	if err != nil {
		t.Fatalf("xdotool search printed %q", out)
	}
	return uint32(id)
}

func hexID(id uint32) string { return fmt.Sprintf("0x%x", id) }

// Activate asks the window manager to activate the window (as a pager would)
// and waits until _NET_ACTIVE_WINDOW says it is active.
func (d *Display) Activate(t testing.TB, id uint32) {
	t.Helper()
	d.must(t, "xdotool", "windowactivate", "--sync", strconv.FormatUint(uint64(id), 10))
}

// ActiveWindow returns the root window's _NET_ACTIVE_WINDOW, 0 if none.
func (d *Display) ActiveWindow(t testing.TB) uint32 {
	t.Helper()
	// "_NET_ACTIVE_WINDOW: window id # 0x60000c", or "...:  not found";
	// xfwm4 sets two windows ("# 0x60000c, 0x0"), the active one first.
	out := d.must(t, "xprop", "-root", "-notype", "_NET_ACTIVE_WINDOW")
	_, val, ok := strings.Cut(out, "#")
	if !ok {
		return 0
	}
	val, _, _ = strings.Cut(val, ",")
	id, err := strconv.ParseUint(strings.TrimSpace(val), 0, 32)
	if err != nil {
		t.Fatalf("cannot parse xprop output %q", out)
	}
	return uint32(id)
}

// SetTitle sets the window's WM_NAME and _NET_WM_NAME, like an application
// changing its title.
func (d *Display) SetTitle(t testing.TB, id uint32, title string) {
	t.Helper()
	d.must(t, "xdotool", "set_window", "--name", title, strconv.FormatUint(uint64(id), 10))
}

// WMState returns the ICCCM WM_STATE of the window: "Normal", "Iconic" or
// "Withdrawn" (also when the property is absent, as ICCCM says).
func (d *Display) WMState(t testing.TB, id uint32) string {
	t.Helper()
	out := d.must(t, "xprop", "-id", hexID(id), "WM_STATE")
	_, state, ok := strings.Cut(out, "window state:")
	if !ok {
		return "Withdrawn"
	}
	if f := strings.Fields(state); len(f) > 0 {
		return f[0]
	}
	t.Fatalf("cannot parse xprop output %q", out)
	return ""
}

// NetWMState returns the atoms in the window's _NET_WM_STATE, e.g.
// [_NET_WM_STATE_HIDDEN]; nil if there are none.
func (d *Display) NetWMState(t testing.TB, id uint32) []string {
	t.Helper()
	// "_NET_WM_STATE = _NET_WM_STATE_HIDDEN, _NET_WM_STATE_FOCUSED", or "=  " or "not found."
	out := d.must(t, "xprop", "-id", hexID(id), "-notype", "_NET_WM_STATE")
	_, list, ok := strings.Cut(out, "=")
	if !ok {
		return nil
	}
	atoms := strings.FieldsFunc(list, func(r rune) bool { return r == ',' || unicode.IsSpace(r) })
	if len(atoms) == 0 {
		return nil
	}
	return atoms
}
