package bench

import (
	"flag"
	"fmt"
	"math/rand/v2"
	"net"
	"os"
	"path/filepath"
	"testing"
	"time"

	"github.com/godbus/dbus/v5"

	"github.com/antidrift/antidrift/internal/testsupport/testenv"
	"github.com/antidrift/antidrift/wayland"
)

var shellSamples = flag.Int("shell-samples", 50, "focus changes per KWin and GNOME Shell latency benchmark")

// BenchmarkSwayFocus is BenchmarkFocusChange on sway 1.10 (headless, in the
// Debian 13 rootfs) with two foot windows and the real antidriftd, whose
// evidence = "auto" chooses the wlroots source (foreign-toplevel):
//
//   - switch: the benchmark sends "[app_id=…] focus" over its own
//     connection to sway's IPC socket, t0 just before the write; the
//     daemon's figure is when a godbus client has the PropertiesChanged
//     naming the window, the floor's when `swaymsg -t subscribe -m
//     '["window"]'` (a client of sway's own event stream, in the rootfs)
//     has printed the focus event. The 1 Hz poller is the model only: the
//     wait from t0 to the first tick after the floor saw the change, for
//     a poller at a random phase to each change.
//   - rss: the daemon's VmRSS once it announced the first window, and after
//     the samples.
//   - idle: -idle of nothing happening, counted as BenchmarkIdle does,
//     beside floord holding a bus connection (it has no Wayland client).
func BenchmarkSwayFocus(b *testing.B) {
	testenv.Need(b, "dbus-daemon")
	sw := testenv.StartSway(b)
	apps := [2]string{"BenchA", "BenchB"}
	sw.Foot(b, apps[0], "bench window A")
	sw.Foot(b, apps[1], "bench window B")
	ipc := dialSway(b, sw.SwaySock)
	testenv.WaitFor(b, 30*time.Second, "both foot windows to take focus", func() error {
		if err := ipc.focus(apps[1]); err != nil {
			return err
		}
		return ipc.focus(apps[0])
	}, func(err error) bool { return err == nil })
	// swaymsg flushes its stdout after each event (stdbuf only makes sure
	// of it) and prints nothing for the subscription itself: it listens
	// once it has printed a focus change.
	floor := spyOn(b, sw.Command("stdbuf", "-oL", "swaymsg", "-r", "-m", "-t", "subscribe", `["window"]`),
		`"change": "focus".*?"app_id": "([^"]*)"`, false)
	tries := 0
	testenv.WaitUntil(b, 30*time.Second, "swaymsg -t subscribe to print a focus change", func() bool {
		tries++
		if err := ipc.focus(apps[tries%2]); err != nil {
			b.Fatal(err)
		}
		time.Sleep(100 * time.Millisecond)
		return len(floor) > 0
	})
	if err := ipc.focus(apps[0]); err != nil {
		b.Fatal(err)
	}

	bus := testenv.StartBus(b)
	_, daemon := subscribeDaemon(b, bus.Address)
	d := testenv.StartDaemon(b, bus, filepath.Join(b.TempDir(), "state"),
		"WAYLAND_DISPLAY="+sw.Display, "XDG_RUNTIME_DIR="+sw.RuntimeDir, "SWAYSOCK="+sw.SwaySock)
	awaitDaemon(b, daemon, d.Output, time.Time{}, apps[0], "", 30*time.Second)
	rssStart := rssMB(b, d.PID())
	changes := 0

	b.Run("switch", func(b *testing.B) {
		time.Sleep(200 * time.Millisecond)
		drain(daemon, floor)
		n := *focusSamples
		if n%2 == 1 {
			n++ // end on window 0
		}
		var ours, theirs, over, model dist
		var cpu time.Duration
		for b.Loop() {
			ours, theirs, over, model = nil, nil, nil, nil
			cpu0 := cpuTime(b, d.PID())
			for i := range n {
				app := apps[(i+1)%2]
				t0 := time.Now()
				if err := ipc.focus(app); err != nil {
					b.Fatal(err)
				}
				changes++
				td := awaitDaemon(b, daemon, d.Output, t0, app, "", 10*time.Second)
				tf := expect(b, "swaymsg -t subscribe", floor, t0, app, 10*time.Second)
				ours, theirs, over = append(ours, td.Sub(t0)), append(theirs, tf.Sub(t0)), append(over, td.Sub(tf))
				// A 1 Hz poller at a random phase to the change sees it
				// at its first tick after the floor did.
				p := &poller{start: t0.Add(-time.Duration(rand.Int64N(int64(time.Second)))), period: time.Second}
				model = append(model, p.nextTick(tf).Sub(t0))
			}
			cpu = cpuTime(b, d.PID()) - cpu0
		}
		reportChanges(b, len(ours), cpu)
		reportDist(b, "antidriftd", ours)
		reportDist(b, "swaymsg", theirs)
		b.ReportMetric(ms(ours.pct(50)-theirs.pct(50)), "antidriftd-swaymsg_p50_ms")
		b.ReportMetric(ms(over.pct(50)), "over_swaymsg_per_change_p50_ms")
		b.ReportMetric(ms(model.pct(50)), "poll1Hz_model_p50_ms")
		b.ReportMetric(ratio(model.pct(50), ours.pct(50)), "poll1Hz_model/antidriftd_p50")
	})
	b.Run("rss", func(b *testing.B) {
		after := rssMB(b, d.PID())
		for b.Loop() {
		}
		b.ReportMetric(rssStart, "start_MB")
		b.ReportMetric(after, "after_MB")
		b.ReportMetric(float64(changes), "events_seen")
	})
	b.Run("idle", func(b *testing.B) { idle(b, d.PID(), startFloord(b, bus, "DISPLAY=")) })
}

// swayConn is the benchmark's own connection to sway's IPC socket, for
// commands timed from the moment they are written.
type swayConn struct{ c net.Conn }

func dialSway(b testing.TB, path string) swayConn {
	c, err := net.Dial("unix", path)
	if err != nil {
		b.Fatal(err)
	}
	b.Cleanup(func() { c.Close() })
	return swayConn{c}
}

// focus focuses the window with app id app and waits for sway's reply.
func (s swayConn) focus(app string) error {
	const runCommand = 0
	s.c.SetDeadline(time.Now().Add(10 * time.Second))
	if _, err := s.c.Write(wayland.SwayRequest(runCommand, fmt.Sprintf("[app_id=%s] focus", app))); err != nil {
		return err
	}
	reply, err := wayland.ReadSwayReply(s.c, runCommand)
	if err != nil {
		return err
	}
	if string(reply) != `[ { "success": true } ]` && string(reply) != `[{"success":true}]` {
		return fmt.Errorf("sway: got %s, want success", reply)
	}
	return nil
}

// shellFocus is the focus latency on a compositor whose own code reports
// focus to the daemon (KWin's script, GNOME Shell's extension): activate
// makes window i of apps active; t0 is taken just before. Beside the
// daemon's PropertiesChanged at a client, a monitor on the bus stamps the
// report (org.antidrift.Evidence1.ReportFocus) as the bus routes it, which
// splits the figure into the compositor's hop (t0 → report) and the
// daemon's (report → PropertiesChanged).
func shellFocus(b *testing.B, address string, daemon chan stamped, output func() string, pid int,
	apps [2]string, activate func(i int)) {
	reports := watchReports(b, address)
	time.Sleep(200 * time.Millisecond)
	drain(daemon, reports)
	n := *shellSamples
	if n%2 == 1 {
		n++
	}
	var ours, hop, share dist
	var cpu time.Duration
	for b.Loop() {
		ours, hop, share = nil, nil, nil
		cpu0 := cpuTime(b, pid)
		for i := range n {
			target := (i + 1) % 2
			t0 := time.Now()
			activate(target)
			td := awaitDaemon(b, daemon, output, t0, apps[target], "", 10*time.Second)
			tr := expect(b, "the bus monitor", reports, t0, apps[target], 10*time.Second)
			ours, hop, share = append(ours, td.Sub(t0)), append(hop, tr.Sub(t0)), append(share, td.Sub(tr))
		}
		cpu = cpuTime(b, pid) - cpu0
	}
	reportChanges(b, len(ours), cpu)
	reportDist(b, "antidriftd", ours)
	reportDist(b, "report", hop)
	reportDist(b, "report-to-signal", share)
}

// watchReports stamps every ReportFocus call on the bus at address with
// its app id, from a monitor connection (BecomeMonitor).
func watchReports(b *testing.B, address string) chan stamped {
	conn, err := dbus.Connect(address)
	if err != nil {
		b.Fatal(err)
	}
	b.Cleanup(func() { conn.Close() })
	// Once eavesdropping, godbus hands every message to msgs, the reply to
	// BecomeMonitor too: so no reply is asked for, and the NameLost the bus
	// sends a connection as it becomes a monitor says it is one.
	msgs := make(chan *dbus.Message, 1<<12)
	conn.Eavesdrop(msgs)
	rule := "type='method_call',interface='org.antidrift.Evidence1',member='ReportFocus'"
	if err := conn.BusObject().Call("org.freedesktop.DBus.Monitoring.BecomeMonitor", dbus.FlagNoReplyExpected, []string{rule}, uint32(0)).Err; err != nil {
		b.Fatalf("becoming a monitor of the bus: %v", err)
	}
	for monitoring := false; !monitoring; {
		select {
		case m := <-msgs:
			member, _ := m.Headers[dbus.FieldMember].Value().(string)
			monitoring = member == "NameLost"
		case <-time.After(10 * time.Second):
			b.Fatal("the bus never made the benchmark's connection a monitor")
		}
	}
	out := make(chan stamped, 1<<12)
	go func() {
		for m := range msgs {
			at := time.Now()
			if len(m.Body) >= 2 {
				if app, ok := m.Body[1].(string); ok {
					out <- stamped{at, app}
				}
			}
		}
	}()
	return out
}

// BenchmarkKWinFocus is the focus latency on KWin 6 (headless, in the
// rootfs) with two GTK windows and the real daemon, evidence "auto" (which
// chooses kwin: the script the daemon loads into KWin reports focus over
// the bus). Focus changes through testenv.KWin.Activate, a one-shot script
// that sets workspace.activeWindow, so t0 → report includes loading and
// starting that script.
func BenchmarkKWinFocus(b *testing.B) {
	r := testenv.NeedRootfs(b)
	testenv.Need(b, "dbus-daemon")
	bus := testenv.StartBus(b)
	kw := testenv.StartKWin(b, r, bus)
	apps := [2]string{"org.antidrift.BenchA", "org.antidrift.BenchB"}
	wb := kw.Window(b, apps[1], "bench window B")
	wins := [2]*testenv.Window{kw.Window(b, apps[0], "bench window A"), wb}
	kw.Activate(b, wins[0])
	_, daemon := subscribeDaemon(b, bus.Address)
	d := testenv.StartDaemon(b, bus, filepath.Join(b.TempDir(), "state"),
		"WAYLAND_DISPLAY="+kw.Socket, "XDG_RUNTIME_DIR="+kw.RuntimeDir)
	awaitDaemon(b, daemon, d.Output, time.Time{}, apps[0], "", 30*time.Second)
	b.Run("switch", func(b *testing.B) {
		shellFocus(b, bus.Address, daemon, d.Output, d.PID(), apps, func(i int) { kw.Activate(b, wins[i]) })
	})
}

// BenchmarkGnomeFocus is the focus latency on GNOME Shell 48 (headless, in
// the rootfs) with antidrift's extension, two GTK windows and the real
// daemon running as the Shell's user, evidence "auto" (which chooses
// gnome-shell: the extension reports focus over the bus). Focus changes
// through Eval of Main.activateWindow, so t0 → report includes that call.
func BenchmarkGnomeFocus(b *testing.B) {
	g := testenv.StartGnomeShell(b, testenv.AntidriftExtensionDir())
	apps := [2]string{"org.antidrift.BenchA", "org.antidrift.BenchB"}
	g.OpenWindow(b, apps[1], "bench window B")
	g.OpenWindow(b, apps[0], "bench window A")
	bin := testenv.Binary(b, "antidriftd")
	// The built binary's directory is private to root; the daemon runs as
	// the Shell's user, as in cmd/antidriftd's GNOME tests.
	if err := os.Chmod(filepath.Dir(bin), 0o755); err != nil {
		b.Fatal(err)
	}
	dir := g.Rootfs.TempDir(b)
	if err := os.Chown(dir, testenv.ShellUID, testenv.ShellUID); err != nil {
		b.Fatal(err)
	}
	_, daemon := subscribeDaemon(b, g.Bus.Address)
	p := g.StartProgram(b, nil, bin, "--state-dir", filepath.Join(dir, "state"))
	awaitDaemon(b, daemon, p.Output, time.Time{}, apps[0], "", 60*time.Second)
	b.Run("switch", func(b *testing.B) {
		shellFocus(b, g.Bus.Address, daemon, p.Output, p.PID(), apps, func(i int) {
			js := fmt.Sprintf("Main.activateWindow(global.get_window_actors().map(a => a.meta_window).find(w => w.get_wm_class() === %q))", apps[i])
			if _, err := g.Eval(js); err != nil {
				b.Fatal(err)
			}
		})
	})
}
