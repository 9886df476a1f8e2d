package main

import (
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/antidrift/antidrift/internal/testsupport/testenv"
)

// gnomeDesktop is a real GNOME Shell (one of testenv.GnomeReleases) with
// the antidrift extension, and antidriftd with evidence = "gnome-shell", both running as
// testenv.ShellUID (the daemon serves only its own user, so every client
// call here is made as that user too, with gdbus inside the rootfs).
type gnomeDesktop struct {
	g        *testenv.GnomeShell
	bin      string
	cfgHome  string
	stateDir string
	daemon   *testenv.Process
}

func startGnomeDesktop(t *testing.T, rel testenv.Release) *gnomeDesktop {
	t.Helper()
	g := testenv.StartGnomeShellRelease(t, rel, testenv.AntidriftExtensionDir())
	k := &gnomeDesktop{g: g, bin: testenv.Binary(t, "antidriftd")}
	// The built binary's directory is private to root; the daemon runs as
	// the Shell's user.
	if err := os.Chmod(filepath.Dir(k.bin), 0o755); err != nil {
		t.Fatal(err)
	}
	dir := g.Rootfs.TempDir(t)
	k.cfgHome, k.stateDir = filepath.Join(dir, "config"), filepath.Join(dir, "state")
	if err := os.MkdirAll(filepath.Join(k.cfgHome, "antidrift"), 0o755); err != nil {
		t.Fatal(err)
	}
	if err := os.Chown(dir, testenv.ShellUID, testenv.ShellUID); err != nil {
		t.Fatal(err)
	}
	return k
}

// startDaemon (re)starts antidriftd with config and waits for its name.
func (k *gnomeDesktop) startDaemon(t *testing.T, config string) {
	t.Helper()
	if k.daemon != nil {
		k.daemon.Stop()
	}
	if err := os.WriteFile(filepath.Join(k.cfgHome, "antidrift", "config.toml"), []byte(config), 0o644); err != nil {
		t.Fatal(err)
	}
	k.daemon = k.g.StartProgram(t, []string{"XDG_CONFIG_HOME=" + k.cfgHome}, k.bin, "--state-dir", k.stateDir)
	testenv.WaitUntil(t, wait, "antidriftd to own org.antidrift", func() bool {
		if k.daemon.Exited() {
			t.Fatalf("antidriftd exited\n%s", k.daemon.Output())
		}
		var has bool
		err := k.g.Conn.BusObject().Call("org.freedesktop.DBus.NameHasOwner", 0, "org.antidrift").Store(&has)
		return err == nil && has
	})
}

// gdbus calls the daemon as the Shell's user; the reply in GVariant text.
func (k *gnomeDesktop) gdbus(t *testing.T, method string, args ...string) (string, error) {
	t.Helper()
	argv := append([]string{"gdbus", "call", "--session", "--dest", "org.antidrift", "--object-path", "/org/antidrift/Session1", "--method", method}, args...)
	out, err := k.g.RunProgram(argv...)
	return strings.TrimSpace(out), err
}

func (k *gnomeDesktop) prop(t *testing.T, name string) string {
	t.Helper()
	out, err := k.gdbus(t, "org.freedesktop.DBus.Properties.Get", "org.antidrift.Session1", name)
	if err != nil {
		t.Fatalf("reading %s: %v\n%s", name, err, k.daemon.Output())
	}
	return out
}

// waitProp waits until property name reads want (GVariant text, e.g.
// "(<'gnome-shell'>,)"), or contains it when contains is set.
func (k *gnomeDesktop) waitProp(t *testing.T, name, want string, contains bool) {
	t.Helper()
	var got string
	ok := func() bool {
		got = k.prop(t, name)
		return got == want || contains && strings.Contains(got, want)
	}
	testenv.WaitUntil(t, wait, name+" to read "+want, func() bool {
		if ok() {
			return true
		}
		t.Logf("%s: %s", name, got)
		return false
	})
}

const gnomeConfig = `evidence = "gnome-shell"
drift_grace = "1s"
nudge_repeat = "10m"
idle_after = "1h"
`

// End to end on GNOME Shell 48, 50 and 51: the extension's reports reach the
// daemon's properties, block minimizes the drifting window and gives the
// work window focus back, a forged report is refused, the extension
// disabled or the Shell gone is a reason, and idleness is Mutter's.
func TestGnomeShellEndToEnd(t *testing.T) {
	testenv.EachRelease(t, testenv.GnomeReleases, testGnomeShellEndToEnd)
}

func testGnomeShellEndToEnd(t *testing.T, rel testenv.Release) {
	k := startGnomeDesktop(t, rel)
	g := k.g
	work := g.OpenWindow(t, "org.antidrift.Work", "main.go - editor", "other.go - editor")
	// The daemon starts after the window has focus: the extension reports
	// it when org.antidrift appears.
	k.startDaemon(t, gnomeConfig)
	k.waitProp(t, "EvidenceSource", "(<'gnome-shell'>,)", false)
	k.waitProp(t, "CurrentClass", "(<'org.antidrift.Work'>,)", false)
	k.waitProp(t, "CurrentTitle", "(<'main.go - editor'>,)", false)
	work.NextTitle(t)
	k.waitProp(t, "CurrentTitle", "(<'other.go - editor'>,)", false)

	g.StartNotifications(t)
	if _, err := k.gdbus(t, "org.antidrift.Session1.Start", "write code", "tests pass", "uint64 600", "block", "['org.antidrift.Work']"); err != nil {
		t.Fatalf("Start: %v\n%s", err, k.daemon.Output())
	}
	g.OpenWindow(t, "org.antidrift.Drift", "cat videos")
	k.waitProp(t, "MinimizeCount", "(<uint32 1>,)", false)
	if got := g.EvalString(t, "String(global.get_window_actors().map(a => a.meta_window).find(w => w.get_wm_class() === 'org.antidrift.Drift').minimized)"); got != "true" {
		t.Fatalf("the drifting window is not minimized: %s", got)
	}
	testenv.WaitUntil(t, wait, "the work window to have focus again", func() bool { return g.FocusedClass(t) == "org.antidrift.Work" })
	k.waitProp(t, "CurrentClass", "(<'org.antidrift.Work'>,)", false)

	// The nudge is in the Shell's message tray with its actions, without
	// the window's title; choosing "Allow" reaches the daemon.
	const drifting = "Main.messageTray.getSources().flatMap(s => s.notifications).find(n => n.title.startsWith('Drifting'))"
	var nudge string
	testenv.WaitUntil(t, wait, "the nudge in the message tray", func() bool {
		out, err := g.Eval(drifting + "?.actions.map(a => a.label).join('|') ?? ''")
		nudge = out
		return err == nil && out != `""`
	})
	if nudge != `"Back to work|Allow org.antidrift.Drift|Not a distraction"` {
		t.Fatalf("the nudge's actions: %s", nudge)
	}
	artifacts := testenv.ArtifactsDir(t)
	// The nudge in the message list, for a look.
	const dateMenu = "Main.panel.statusArea.dateMenu.menu"
	if _, err := g.Eval(dateMenu + ".open()"); err != nil {
		t.Fatal(err)
	}
	g.Screenshot(t, filepath.Join(artifacts, "gnome-e2e-nudge.png"))
	if _, err := g.Eval(dateMenu + ".close()"); err != nil {
		t.Fatal(err)
	}
	if body := g.EvalString(t, drifting+".title + ' ' + "+drifting+".body"); strings.Contains(body, "cat videos") {
		t.Fatalf("the nudge carries the window title: %s", body)
	}
	if _, err := g.Eval(drifting + ".actions.find(a => a.label.startsWith('Allow')).activate()"); err != nil {
		t.Fatal(err)
	}
	k.waitProp(t, "AllowedClasses", "(<['org.antidrift.Work', 'org.antidrift.Drift']>,)", false)

	// Anyone but the Shell's connection is refused, the same user included.
	_, err := k.gdbus(t, "org.antidrift.Evidence1.ReportFocus", "1", "org.antidrift.Forged", "forged")
	if err == nil || !strings.Contains(err.Error(), "org.freedesktop.DBus.Error.AccessDenied") {
		t.Fatalf("a forged ReportFocus: %v", err)
	}
	if got := k.prop(t, "CurrentClass"); got != "(<'org.antidrift.Work'>,)" {
		t.Fatalf("CurrentClass after a forged report: %s", got)
	}

	// The extension disabled: the reason names the command that enables it.
	ext := g.Conn.Object("org.gnome.Shell", "/org/gnome/Shell")
	if err := ext.Call("org.gnome.Shell.Extensions.DisableExtension", 0, "antidrift@antidrift.github.io").Err; err != nil {
		t.Fatal(err)
	}
	k.waitProp(t, "EvidenceReason", "gnome-extensions enable antidrift@antidrift.github.io", true)
	if err := ext.Call("org.gnome.Shell.Extensions.EnableExtension", 0, "antidrift@antidrift.github.io").Err; err != nil {
		t.Fatal(err)
	}
	k.waitProp(t, "CurrentClass", "(<'org.antidrift.Work'>,)", false)

	if strings.Contains(g.Log(), "antidrift@") {
		t.Fatalf("GNOME Shell logged about the extension:\n%s", g.Log())
	}

	// GNOME Shell gone: unavailable with a reason; back when it returns.
	g.Stop()
	k.waitProp(t, "EvidenceReason", "GNOME Shell is not running", true)
	g.Start(t)
	g.OpenWindow(t, "org.antidrift.Work", "after the restart")
	k.waitProp(t, "CurrentTitle", "(<'after the restart'>,)", false)

	// Idleness from Mutter: away after idle_after without input, back on
	// input (ResetIdletime stands in for a key press). This daemon finds
	// GNOME Shell by itself: WAYLAND_DISPLAY is set and org.gnome.Shell is
	// on the bus.
	for _, title := range []string{"main.go - editor", "other.go - editor", "cat videos", "after the restart"} {
		if strings.Contains(k.daemon.Output(), title) {
			t.Fatalf("the daemon logged a window title: %q\n%s", title, k.daemon.Output())
		}
	}
	auto := strings.NewReplacer(`idle_after = "1h"`, `idle_after = "2s"`, `evidence = "gnome-shell"`, `evidence = "auto"`)
	k.startDaemon(t, auto.Replace(gnomeConfig))
	k.waitProp(t, "EvidenceSource", "(<'gnome-shell'>,)", false)
	k.waitProp(t, "Drift", "(<'away'>,)", false)
	mon := testenv.StartMonitor(t, g.Bus, "type='signal',member='PropertiesChanged',path='/org/antidrift/Session1'")
	monitor := g.Conn.Object("org.gnome.Mutter.IdleMonitor", "/org/gnome/Mutter/IdleMonitor/Core")
	if err := monitor.Call("org.gnome.Mutter.IdleMonitor.ResetIdletime", 0).Err; err != nil {
		t.Fatal(err)
	}
	// Watched, not polled: two quiet seconds later it is away again.
	mon.WaitFor(t, `"on_task"`, wait)
	if strings.Contains(k.daemon.Output(), "after the restart") || strings.Contains(g.Log(), "after the restart") {
		t.Fatal("a window title was logged")
	}
	if strings.Contains(g.Log(), "antidrift@") {
		t.Fatalf("GNOME Shell logged about the extension:\n%s", g.Log())
	}
}
