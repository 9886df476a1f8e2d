package testenv

import (
	"encoding/json"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"runtime"
	"strings"
	"testing"
	"time"

	"github.com/godbus/dbus/v5"
)

// ShellUID is the user GNOME Shell and its clients run as: the Shell
// refuses to run as root, and a daemon that serves only its own uid must
// share it with them.
const ShellUID = 1000

// HarnessExtension is the test-only extension every GnomeShell runs: it
// turns on unsafe mode (Eval, Screenshot) and leaves the Overview at
// start-up.
const HarnessExtension = "antidrift-test@antidrift.github.io"

// GnomeShell is a real GNOME Shell (48, 50 or 51: its Release) from a
// suite's rootfs, headless with one
// 1280x800 virtual monitor, on a private session bus that every uid may
// join (the Shell, its windows and the daemon under test run as ShellUID
// inside the rootfs; the test talks to the same bus from the host) and a
// private stand-in for the system bus, without which the Shell exits.
// Settings live in a keyfile (no dconf), extensions under XDG_DATA_HOME.
type GnomeShell struct {
	Release    Release
	Rootfs     *Rootfs
	Bus        *Bus   // the session bus
	System     *Bus   // the stand-in system bus
	Home       string // HOME; the XDG directories are under it
	RuntimeDir string // XDG_RUNTIME_DIR: the Wayland socket is here
	Display    string // WAYLAND_DISPLAY
	Conn       *dbus.Conn
	// ExtraEnv is added to Env: set before Start, e.g. LANGUAGE=de to
	// start the Shell (again) in German.
	ExtraEnv []string

	dir  string
	proc *Process
}

// gnomeReadyTimeout bounds a start of the Shell: about 2.5 s on an idle
// machine, much more on a loaded one running the race detector.
const gnomeReadyTimeout = 90 * time.Second

// StartGnomeShell is StartGnomeShellRelease of Debian 13's GNOME Shell 48.
func StartGnomeShell(t testing.TB, extensions ...string) *GnomeShell {
	t.Helper()
	return StartGnomeShellRelease(t, Stable(GnomeReleases), extensions...)
}

// StartGnomeShellRelease installs the extensions (directories named by
// their uuids, copied in) next to the harness's own, enables them all,
// starts the GNOME Shell of rel (one of GnomeReleases) and waits until it
// has finished starting and left the Overview. It fails when the rootfs's
// Shell is not rel's version, and skips without the rootfs (see
// NeedSuiteRootfs). The Shell is stopped at cleanup.
func StartGnomeShellRelease(t testing.TB, rel Release, extensions ...string) *GnomeShell {
	t.Helper()
	r := NeedSuiteRootfs(t, rel.Suite)
	CheckRelease(t, r, rel)
	g := &GnomeShell{Release: rel, Rootfs: r, Bus: StartOpenBus(t), System: StartOpenBus(t), Display: "antidrift-wl"}
	g.dir = sharedTempDir(t)
	g.Home = filepath.Join(g.dir, "home")
	g.RuntimeDir = filepath.Join(g.dir, "run")
	for _, d := range []string{g.Home, g.RuntimeDir, g.configHome(), g.extensionsDir(), filepath.Join(g.dir, "out")} {
		if err := os.MkdirAll(d, 0o700); err != nil {
			t.Fatal(err)
		}
	}
	uuids := []string{HarnessExtension}
	if err := CopyTree(filepath.Join(testdataDir(), "gnome-shell", HarnessExtension), filepath.Join(g.extensionsDir(), HarnessExtension), 0o755, 0o644); err != nil {
		t.Fatal(err)
	}
	antidrift := false
	for _, src := range extensions {
		uuid := filepath.Base(src)
		if src == AntidriftExtensionDir() {
			antidrift = true
		} else if err := CopyTree(src, filepath.Join(g.extensionsDir(), uuid), 0o755, 0o644); err != nil {
			t.Fatal(err)
		}
		uuids = append(uuids, uuid)
	}
	quoted := make([]string, len(uuids))
	for i, u := range uuids {
		quoted[i] = "'" + u + "'"
	}
	// The welcome tour would take focus from the test's windows; the hot
	// corner would open the Overview when a virtual pointer (MovePointer)
	// starts at 0,0, as GNOME Shell 50's does.
	keyfile := "[org/gnome/shell]\nenabled-extensions=[" + strings.Join(quoted, ", ") + "]\nwelcome-dialog-last-shown-version='999'\n" +
		"[org/gnome/desktop/interface]\nenable-hot-corners=false\n"
	settings := filepath.Join(g.configHome(), "glib-2.0", "settings")
	if err := os.MkdirAll(settings, 0o700); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(filepath.Join(settings, "keyfile"), []byte(keyfile), 0o600); err != nil {
		t.Fatal(err)
	}
	if err := chownTree(g.dir, ShellUID); err != nil {
		t.Fatal(err)
	}
	if antidrift {
		g.InstallExtensionZip(t, PackExtension(t))
	}
	g.Conn = g.Bus.Dial(t)
	g.Start(t)
	return g
}

func (g *GnomeShell) configHome() string { return filepath.Join(g.Home, ".config") }
func (g *GnomeShell) dataHome() string   { return filepath.Join(g.Home, ".local", "share") }
func (g *GnomeShell) extensionsDir() string {
	return filepath.Join(g.dataHome(), "gnome-shell", "extensions")
}

// Env is the environment of a program of the Shell's session: its buses,
// its Wayland display, its home and settings.
func (g *GnomeShell) Env() []string {
	return append([]string{
		"DBUS_SESSION_BUS_ADDRESS=" + g.Bus.Address,
		"DBUS_SYSTEM_BUS_ADDRESS=" + g.System.Address,
		"HOME=" + g.Home,
		"XDG_RUNTIME_DIR=" + g.RuntimeDir,
		"XDG_CONFIG_HOME=" + g.configHome(),
		"XDG_DATA_HOME=" + g.dataHome(),
		"XDG_SESSION_TYPE=wayland",
		"XDG_CURRENT_DESKTOP=GNOME",
		"WAYLAND_DISPLAY=" + g.Display,
		"GSETTINGS_BACKEND=keyfile",
	}, g.ExtraEnv...)
}

// AddApp installs a desktop entry for application id appID, named name,
// with icon: the Shell then shows that app's windows by that name and icon
// (the dock, the start dialog's chips), as a person's installed apps.
func (g *GnomeShell) AddApp(t testing.TB, appID, name, icon string) {
	t.Helper()
	dir := filepath.Join(g.dataHome(), "applications")
	if err := os.MkdirAll(dir, 0o755); err != nil {
		t.Fatal(err)
	}
	entry := "[Desktop Entry]\nType=Application\nName=" + name + "\nIcon=" + icon + "\nExec=/bin/true\nStartupWMClass=" + appID + "\n"
	if err := os.WriteFile(filepath.Join(dir, appID+".desktop"), []byte(entry), 0o644); err != nil {
		t.Fatal(err)
	}
	if err := chownTree(dir, ShellUID); err != nil {
		t.Fatal(err)
	}
}

// Start starts the Shell (again, after Stop) and waits until it is ready:
// start-up complete, the Overview hidden, Eval answering.
func (g *GnomeShell) Start(t testing.TB) {
	t.Helper()
	// MUTTER_DEBUG_RESET_IDLETIME lets a test end idleness through
	// org.gnome.Mutter.IdleMonitor.ResetIdletime.
	env := append(g.Env(), "MUTTER_DEBUG_RESET_IDLETIME=1")
	g.proc = g.Rootfs.Start(t, g.dir, ShellUID, env, "gnome-shell", "--headless", "--no-x11",
		"--virtual-monitor", "1280x800", "--wayland-display", g.Display)
	WaitUntil(t, gnomeReadyTimeout, "GNOME Shell to start and leave the Overview", func() bool {
		if g.proc.Exited() {
			t.Fatalf("GNOME Shell exited while starting\n%s", g.proc.Output())
		}
		out, err := g.Eval("!Main.layoutManager._startingUp && !Main.overview.visible")
		return err == nil && out == "true"
	})
}

// Stop stops the Shell, as a crash or logout would take it away.
func (g *GnomeShell) Stop() { g.proc.Stop() }

// Log is what the Shell has written to stdout and stderr (its JS errors
// included).
func (g *GnomeShell) Log() string { return g.proc.Output() }

// Eval runs JavaScript in the Shell (org.gnome.Shell.Eval; the harness
// extension turns on unsafe mode) and returns the JSON of its value.
func (g *GnomeShell) Eval(js string) (string, error) {
	var ok bool
	var out string
	call := g.Conn.Object("org.gnome.Shell", "/org/gnome/Shell").Call("org.gnome.Shell.Eval", 0, js)
	if err := call.Store(&ok, &out); err != nil {
		return "", err
	}
	if !ok {
		return "", fmt.Errorf("Eval(%q) failed: %s", js, out)
	}
	return out, nil
}

// EvalString is Eval for an expression whose value is a string.
func (g *GnomeShell) EvalString(t testing.TB, js string) string {
	t.Helper()
	out, err := g.Eval(js)
	if err != nil {
		t.Fatal(err)
	}
	var s string
	if err := json.Unmarshal([]byte(out), &s); err != nil {
		t.Fatalf("Eval(%q) = %s, not a string", js, out)
	}
	return s
}

// FocusedClass is the WM class of the window with focus, "" when none has.
func (g *GnomeShell) FocusedClass(t testing.TB) string {
	t.Helper()
	return g.EvalString(t, "global.display.focus_window?.get_wm_class() ?? ''")
}

// Screenshot saves the screen as a PNG at path (on the host), through
// org.gnome.Shell.Screenshot.
func (g *GnomeShell) Screenshot(t testing.TB, path string) {
	t.Helper()
	// The Shell writes as ShellUID, so into a directory of its own first.
	tmp := filepath.Join(g.dir, "out", filepath.Base(path))
	var ok bool
	var used string
	err := g.Conn.Object("org.gnome.Shell.Screenshot", "/org/gnome/Shell/Screenshot").
		Call("org.gnome.Shell.Screenshot.Screenshot", 0, false, false, tmp).Store(&ok, &used)
	if err != nil || !ok {
		t.Fatalf("Screenshot: ok=%v, %v", ok, err)
	}
	if err := copyFile(used, path, 0o644); err != nil {
		t.Fatal(err)
	}
}

// StartNotifications starts GNOME Shell's notification service, as D-Bus
// activation does in a real session: it owns org.freedesktop.Notifications
// and hands each notification to the Shell's message tray. It waits until
// the name is owned.
func (g *GnomeShell) StartNotifications(t testing.TB) {
	t.Helper()
	g.startService(t, "org.freedesktop.Notifications", "/usr/share/gnome-shell/org.gnome.Shell.Notifications")
}

// StartExtensionsApp starts GNOME Shell's extensions service, as D-Bus
// activation does in a real session: it owns org.gnome.Shell.Extensions
// and shows an extension's preferences window (gnome-extensions prefs, the
// Extensions app's settings button) with GTK 4 and libadwaita on the
// Shell's display. It waits until the name is owned. The returned process'
// Output holds what GTK and the extension's prefs.js logged.
func (g *GnomeShell) StartExtensionsApp(t testing.TB) *Process {
	t.Helper()
	// No accessibility bus here: GTK would warn about it.
	return g.startService(t, "org.gnome.Shell.Extensions", "/usr/share/gnome-shell/org.gnome.Shell.Extensions", "GTK_A11Y=none")
}

// startService runs one of GNOME Shell's gjs services (main, a file under
// /usr/share/gnome-shell) with extra environment and waits until it owns
// name.
func (g *GnomeShell) startService(t testing.TB, name, main string, extra ...string) *Process {
	t.Helper()
	// SHELL_DBUS_PERSIST: stay when idle (activation would restart it).
	p := g.StartProgram(t, append([]string{"SHELL_DBUS_PERSIST=1"}, extra...), "gjs", "-m", main)
	WaitUntil(t, readyTimeout, filepath.Base(main)+" to own "+name, func() bool {
		if p.Exited() {
			t.Fatalf("%s exited\n%s", filepath.Base(main), p.Output())
		}
		var has bool
		err := g.Conn.BusObject().Call("org.freedesktop.DBus.NameHasOwner", 0, name).Store(&has)
		return err == nil && has
	})
	return p
}

// seatJS is the Shell's seat in JavaScript, as the Shell itself finds it on
// 48 to 51 (Clutter.get_default_backend is gone from 51).
const seatJS = "global.stage.context.get_backend().get_default_seat()"

// AttachKeyboard plugs a keyboard into the Shell's seat (a virtual one;
// a headless Shell has none) and waits until the seat lists it. Attach it
// before the program that is to be typed into starts: keys typed while the
// seat is gaining its first keyboard are lost.
func (g *GnomeShell) AttachKeyboard(t testing.TB) {
	t.Helper()
	const attach = `(() => {
		const {Clutter} = imports.gi;
		const seat = ` + seatJS + `;
		if (!globalThis.antidriftKeyboard) {
			globalThis.antidriftKeyboardsBefore = seat.list_devices().filter(d => d.get_device_type() === Clutter.InputDeviceType.KEYBOARD_DEVICE).length;
			globalThis.antidriftKeyboard = seat.create_virtual_device(Clutter.InputDeviceType.KEYBOARD_DEVICE);
		}
		return String(seat.list_devices().filter(d => d.get_device_type() === Clutter.InputDeviceType.KEYBOARD_DEVICE).length > antidriftKeyboardsBefore);
	})()`
	WaitUntil(t, readyTimeout, "the Shell's seat to have a keyboard", func() bool {
		return g.EvalString(t, attach) == "true"
	})
}

// MovePointer moves a pointer of the Shell's (a virtual one) to x, y on
// the screen, as a person moves the mouse: the compositor draws again, and
// the window under it sees the pointer.
func (g *GnomeShell) MovePointer(t testing.TB, x, y int) {
	t.Helper()
	js := fmt.Sprintf(`(() => {
		const {Clutter, GLib} = imports.gi;
		globalThis.antidriftPointer ??= %s
			.create_virtual_device(Clutter.InputDeviceType.POINTER_DEVICE);
		antidriftPointer.notify_absolute_motion(GLib.get_monotonic_time(), %d, %d);
	})()`, seatJS, x, y)
	if _, err := g.Eval(js); err != nil {
		t.Fatalf("moving the pointer: %v", err)
	}
}

// PressKeys presses and releases each key (a Clutter key name: Tab,
// Return, Down, Home, a…) in turn on the keyboard AttachKeyboard plugged
// in, as a person would type them: the window with focus gets them.
func (g *GnomeShell) PressKeys(t testing.TB, keys ...string) {
	t.Helper()
	g.AttachKeyboard(t)
	for _, key := range keys {
		js := `(key => {
			const {Clutter, GLib} = imports.gi;
			const now = GLib.get_monotonic_time();
			antidriftKeyboard.notify_keyval(now, key, Clutter.KeyState.PRESSED);
			antidriftKeyboard.notify_keyval(now + 1000, key, Clutter.KeyState.RELEASED);
		})(imports.gi.Clutter.KEY_` + key + `)`
		if _, err := g.Eval(js); err != nil {
			t.Fatalf("pressing %s: %v", key, err)
		}
	}
}

// StartProgram runs argv inside the rootfs as ShellUID with the session's
// environment and extra (KEY=value); it is stopped at cleanup.
func (g *GnomeShell) StartProgram(t testing.TB, extra []string, argv ...string) *Process {
	t.Helper()
	return g.Rootfs.Start(t, g.dir, ShellUID, append(g.Env(), extra...), argv...)
}

// StartNativeHost starts antidrift-native-host inside the rootfs as
// ShellUID on the session's bus, as the browser program browser starts it
// (see the package's StartNativeHost).
func (g *GnomeShell) StartNativeHost(t testing.TB, browser string) *NativeHost {
	t.Helper()
	return startNativeHost(t, browser, func(argv []string) *exec.Cmd {
		name, args := g.Rootfs.command(ShellUID, g.Env(), argv...)
		cmd := exec.Command(name, args...)
		cmd.Env = []string{"PATH=" + os.Getenv("PATH")}
		return cmd
	})
}

// RunProgram runs a short command inside the rootfs as ShellUID with the
// session's environment.
func (g *GnomeShell) RunProgram(argv ...string) (string, error) {
	return g.Rootfs.Run(ShellUID, g.Env(), runTimeout, argv...)
}

// OpenWindow opens a window with application id appID titled titles[0] and
// waits until it has focus. NextTitle moves it through titles.
func (g *GnomeShell) OpenWindow(t testing.TB, appID string, titles ...string) *Window {
	t.Helper()
	if len(titles) == 0 {
		titles = []string{appID}
	}
	w := startWindow(t, g.Rootfs, ShellUID, g.Env(), appID, titles...)
	WaitUntil(t, readyTimeout, appID+" to open and get focus", func() bool {
		w.exited(t)
		return g.FocusedClass(t) == appID
	})
	return w
}

// AntidriftExtensionDir is antidrift's GNOME Shell extension as the
// checkout has it. Given to StartGnomeShell, it is installed as a person
// installs the zip from extensions.gnome.org: packed by make package-panels,
// then gnome-extensions install, as the Shell's user.
func AntidriftExtensionDir() string {
	return filepath.Join(DistDir(), "gnome-shell", "antidrift@antidrift.github.io")
}

// PackExtension runs make package-panels into a directory the rootfs sees
// and returns the path of the extension's zip.
func PackExtension(t testing.TB) string {
	t.Helper()
	out := sharedTempDir(t)
	b, err := exec.Command("make", "-s", "-C", filepath.Dir(DistDir()), "package-panels", "BUILDDIR="+out).CombinedOutput()
	if err != nil {
		t.Fatalf("make package-panels: %v\n%s", err, b)
	}
	return filepath.Join(out, filepath.Base(AntidriftExtensionDir())+".shell-extension.zip")
}

// InstallExtensionZip installs an extension's zip with gnome-extensions
// install, into the Shell's user's extensions directory. The Shell finds it
// when it next starts.
func (g *GnomeShell) InstallExtensionZip(t testing.TB, zip string) {
	t.Helper()
	if out, err := g.RunProgram("gnome-extensions", "install", "--force", zip); err != nil {
		t.Fatalf("gnome-extensions install %s: %v\n%s", zip, err, out)
	}
}

// testdataDir is this package's testdata directory.
func testdataDir() string {
	_, file, _, _ := runtime.Caller(0)
	return filepath.Join(filepath.Dir(file), "testdata")
}

// Kill9 kills the Shell with SIGKILL, as a crash would; Start starts it
// again.
func (g *GnomeShell) Kill9() { g.proc.Kill9() }
