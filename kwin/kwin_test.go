package kwin

import (
	"context"
	"errors"
	"fmt"
	"io"
	"log/slog"
	"os"
	"path/filepath"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/godbus/dbus/v5"

	"github.com/antidrift/antidrift/dbusapi"
	"github.com/antidrift/antidrift/internal/testenv"
	"github.com/antidrift/antidrift/persist"
	"github.com/antidrift/antidrift/service"
)

const wait = 30 * time.Second

// plasma is real KWin on a private bus, with the daemon's side as the
// daemon wires it: the real Evidence1 gate believing KWin's connection and
// handing reports to a Sensor, and a Guard.
type plasma struct {
	bus   *testenv.Bus
	kwin  *testenv.KWin
	conn  *dbus.Conn
	guard *Guard

	mu   sync.Mutex
	seen []service.Window
	stop context.CancelFunc
	done chan struct{}
}

func startPlasma(t *testing.T) *plasma {
	t.Helper()
	r := testenv.NeedRootfs(t)
	testenv.Need(t, "dbus-daemon", "gdbus")
	p := &plasma{bus: testenv.StartBus(t)}
	p.kwin = testenv.StartKWin(t, r, p.bus)
	store, _, err := persist.Open(filepath.Join(t.TempDir(), "state"))
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { store.Close() })
	quiet := slog.New(slog.NewTextHandler(io.Discard, nil))
	svc := service.New(service.Options{Store: store, Logger: quiet, Version: "test"})
	if err := svc.Recover(service.Snapshot{}); err != nil {
		t.Fatal(err)
	}
	p.conn = p.bus.Dial(t)
	srv, err := dbusapi.Serve(p.conn, svc, quiet)
	if err != nil {
		t.Fatal(err)
	}
	logger := slog.New(slog.NewTextHandler(testWriter{t}, &slog.HandlerOptions{Level: slog.LevelDebug}))
	sensor := NewSensor(p.conn, p.kwin.RuntimeDir, logger)
	t.Cleanup(srv.BelieveEvidenceFrom("kwin", BusName, sensor.Push))
	if p.guard, err = NewGuard(p.conn, p.kwin.RuntimeDir, logger); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { p.guard.Close() })
	ctx, cancel := context.WithCancel(context.Background())
	p.stop, p.done = cancel, make(chan struct{})
	go func() {
		defer close(p.done)
		sensor.Run(ctx, func(w service.Window) {
			p.mu.Lock()
			p.seen = append(p.seen, w)
			p.mu.Unlock()
		})
	}()
	t.Cleanup(p.stopSensor)
	return p
}

func (p *plasma) stopSensor() {
	p.stop()
	<-p.done
}

// last is the newest window the sensor reported.
func (p *plasma) last() service.Window {
	p.mu.Lock()
	defer p.mu.Unlock()
	if len(p.seen) == 0 {
		return service.Window{}
	}
	return p.seen[len(p.seen)-1]
}

func (p *plasma) waitFor(t *testing.T, what string, ok func(service.Window) bool) {
	t.Helper()
	testenv.WaitUntil(t, wait, what, func() bool { return ok(p.last()) })
}

func (p *plasma) waitWindow(t *testing.T, w *testenv.Window, title string) {
	t.Helper()
	p.waitFor(t, fmt.Sprintf("the sensor to report %s %q", w.AppID, title), func(got service.Window) bool {
		return got == service.Window{ID: w.ID, Class: w.AppID, Title: title, Available: true}
	})
}

func (p *plasma) waitReason(t *testing.T, reason string) {
	t.Helper()
	p.waitFor(t, "the sensor to say "+reason, func(got service.Window) bool { return got == service.Window{Reason: reason} })
}

func (p *plasma) scriptLoaded(t *testing.T, name string) bool {
	t.Helper()
	var loaded bool
	err := p.conn.Object(BusName, scriptingPath).Call(scriptingIface+".isScriptLoaded", 0, name).Store(&loaded)
	if err != nil {
		t.Fatal(err)
	}
	return loaded
}

type testWriter struct{ t *testing.T }

func (w testWriter) Write(b []byte) (int, error) {
	w.t.Log(strings.TrimSpace(string(b)))
	return len(b), nil
}

// Native windows' focus and title changes reach the sensor, with KWin's
// internalId as the handle and the Wayland app id as the class.
func TestSensorFollowsFocusAndTitlesOnKWin(t *testing.T) {
	p := startPlasma(t)
	p.waitReason(t, reasonNoFocus) // the script's first report: nothing has focus yet
	editor := p.kwin.Window(t, "org.example.Editor", "main.go - editor")
	p.waitWindow(t, editor, "main.go - editor")
	if !validHandle(editor.ID) {
		t.Fatalf("KWin's handle %q is not a UUID in braces", editor.ID)
	}
	distraction := p.kwin.Window(t, "org.example.Distraction", "cat videos")
	p.waitWindow(t, distraction, "cat videos")
	p.kwin.Activate(t, editor)
	p.waitWindow(t, editor, "main.go - editor")
	editor.SetTitle(t, "other.go - editor")
	p.waitWindow(t, editor, "other.go - editor")
	// A title change of a window without focus is not news.
	distraction.SetTitle(t, "more cat videos")
	testenv.WaitUntil(t, wait, "KWin to see the new title", func() bool { return p.kwin.Info(t, distraction).Title == "more cat videos" })
	p.kwin.Activate(t, distraction)
	p.waitWindow(t, distraction, "more cat videos")
	p.mu.Lock()
	defer p.mu.Unlock()
	for _, w := range p.seen {
		if w.Available && w.Class == "org.example.Editor" && w.Title == "more cat videos" {
			t.Fatalf("a background title reached the sensor as the editor's: %+v", p.seen)
		}
	}
}

// KWin going away is said in words; the KWin that comes back gets the
// script again, which reports from its first moment.
func TestSensorReloadsTheScriptWhenKWinRestarts(t *testing.T) {
	p := startPlasma(t)
	editor := p.kwin.Window(t, "org.example.Editor", "main.go - editor")
	p.waitWindow(t, editor, "main.go - editor")
	p.kwin.Kill(t)
	p.waitReason(t, reasonGone)

	p.kwin.Start(t)
	p.waitReason(t, reasonNoFocus) // only the reloaded script can say so
	if !p.scriptLoaded(t, focusScript) {
		t.Fatal("the script is not loaded in the new KWin")
	}
	again := p.kwin.Window(t, "org.example.Editor", "main.go - editor")
	p.waitWindow(t, again, "main.go - editor")
}

// At stop the script leaves KWin and its file leaves the disk.
func TestSensorUnloadsItsScriptAtStop(t *testing.T) {
	p := startPlasma(t)
	p.waitReason(t, reasonNoFocus)
	file := filepath.Join(p.kwin.RuntimeDir, "antidrift", "kwin", focusFile)
	if _, err := os.Stat(file); err != nil {
		t.Fatalf("the script file while running: %v", err)
	}
	if !p.scriptLoaded(t, focusScript) {
		t.Fatal("the script is not loaded while the sensor runs")
	}
	p.stopSensor()
	if p.scriptLoaded(t, focusScript) {
		t.Fatal("the script is still loaded in KWin after Run returned")
	}
	if _, err := os.Stat(file); !errors.Is(err, os.ErrNotExist) {
		t.Fatalf("the script file after Run returned: %v", err)
	}
}

// Before KWin is there, the sensor says so; when it comes, the script
// goes in.
func TestSensorWaitsForKWin(t *testing.T) {
	p := startPlasma(t)
	p.waitReason(t, reasonNoFocus)
	p.kwin.Kill(t)
	p.waitReason(t, reasonGone)
	p.stopSensor()

	// A new sensor while KWin is away.
	q := &plasma{bus: p.bus, kwin: p.kwin, conn: p.conn}
	sensor := NewSensor(p.conn, p.kwin.RuntimeDir, nil)
	ctx, cancel := context.WithCancel(context.Background())
	q.stop, q.done = cancel, make(chan struct{})
	go func() {
		defer close(q.done)
		sensor.Run(ctx, func(w service.Window) { q.mu.Lock(); q.seen = append(q.seen, w); q.mu.Unlock() })
	}()
	t.Cleanup(q.stopSensor)
	q.waitReason(t, reasonAbsent)
	p.kwin.Start(t)
	testenv.WaitUntil(t, wait, "the script to be loaded into the KWin that came", func() bool { return q.scriptLoaded(t, focusScript) })
}

// The guard minimizes only the active window, and says so truly; it hands
// focus back by activating.
func TestGuardMinimizesOnlyTheActiveWindowAndActivates(t *testing.T) {
	p := startPlasma(t)
	editor := p.kwin.Window(t, "org.example.Editor", "main.go - editor")
	distraction := p.kwin.Window(t, "org.example.Distraction", "cat videos")
	p.waitWindow(t, distraction, "cat videos")
	ctx, cancel := context.WithTimeout(context.Background(), wait)
	defer cancel()

	if err := p.guard.MinimizeWindow(ctx, editor.ID); !errors.Is(err, service.ErrNotActive) {
		t.Fatalf("minimizing a window without focus: %v, want ErrNotActive", err)
	}
	if p.kwin.Info(t, editor).Minimized {
		t.Fatal("the window without focus was minimized")
	}
	if err := p.guard.MinimizeWindow(ctx, distraction.ID); err != nil {
		t.Fatalf("minimizing the active window: %v", err)
	}
	if info := p.kwin.Info(t, distraction); !info.Minimized || info.Active {
		t.Fatalf("KWin says of the window the guard minimized: %+v", info)
	}
	if err := p.guard.ActivateWindow(ctx, distraction.ID); err != nil {
		t.Fatalf("activating: %v", err)
	}
	if info := p.kwin.Info(t, distraction); info.Minimized || !info.Active {
		t.Fatalf("KWin says of the window the guard activated: %+v", info)
	}
	p.waitWindow(t, distraction, "cat videos")

	gone := "{00000000-0000-4000-8000-000000000000}"
	if err := p.guard.MinimizeWindow(ctx, gone); !errors.Is(err, service.ErrNotActive) {
		t.Fatalf("minimizing a window KWin does not have: %v, want ErrNotActive", err)
	}
	if err := p.guard.ActivateWindow(ctx, gone); err == nil || !strings.Contains(err.Error(), "no longer exists") {
		t.Fatalf("activating a window KWin does not have: %v", err)
	}
	// The one-shots are gone from KWin and from the disk.
	entries, err := os.ReadDir(filepath.Join(p.kwin.RuntimeDir, "antidrift", "kwin"))
	if err != nil {
		t.Fatal(err)
	}
	for _, e := range entries {
		if e.Name() != focusFile {
			t.Errorf("left behind in the script directory: %s", e.Name())
		}
	}
}

// A handle is data: anything but a UUID in braces never reaches KWin.
func TestGuardRefusesHandlesThatAreNotKWinsIDs(t *testing.T) {
	p := startPlasma(t)
	ctx, cancel := context.WithTimeout(context.Background(), wait)
	defer cancel()
	for _, h := range []string{"", "0x1a00003", `{x"); workspace.activeWindow.closeWindow(); ("}`, "{00000000-0000-4000-8000-000000000000}\n", "00000000-0000-4000-8000-000000000000"} {
		for name, act := range map[string]func(context.Context, string) error{"minimize": p.guard.MinimizeWindow, "activate": p.guard.ActivateWindow} {
			if err := act(ctx, h); err == nil || !strings.Contains(err.Error(), "not a KWin window handle") {
				t.Errorf("%s %q: %v", name, h, err)
			}
		}
	}
}

// Only the KWin script that was loaded can report an outcome: a forger on
// the bus is refused, whatever token it tries.
func TestGuardOutcomesAreBelievedOnlyFromKWin(t *testing.T) {
	p := startPlasma(t)
	g := p.guard
	token, outcome, err := g.expect(":1.9999")
	if err != nil {
		t.Fatal(err)
	}
	defer g.forget(token)
	for _, tok := range []string{token, "nonsense"} {
		_, err := p.bus.Run(t, "gdbus", "call", "--session", "--dest", "org.antidrift", "--object-path", string(outcomePath),
			"--method", outcomeIface+".Done", tok, outMinimized)
		if err == nil || !strings.Contains(err.Error(), "org.antidrift.Error.AccessDenied") {
			t.Fatalf("a forged Done with token %q: %v", tok, err)
		}
	}
	select {
	case out := <-outcome:
		t.Fatalf("a forged outcome reached the waiting call: %q", out)
	default:
	}
}
