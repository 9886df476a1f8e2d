package main

import (
	"os"
	"path/filepath"
	"slices"
	"strconv"
	"strings"
	"testing"

	"github.com/antidrift/antidrift/internal/testsupport/testenv"
)

// gnomeDesktop is a real GNOME Shell (one of testenv.GnomeReleases) with
// the antidrift extension, and antidriftd with evidence = "gnome-shell", both running as
// testenv.ShellUID (the daemon serves only its own user, so every client
// call here is made as that user too, inside the rootfs: properties with
// busctl --json, decoded into Go values; methods with gdbus).
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
	testenv.WaitUntil(t, wait, "antidriftd to own org.antidrift (NameHasOwner true)", func() bool {
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

// gnomeProp reads the daemon's property name into a T as the Shell's user
// reads it: busctl --json inside the rootfs, its "data" decoded. (The
// test process runs as another user, whom the daemon refuses.)
func gnomeProp[T any](t testing.TB, k *gnomeDesktop, name string) T {
	t.Helper()
	out, err := k.g.RunProgram(testenv.BusctlGetProperty(name)...)
	if err != nil {
		t.Fatalf("reading %s: %v\n%s", name, err, k.daemon.Output())
	}
	v, err := testenv.DecodeBusctlProperty[T](name, out)
	if err != nil {
		t.Fatal(err)
	}
	return v
}

// gnomeProps is the daemon's properties as the Shell's user reads them,
// decoded; it reads as a *testenv.Session does.
type gnomeProps struct{ k *gnomeDesktop }

func (k *gnomeDesktop) props() gnomeProps { return gnomeProps{k} }

func (p gnomeProps) String(t testing.TB, name string) string { return gnomeProp[string](t, p.k, name) }
func (p gnomeProps) Uint32(t testing.TB, name string) uint32 { return gnomeProp[uint32](t, p.k, name) }
func (p gnomeProps) Bool(t testing.TB, name string) bool     { return gnomeProp[bool](t, p.k, name) }

// gnomeWaitProp waits until property name reads want, and fails naming the
// last value it read.
func gnomeWaitProp[T comparable](t *testing.T, k *gnomeDesktop, name string, want T) {
	t.Helper()
	testenv.WaitForValue(t, wait, name, want, func() T { return gnomeProp[T](t, k, name) })
}

// waitReason waits until EvidenceReason says part.
func (k *gnomeDesktop) waitReason(t *testing.T, part string) {
	t.Helper()
	testenv.WaitFor(t, wait, "EvidenceReason to say "+strconv.Quote(part), func() string { return k.props().String(t, "EvidenceReason") },
		func(reason string) bool { return strings.Contains(reason, part) })
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
	gnomeWaitProp(t, k, "EvidenceSource", "gnome-shell")
	gnomeWaitProp(t, k, "CurrentClass", "org.antidrift.Work")
	gnomeWaitProp(t, k, "CurrentTitle", "main.go - editor")
	work.NextTitle(t)
	gnomeWaitProp(t, k, "CurrentTitle", "other.go - editor")

	g.StartNotifications(t)
	if _, err := k.gdbus(t, "org.antidrift.Session1.Start", "write code", "tests pass", "uint64 600", "block", "['org.antidrift.Work']"); err != nil {
		t.Fatalf("Start: %v\n%s", err, k.daemon.Output())
	}
	g.OpenWindow(t, "org.antidrift.Drift", "cat videos")
	gnomeWaitProp(t, k, "MinimizeCount", uint32(1))
	if got := g.EvalString(t, "String(global.get_window_actors().map(a => a.meta_window).find(w => w.get_wm_class() === 'org.antidrift.Drift').minimized)"); got != "true" {
		t.Fatalf("the drifting window's minimized in the Shell: got %s, want true", got)
	}
	testenv.WaitForValue(t, wait, "the Shell's focused class", "org.antidrift.Work", func() string { return g.FocusedClass(t) })
	gnomeWaitProp(t, k, "CurrentClass", "org.antidrift.Work")

	// The nudge is in the Shell's message tray with its actions, without
	// the window's title; choosing "Allow" reaches the daemon.
	const drifting = "Main.messageTray.getSources().flatMap(s => s.notifications).find(n => n.title.startsWith('Drifting'))"
	nudge := testenv.WaitFor(t, wait, "the nudge in the message tray", func() string {
		out, err := g.Eval(drifting + "?.actions.map(a => a.label).join('|') ?? ''")
		if err != nil {
			return err.Error()
		}
		return out
	}, func(out string) bool { return strings.HasPrefix(out, `"`) && out != `""` })
	if want := `"Back to work|Allow org.antidrift.Drift|Not a distraction"`; nudge != want {
		t.Fatalf("the nudge's actions: got %s, want %s", nudge, want)
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
		t.Fatalf("the nudge: got %q, want it without the window title", body)
	}
	if _, err := g.Eval(drifting + ".actions.find(a => a.label.startsWith('Allow')).activate()"); err != nil {
		t.Fatal(err)
	}
	testenv.WaitFor(t, wait, `AllowedClasses to be ["org.antidrift.Work" "org.antidrift.Drift"]`, func() []string { return gnomeProp[[]string](t, k, "AllowedClasses") },
		func(got []string) bool {
			return slices.Equal(got, []string{"org.antidrift.Work", "org.antidrift.Drift"})
		})

	// Anyone but the Shell's connection is refused, the same user included.
	_, err := k.gdbus(t, "org.antidrift.Evidence1.ReportFocus", "1", "org.antidrift.Forged", "forged")
	if err == nil || !strings.Contains(err.Error(), "org.freedesktop.DBus.Error.AccessDenied") {
		t.Fatalf("a forged ReportFocus as the Shell's user: got %v, want org.freedesktop.DBus.Error.AccessDenied", err)
	}
	if got := k.props().String(t, "CurrentClass"); got != "org.antidrift.Work" {
		t.Fatalf("CurrentClass after a forged report: got %q, want %q", got, "org.antidrift.Work")
	}

	// The extension disabled: the reason names the command that enables it.
	ext := g.Conn.Object("org.gnome.Shell", "/org/gnome/Shell")
	if err := ext.Call("org.gnome.Shell.Extensions.DisableExtension", 0, "antidrift@antidrift.github.io").Err; err != nil {
		t.Fatal(err)
	}
	k.waitReason(t, "gnome-extensions enable antidrift@antidrift.github.io")
	if err := ext.Call("org.gnome.Shell.Extensions.EnableExtension", 0, "antidrift@antidrift.github.io").Err; err != nil {
		t.Fatal(err)
	}
	gnomeWaitProp(t, k, "CurrentClass", "org.antidrift.Work")

	if strings.Contains(g.Log(), "antidrift@") {
		t.Fatalf("GNOME Shell's log: got\n%s\nwant nothing about the extension", g.Log())
	}

	// GNOME Shell gone: unavailable with a reason; back when it returns.
	g.Stop()
	k.waitReason(t, "GNOME Shell is not running")
	g.Start(t)
	g.OpenWindow(t, "org.antidrift.Work", "after the restart")
	gnomeWaitProp(t, k, "CurrentTitle", "after the restart")

	// Idleness from Mutter: away after idle_after without input, back on
	// input (ResetIdletime stands in for a key press). This daemon finds
	// GNOME Shell by itself: WAYLAND_DISPLAY is set and org.gnome.Shell is
	// on the bus.
	for _, title := range []string{"main.go - editor", "other.go - editor", "cat videos", "after the restart"} {
		if strings.Contains(k.daemon.Output(), title) {
			t.Fatalf("the daemon's log: got\n%s\nwant it without the window title %q", k.daemon.Output(), title)
		}
	}
	auto := strings.NewReplacer(`idle_after = "1h"`, `idle_after = "2s"`, `evidence = "gnome-shell"`, `evidence = "auto"`)
	k.startDaemon(t, auto.Replace(gnomeConfig))
	gnomeWaitProp(t, k, "EvidenceSource", "gnome-shell")
	gnomeWaitProp(t, k, "Drift", "away")
	mon := testenv.StartMonitor(t, g.Bus, "type='signal',member='PropertiesChanged',path='/org/antidrift/Session1'")
	monitor := g.Conn.Object("org.gnome.Mutter.IdleMonitor", "/org/gnome/Mutter/IdleMonitor/Core")
	if err := monitor.Call("org.gnome.Mutter.IdleMonitor.ResetIdletime", 0).Err; err != nil {
		t.Fatal(err)
	}
	// Watched, not polled: two quiet seconds later it is away again.
	mon.WaitFor(t, `"on_task"`, wait)
	if strings.Contains(k.daemon.Output(), "after the restart") || strings.Contains(g.Log(), "after the restart") {
		t.Fatal("the daemon's or the Shell's log: got the title \"after the restart\", want no window titles")
	}
	if strings.Contains(g.Log(), "antidrift@") {
		t.Fatalf("GNOME Shell's log: got\n%s\nwant nothing about the extension", g.Log())
	}
}
