package kwin

import (
	"context"
	"fmt"
	"log/slog"
	"os"
	"path/filepath"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/godbus/dbus/v5"

	"github.com/antidrift/antidrift/internal/testsupport/testenv"
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

func startPlasma(t *testing.T, rel testenv.Release) *plasma {
	t.Helper()
	r := testenv.NeedKWinRootfs(t, rel)
	testenv.Need(t, "dbus-daemon", "gdbus")
	p := &plasma{bus: testenv.StartBus(t)}
	p.kwin = testenv.StartKWin(t, r, p.bus)
	p.conn = p.bus.Dial(t)
	logger := slog.New(slog.NewTextHandler(testWriter{t}, &slog.HandlerOptions{Level: slog.LevelDebug}))
	sensor := NewSensor(p.conn, p.kwin.RuntimeDir, logger)
	receiveReports(t, p.conn, sensor.Push)
	var err error
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

// receiveReports takes org.antidrift on conn and hands the focus reports
// KWin sends to org.antidrift.Evidence1 to push in the order each KWin
// sent them, as the daemon's gate does for KWin's connection (the gate
// itself is proven in dbusapi and, with KWin, in cmd/antidriftd).
func receiveReports(t *testing.T, conn *dbus.Conn, push func(handle, app, title string)) {
	t.Helper()
	var mu sync.Mutex
	newest := map[string]uint32{} // by sender: a restarted KWin numbers afresh
	reportFocus := func(msg dbus.Message, handle, appID, title string) *dbus.Error {
		sender, _ := msg.Headers[dbus.FieldSender].Value().(string)
		mu.Lock()
		defer mu.Unlock()
		if msg.Serial() > newest[sender] {
			newest[sender] = msg.Serial()
			push(handle, appID, title)
		}
		return nil
	}
	err := conn.ExportMethodTable(map[string]any{"ReportFocus": reportFocus}, "/org/antidrift/Session1", "org.antidrift.Evidence1")
	if err != nil {
		t.Fatal(err)
	}
	if reply, err := conn.RequestName("org.antidrift", dbus.NameFlagDoNotQueue); err != nil || reply != dbus.RequestNameReplyPrimaryOwner {
		t.Fatalf("taking org.antidrift: %v %v", reply, err)
	}
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
	testenv.WaitForWindow(t, wait, what, p.last, ok)
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

// scriptFiles lists the sensor's and the guard's script directory.
func (p *plasma) scriptFiles(t *testing.T) []string {
	t.Helper()
	entries, err := os.ReadDir(filepath.Join(p.kwin.RuntimeDir, "antidrift", "kwin"))
	if err != nil {
		t.Fatal(err)
	}
	var names []string
	for _, e := range entries {
		names = append(names, e.Name())
	}
	return names
}

type testWriter struct{ t *testing.T }

func (w testWriter) Write(b []byte) (int, error) {
	w.t.Log(strings.TrimSpace(string(b)))
	return len(b), nil
}
