package gnomeshell_test

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/godbus/dbus/v5"

	"github.com/antidrift/antidrift/gnomeshell"
	"github.com/antidrift/antidrift/internal/testsupport/testenv"
	"github.com/antidrift/antidrift/service"
)

// waitTimeout bounds every wait for something the Shell should do. It only
// matters when something is broken.
const waitTimeout = 30 * time.Second

// extensionDir is the extension as shipped.
func extensionDir() string { return testenv.AntidriftExtensionDir() }

// recorder keeps everything a watcher reported.
type recorder[T any] struct {
	mu   sync.Mutex
	seen []T
}

func (r *recorder[T]) add(v T) {
	r.mu.Lock()
	r.seen = append(r.seen, v)
	r.mu.Unlock()
}

func (r *recorder[T]) last() (T, bool) {
	r.mu.Lock()
	defer r.mu.Unlock()
	var zero T
	if len(r.seen) == 0 {
		return zero, false
	}
	return r.seen[len(r.seen)-1], true
}

// waitLast waits until the newest report satisfies ok.
func (r *recorder[T]) waitLast(t *testing.T, what string, ok func(T) bool) T {
	t.Helper()
	deadline := time.Now().Add(waitTimeout)
	for {
		if v, any := r.last(); any && ok(v) {
			return v
		}
		if time.Now().After(deadline) {
			r.mu.Lock()
			defer r.mu.Unlock()
			t.Fatalf("timed out waiting for %s; reported so far: %+v", what, r.seen)
		}
		time.Sleep(20 * time.Millisecond)
	}
}

// run runs a watcher until the test ends, recording what it reports; the
// test fails if it does not return once cancelled.
func run[T any](t *testing.T, watch func(context.Context, func(T))) *recorder[T] {
	r := &recorder[T]{}
	ctx, cancel := context.WithCancel(context.Background())
	done := make(chan struct{})
	go func() {
		defer close(done)
		watch(ctx, r.add)
	}()
	t.Cleanup(func() {
		cancel()
		select {
		case <-done:
		case <-time.After(waitTimeout):
			t.Error("the watcher did not return after its context was cancelled")
		}
	})
	return r
}

// daemonStandIn owns org.antidrift on conn and hands the extension's
// ReportFocus calls to push, as the daemon's org.antidrift.Evidence1 does
// for the owner of org.gnome.Shell.
type daemonStandIn struct {
	push func(handle, class, title string)
}

func (d daemonStandIn) ReportFocus(handle, class, title string) *dbus.Error {
	d.push(handle, class, title)
	return nil
}

func standIn(t *testing.T, conn *dbus.Conn, push func(handle, class, title string)) {
	t.Helper()
	if err := conn.Export(daemonStandIn{push}, "/org/antidrift/Session1", "org.antidrift.Evidence1"); err != nil {
		t.Fatal(err)
	}
	if reply, err := conn.RequestName("org.antidrift", dbus.NameFlagDoNotQueue); err != nil || reply != dbus.RequestNameReplyPrimaryOwner {
		t.Fatalf("owning org.antidrift: %v %v", reply, err)
	}
}

func isClass(class, title string) func(service.Window) bool {
	return func(w service.Window) bool { return w.Available && w.Class == class && w.Title == title }
}

func hasReason(part string) func(service.Window) bool {
	return func(w service.Window) bool { return !w.Available && strings.Contains(w.Reason, part) }
}

// extensionState is the extension's state as GNOME Shell tells it.
func extensionState(t *testing.T, g *testenv.GnomeShell) (state float64, errText string) {
	t.Helper()
	var info map[string]dbus.Variant
	err := g.Conn.Object("org.gnome.Shell", "/org/gnome/Shell").
		Call("org.gnome.Shell.Extensions.GetExtensionInfo", 0, gnomeshell.ExtensionUUID).Store(&info)
	if err != nil {
		t.Fatal(err)
	}
	state, _ = info["state"].Value().(float64)
	errText, _ = info["error"].Value().(string)
	return state, errText
}

// checkNoExtensionErrors fails when the Shell logged anything about the
// extension: a load error, a JS exception, a warning.
func checkNoExtensionErrors(t *testing.T, g *testenv.GnomeShell) {
	t.Helper()
	for _, line := range strings.Split(g.Log(), "\n") {
		if strings.Contains(line, "antidrift@") || strings.Contains(line, "evidence.js") || strings.Contains(line, "antidrift: ") {
			t.Errorf("GNOME Shell's log: got a line about the extension: %s, want none\n%s", line, g.Log())
		}
	}
}

// isMinimized says whether the window with Mutter id handle is minimized.
func isMinimized(t *testing.T, g *testenv.GnomeShell, handle string) string {
	t.Helper()
	out, err := g.Eval(fmt.Sprintf("String(global.get_window_actors().map(a => a.meta_window).find(w => String(w.get_id()) === %q)?.minimized)", handle))
	if err != nil {
		t.Fatal(err)
	}
	return out
}

// The extension loads without a word in the Shell's log and reports native
// windows' focus and titles; the Sensor passes them on, and the Guard's
// calls act on them, only while the window still has focus.
func TestSensorAndGuardOnGnomeShell(t *testing.T) {
	testenv.EachRelease(t, testenv.GnomeReleases, testSensorAndGuardOnGnomeShell)
}

func testSensorAndGuardOnGnomeShell(t *testing.T, rel testenv.Release) {
	g := testenv.StartGnomeShellRelease(t, rel, extensionDir())
	if state, errText := extensionState(t, g); state != 1 {
		t.Fatalf("the extension's state is %v (%s), want 1 (active)\n%s", state, errText, g.Log())
	}
	// The daemon can be activated on this bus, as in a real session; the
	// extension must never start it (activation would leave this mark).
	activated := filepath.Join(t.TempDir(), "activated")
	activation := "[D-BUS Service]\nName=org.antidrift\nExec=/usr/bin/touch " + activated + "\n"
	if err := os.WriteFile(filepath.Join(g.Bus.ServiceDir, "org.antidrift.service"), []byte(activation), 0o644); err != nil {
		t.Fatal(err)
	}
	if err := g.Conn.BusObject().Call("org.freedesktop.DBus.ReloadConfig", 0).Err; err != nil {
		t.Fatal(err)
	}
	conn := g.Bus.Dial(t)
	sensor := gnomeshell.NewSensor(conn, testenv.Logger())
	windows := run(t, sensor.Run)
	// Before the daemon owns its name the extension reports nothing, and
	// refuses to answer the Sensor's Focus: its hands answer only the owner
	// of org.antidrift (the real daemon owns it before its Sensor runs).
	windows.waitLast(t, "no window yet", func(w service.Window) bool {
		return !w.Available && w.Class == "" && (w == service.NoFocus() || strings.Contains(w.Reason, "waiting for the antidrift extension"))
	})
	g.OpenWindow(t, "org.antidrift.Before", "before the daemon")
	standIn(t, conn, sensor.Push)
	windows.waitLast(t, "the window focused before the daemon came", isClass("org.antidrift.Before", "before the daemon"))
	if _, err := os.Stat(activated); err == nil {
		t.Fatal("the extension started the daemon by D-Bus activation")
	}

	work := g.OpenWindow(t, "org.antidrift.Work", "draft one", "draft two")
	first := windows.waitLast(t, "the work window", isClass("org.antidrift.Work", "draft one"))
	if first.ID == "" {
		t.Fatalf("the work window's handle: got none in %+v, want one", first)
	}
	work.NextTitle(t)
	windows.waitLast(t, "its new title", isClass("org.antidrift.Work", "draft two"))
	g.OpenWindow(t, "org.antidrift.Drift", "cat videos")
	drift := windows.waitLast(t, "the drifting window", isClass("org.antidrift.Drift", "cat videos"))
	if drift.ID == first.ID {
		t.Fatalf("the drifting window's handle: got %s, the work window's too, want its own", drift.ID)
	}

	guard := gnomeshell.NewGuard(conn)
	ctx, cancel := context.WithTimeout(context.Background(), waitTimeout)
	defer cancel()
	if err := guard.MinimizeWindow(ctx, first.ID); !errors.Is(err, service.ErrNotActive) {
		t.Fatalf("minimizing a window without focus: %v, want ErrNotActive", err)
	}
	if got := isMinimized(t, g, first.ID); got != `"false"` {
		t.Fatalf("the window without focus: got minimized=%s, want \"false\" (untouched)", got)
	}
	if err := guard.MinimizeWindow(ctx, drift.ID); err != nil {
		t.Fatalf("minimizing the focused window: %v", err)
	}
	if got := isMinimized(t, g, drift.ID); got != `"true"` {
		t.Fatalf("the focused window after MinimizeWindow returned nil: got minimized=%s, want \"true\"", got)
	}
	if err := guard.ActivateWindow(ctx, first.ID); err != nil {
		t.Fatal(err)
	}
	windows.waitLast(t, "the work window back", isClass("org.antidrift.Work", "draft two"))
	if err := guard.ActivateWindow(ctx, drift.ID); err != nil {
		t.Fatal(err)
	}
	windows.waitLast(t, "the minimized window activated", isClass("org.antidrift.Drift", "cat videos"))
	if got := isMinimized(t, g, drift.ID); got != `"false"` {
		t.Fatalf("the window after activating: got minimized=%s, want \"false\"", got)
	}
	if err := guard.ActivateWindow(ctx, "424242"); err == nil || !strings.Contains(err.Error(), "no longer exists") {
		t.Fatalf("activating a window that never was: %v", err)
	}
	// A look at the desktop, kept where ANTIDRIFT_ARTIFACTS says.
	artifacts := testenv.ArtifactsDir(t)
	g.Screenshot(t, filepath.Join(artifacts, "gnomeshell-desktop.png"))

	// Another peer's word is not the Shell's: a forged state change (and a
	// malformed one) and a forged NameOwnerChanged, sent straight to the
	// sensor's connection, change nothing. The real state change below comes
	// after them on the bus, so its reason shows they were handled first.
	forger := g.Bus.Dial(t)
	to := conn.Names()[0]
	testenv.SendSignalTo(t, forger, to, "/org/gnome/Shell", "org.gnome.Shell.Extensions.ExtensionStateChanged",
		gnomeshell.ExtensionUUID, map[string]dbus.Variant{"state": dbus.MakeVariant(3.0), "error": dbus.MakeVariant("forged")})
	testenv.SendSignalTo(t, forger, to, "/org/gnome/Shell", "org.gnome.Shell.Extensions.ExtensionStateChanged", uint32(7))
	testenv.SendSignalTo(t, forger, to, "/org/freedesktop/DBus", "org.freedesktop.DBus.NameOwnerChanged", "org.gnome.Shell", ":1.1", "")

	// Disabled: the reason names the command that enables it, and the
	// hands are gone with it.
	shellExtensions := g.Conn.Object("org.gnome.Shell", "/org/gnome/Shell")
	if err := shellExtensions.Call("org.gnome.Shell.Extensions.DisableExtension", 0, gnomeshell.ExtensionUUID).Err; err != nil {
		t.Fatal(err)
	}
	windows.waitLast(t, "the reason it is disabled", hasReason("gnome-extensions enable antidrift@antidrift.github.io"))
	windows.mu.Lock()
	for _, w := range windows.seen {
		if strings.Contains(w.Reason, "forged") || strings.Contains(w.Reason, "not running") {
			t.Errorf("a forged signal: got %+v believed, want it ignored", w)
		}
	}
	windows.mu.Unlock()
	if err := guard.MinimizeWindow(ctx, drift.ID); err == nil || !strings.Contains(err.Error(), "extension is not running") {
		t.Fatalf("minimizing with the extension disabled: %v", err)
	}
	if err := shellExtensions.Call("org.gnome.Shell.Extensions.EnableExtension", 0, gnomeshell.ExtensionUUID).Err; err != nil {
		t.Fatal(err)
	}
	windows.waitLast(t, "the window again once enabled", isClass("org.antidrift.Drift", "cat videos"))
	// Enabled, but all user extensions switched off: another fix.
	if _, err := g.Eval("global.settings.set_boolean('disable-user-extensions', true)"); err != nil {
		t.Fatal(err)
	}
	windows.waitLast(t, "the reason it is switched off", hasReason("disable-user-extensions false"))
	if _, err := g.Eval("global.settings.set_boolean('disable-user-extensions', false)"); err != nil {
		t.Fatal(err)
	}
	windows.waitLast(t, "the window again once switched on", isClass("org.antidrift.Drift", "cat videos"))
	checkNoExtensionErrors(t, g)

	// GNOME Shell gone: unavailable, saying so; back when it returns (its
	// windows died with it, so no window has focus).
	g.Stop()
	windows.waitLast(t, "GNOME Shell gone", hasReason("GNOME Shell is not running"))
	g.Start(t)
	windows.waitLast(t, "GNOME Shell back", func(w service.Window) bool { return w == service.NoFocus() })
	g.OpenWindow(t, "org.antidrift.Work", "after restart")
	windows.waitLast(t, "a window of the new Shell", isClass("org.antidrift.Work", "after restart"))
	checkNoExtensionErrors(t, g)
}

// Without the extension installed, the Sensor says how to install it.
func TestSensorWithoutTheExtension(t *testing.T) {
	testenv.EachRelease(t, testenv.GnomeReleases, testSensorWithoutTheExtension)
}

func testSensorWithoutTheExtension(t *testing.T, rel testenv.Release) {
	g := testenv.StartGnomeShellRelease(t, rel)
	conn := g.Bus.Dial(t)
	windows := run(t, gnomeshell.NewSensor(conn, testenv.Logger()).Run)
	windows.waitLast(t, "the reason", hasReason("the antidrift extension is not installed in GNOME Shell: make install-user"))
}

// Idleness comes from Mutter's idle monitor: idle after the interval with
// no input, back when input (here ResetIdletime) comes.
func TestIdleWatcherOnMutter(t *testing.T) {
	testenv.EachRelease(t, testenv.GnomeReleases, testIdleWatcherOnMutter)
}

func testIdleWatcherOnMutter(t *testing.T, rel testenv.Release) {
	g := testenv.StartGnomeShellRelease(t, rel)
	conn := g.Bus.Dial(t)
	idle := run(t, gnomeshell.NewIdleWatcher(conn, time.Second, testenv.Logger()).Run)
	idle.waitLast(t, "idle", func(v bool) bool { return v })
	monitor := g.Conn.Object("org.gnome.Mutter.IdleMonitor", "/org/gnome/Mutter/IdleMonitor/Core")
	if err := monitor.Call("org.gnome.Mutter.IdleMonitor.ResetIdletime", 0).Err; err != nil {
		t.Fatal(err)
	}
	idle.waitLast(t, "back", func(v bool) bool { return !v })
	// The idle watch stays: a second quiet second makes it idle again.
	idle.waitLast(t, "idle again", func(v bool) bool { return v })
	idle.mu.Lock()
	defer idle.mu.Unlock()
	for i := 1; i < len(idle.seen); i++ {
		if idle.seen[i] == idle.seen[i-1] {
			t.Fatalf("idle values: got the same value twice in a row in %v, want each to differ from the one before", idle.seen)
		}
	}
}

// The shipped metadata names the uuid the daemon asks GNOME Shell about,
// and exactly the Shell versions the extension is tested on: the releases
// every GNOME end-to-end test runs on (Debian 13's 48, testing's 50,
// unstable's 51; 49 is in no Debian suite, so it is not claimed).
func TestExtensionMetadata(t *testing.T) {
	b, err := os.ReadFile(filepath.Join(extensionDir(), "metadata.json"))
	if err != nil {
		t.Fatal(err)
	}
	var meta struct {
		UUID     string   `json:"uuid"`
		Versions []string `json:"shell-version"`
	}
	if err := json.Unmarshal(b, &meta); err != nil {
		t.Fatal(err)
	}
	if meta.UUID != gnomeshell.ExtensionUUID || filepath.Base(extensionDir()) != meta.UUID {
		t.Errorf("uuid %q in %s, want %q", meta.UUID, extensionDir(), gnomeshell.ExtensionUUID)
	}
	var want []string
	for _, rel := range testenv.GnomeReleases {
		want = append(want, rel.Version)
	}
	if !slices.Equal(meta.Versions, want) {
		t.Errorf("shell-version %v, want %v", meta.Versions, want)
	}
}
