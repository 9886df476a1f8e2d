package bench

import (
	"context"
	"log/slog"
	"testing"

	"github.com/antidrift/antidrift/dbusapi"
	"github.com/antidrift/antidrift/internal/busconn"
	"github.com/antidrift/antidrift/internal/testsupport/testenv"
	"github.com/antidrift/antidrift/persist"
	"github.com/antidrift/antidrift/service"
	"github.com/antidrift/antidrift/x11"
)

// BenchmarkFocusChangeInProcess is BenchmarkFocusChange with the daemon's
// parts wired in this process the way cmd/antidriftd's Main wires them
// (persist, service, dbusapi on its own bus connection, the x11 sensor, and
// a second listener that renders the View like the sd_notify one), so that
// go test -cpuprofile sees the daemon's code. Its latencies are not the
// figures (the client and the daemon share a process and two cores);
// its profile explains them.
func BenchmarkFocusChangeInProcess(b *testing.B) {
	testenv.Need(b, "dbus-daemon", "Xvfb", "openbox", "xterm", "xdotool", "xprop")
	k := startDesk(b, true)
	k.noPoller = true // no figure here: skip the slow samples
	b.Run("title/state=locked", func(b *testing.B) { k.measure(b, modeTitle) })
	k.startSession(b)
	b.Run("title/state=active", func(b *testing.B) { k.measure(b, modeTitle) })
	b.Run("switch/state=active", func(b *testing.B) { k.measure(b, modeSwitch) })
}

// viewListener renders the View on every change, as the daemon's sd_notify
// listener does for its STATUS= line.
type viewListener struct{ svc *service.Service }

func (l viewListener) Changed()                                     { l.svc.View() }
func (l viewListener) SessionEnded(string, service.Outcome, string) {}
func (l viewListener) Nudged(string, string)                        {}

func startInProcess(b *testing.B, busAddr, display, stateDir string) {
	b.Helper()
	store, _, err := persist.Open(stateDir)
	if err != nil {
		b.Fatal(err)
	}
	snap, _, _, err := store.LoadSnapshot()
	if err != nil {
		b.Fatal(err)
	}
	log := slog.New(slog.DiscardHandler)
	conn, err := busconn.Connect(busAddr, log)
	if err != nil {
		b.Fatal(err)
	}
	svc := service.New(service.Options{Store: store, Logger: log, Guard: x11.NewGuard(display, log)})
	if err := svc.Recover(snap); err != nil {
		b.Fatal(err)
	}
	svc.AddListener(viewListener{svc})
	if _, err := dbusapi.Serve(conn, svc, log); err != nil {
		b.Fatal(err)
	}
	ctx, cancel := context.WithCancel(context.Background())
	done := make(chan struct{})
	go func() {
		defer close(done)
		x11.NewSensor(display, log).Run(ctx, svc.RecordWindow)
	}()
	b.Cleanup(func() {
		cancel()
		<-done
		svc.Shutdown()
		conn.Close()
		store.Close()
	})
}
