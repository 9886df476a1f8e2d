package bench

import (
	"errors"
	"fmt"
	"os/exec"
	"path/filepath"
	"runtime"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/godbus/dbus/v5"

	"github.com/antidrift/antidrift/internal/testsupport/testenv"
)

// GetAllPeers' shape: per run, this many sequential calls of each target;
// the figures are the median over the runs of each run's percentile.
const (
	getAllCalls = 1000
	getAllRuns  = 3
)

// BenchmarkGetAllPeers sets the real daemon's GetAll beside a peer that
// answers the same question about its own timer: gnome-pomodoro (0.27,
// from the Debian 13 rootfs, as GNOME users run it with
// gnome-shell-pomodoro), whose org.gnome.Pomodoro properties a panel reads
// with GetAll too. Under them, three floors: the daemon's own
// org.freedesktop.DBus.Peer.Ping, which godbus answers itself before any
// of antidrift's code runs (the least a call to the daemon costs: the
// library's floor); dbus-test-tool echo, the smallest service there is (C,
// libdbus, one thread, an empty reply), so the least any service pays for
// a call through the bus; and the bus's own org.freedesktop.DBus.GetId,
// which dbus-daemon answers itself (one hop each way, no service at all).
//
// All five are on one private bus and timed by the same client, libdbus
// (testdata/libdbus_calls.py: python3 + ctypes, each call a fresh message
// sent with dbus_connection_send_with_reply_and_block), so the clients'
// costs are alike and only the service differs. Each run makes
// getAllCalls sequential calls of each target in turn, the order rotated
// from run to run, so noise on the shared machine falls on all of them;
// the figures are the median of the getAllRuns runs' p50 and p99.
//
// antidriftd holds an active session (GetAll then carries live buckets)
// and gnome-pomodoro a running pomodoro, so both answer mid-session.
//
// The peers need the rootfs (root); gnome-pomodoro also an X display (it
// is a GTK 3 application and exits without one). When a peer cannot run,
// its column is skipped, logged with the reason and marked by the metric
// <name>_skipped = 1; the others are still measured. That holds with
// ANTIDRIFT_E2E=require too: the peers are not what the suite tests, and
// the skip is in the report.
func BenchmarkGetAllPeers(b *testing.B) {
	testenv.Need(b, "dbus-daemon", "python3")
	bus := testenv.StartBus(b)
	testenv.StartDaemon(b, bus, filepath.Join(b.TempDir(), "state"))
	conn := bus.Dial(b)
	var id string
	if err := conn.Object("org.antidrift", "/org/antidrift/Session1").Call("org.antidrift.Session1.Start", 0,
		"sit still", "nothing moved", uint64(4*3600), "block", []string{"Editor"}).Store(&id); err != nil {
		b.Fatal(err)
	}

	const props = "org.freedesktop.DBus.Properties"
	// What setting up finds, reported after the loop: b.Loop drops the
	// metrics reported before it.
	found := map[string]float64{}
	var targets []getAllTarget
	for _, tg := range []getAllTarget{
		{name: "antidrift", call: []string{"org.antidrift", "/org/antidrift/Session1", props, "GetAll", "org.antidrift.Session1"}},
		{name: "pomodoro", call: []string{"org.gnome.Pomodoro", "/org/gnome/Pomodoro", props, "GetAll", "org.gnome.Pomodoro"},
			start: func(t testing.TB) { startPomodoro(t, bus, conn) }},
		{name: "echo", call: []string{echoName, "/", props, "GetAll", echoName},
			start: func(t testing.TB) { startEcho(t, bus) }},
		{name: "ping", call: []string{"org.antidrift", "/org/antidrift/Session1", "org.freedesktop.DBus.Peer", "Ping"}},
		{name: "getid", call: []string{"org.freedesktop.DBus", "/org/freedesktop/DBus", "org.freedesktop.DBus", "GetId"}},
	} {
		if tg.start != nil {
			if skipped := soft(b, tg.start); skipped != "" {
				// One line for the report (benchreport quotes it), then the rest.
				why, detail, _ := strings.Cut(skipped, "\n")
				b.Logf("%s column skipped: %s", tg.name, strings.TrimSuffix(why, ":"))
				if detail != "" {
					b.Log(detail)
				}
				found[tg.name+"_skipped"] = 1
				continue
			}
		}
		targets = append(targets, tg)
	}

	p50, p99 := map[string]dist{}, map[string]dist{}
	for b.Loop() {
		p50, p99 = map[string]dist{}, map[string]dist{}
		for run := range getAllRuns {
			var line []string
			for i := range targets {
				tg := targets[(run+i)%len(targets)]
				d := libdbusCalls(b, bus, getAllCalls, tg.call...)
				p50[tg.name] = append(p50[tg.name], d.pct(50))
				p99[tg.name] = append(p99[tg.name], d.pct(99))
				line = append(line, fmt.Sprintf("%s p50 %.1f µs, p99 %.1f µs", tg.name, us(d.pct(50)), us(d.pct(99))))
			}
			b.Logf("run %d: %s", run+1, strings.Join(line, "; "))
		}
	}
	b.ReportMetric(getAllCalls, "calls")
	b.ReportMetric(getAllRuns, "runs")
	for unit, v := range found {
		b.ReportMetric(v, unit)
	}
	for _, tg := range targets {
		b.ReportMetric(us(p50[tg.name].pct(50)), tg.name+"_p50_us")
		b.ReportMetric(us(p99[tg.name].pct(50)), tg.name+"_p99_us")
	}
	b.ReportMetric(ratio(p50["antidrift"].pct(50), p50["ping"].pct(50)), "antidrift_over_ping")
	if p50["pomodoro"] != nil {
		for _, name := range []string{"antidrift", "ping", "echo"} {
			if p50[name] != nil {
				b.ReportMetric(ratio(p50[name].pct(50), p50["pomodoro"].pct(50)), name+"_over_pomodoro")
			}
		}
	}
}

// getAllTarget is one column of BenchmarkGetAllPeers: its metric prefix
// and the call, as libdbus_calls.py takes it (DEST PATH INTERFACE METHOD
// [STRING_ARG]).
type getAllTarget struct {
	name  string
	call  []string
	start func(testing.TB) // starts the peer; nil for those always there
}

// echoName is the bus name of the floor service, dbus-test-tool echo.
const echoName = "org.antidrift.BenchEcho"

// startEcho starts the smallest service there is on bus: dbus-test-tool
// echo from the rootfs (libdbus, one thread, C), which answers every call
// with an empty reply. Its column is the floor any service answering a
// call on this bus and machine can reach. It is stopped at cleanup.
func startEcho(t testing.TB, bus *testenv.Bus) {
	r := testenv.NeedRootfs(t)
	env := []string{"DBUS_SESSION_BUS_ADDRESS=" + bus.Address}
	p := r.Start(t, r.TempDir(t), 0, env, "dbus-test-tool", "echo", "--name="+echoName)
	waitOwner(t, bus, echoName, p.PID(), func() {
		if p.Exited() {
			t.Fatalf("dbus-test-tool echo exited before owning %s\n%s", echoName, p.Output())
		}
	})
}

// startPomodoro starts gnome-pomodoro from the rootfs on bus, on an Xvfb
// of its own, with a home, settings in memory and no accessibility bus;
// waits until it owns org.gnome.Pomodoro; checks that GetAll answers with
// its timer's properties; and starts a pomodoro. It runs as root, as the
// bus's other clients do (the bus admits only its own uid). It is stopped
// at cleanup.
func startPomodoro(t testing.TB, bus *testenv.Bus, conn *dbus.Conn) {
	r := testenv.NeedRootfs(t)
	x := testenv.StartX(t)
	dir := r.TempDir(t)
	env := []string{
		"DBUS_SESSION_BUS_ADDRESS=" + bus.Address,
		"DISPLAY=" + x.Name, // its socket is under /tmp/.X11-unix, bound into the rootfs
		"HOME=" + dir,
		"XDG_CONFIG_HOME=" + filepath.Join(dir, ".config"),
		"XDG_DATA_HOME=" + filepath.Join(dir, ".local", "share"),
		"XDG_CACHE_HOME=" + filepath.Join(dir, ".cache"),
		"XDG_RUNTIME_DIR=" + dir,
		"GSETTINGS_BACKEND=memory",
		"NO_AT_BRIDGE=1",
	}
	p := r.Start(t, dir, 0, env, "gnome-pomodoro", "--no-default-window")
	waitOwner(t, bus, "org.gnome.Pomodoro", p.PID(), func() {
		if p.Exited() {
			t.Fatalf("gnome-pomodoro exited before owning org.gnome.Pomodoro\n%s", p.Output())
		}
	})
	obj := conn.Object("org.gnome.Pomodoro", "/org/gnome/Pomodoro")
	if err := obj.Call("org.gnome.Pomodoro.Start", 0).Err; err != nil {
		t.Fatalf("org.gnome.Pomodoro.Start: %v", err)
	}
	var all map[string]dbus.Variant
	testenv.WaitForValue(t, 10*time.Second, "gnome-pomodoro's State", "pomodoro", func() string {
		if err := obj.Call("org.freedesktop.DBus.Properties.GetAll", 0, "org.gnome.Pomodoro").Store(&all); err != nil {
			return "unread: " + err.Error()
		}
		return fmt.Sprint(all["State"].Value())
	})
	t.Logf("gnome-pomodoro %v, pid %d, on %s: GetAll(org.gnome.Pomodoro) = %v", all["Version"].Value(), p.PID(), x.Name, all)
}

// libdbusCalls makes n sequential calls on bus with the libdbus client
// (testdata/libdbus_calls.py; call is DEST PATH INTERFACE METHOD
// [STRING_ARG]) and returns their round trips.
func libdbusCalls(b *testing.B, bus *testenv.Bus, n int, call ...string) dist {
	b.Helper()
	args := append([]string{filepath.Join("testdata", "libdbus_calls.py"), bus.Address, strconv.Itoa(n)}, call...)
	out, err := exec.Command("python3", args...).Output()
	if err != nil {
		var ee *exec.ExitError
		if errors.As(err, &ee) {
			err = fmt.Errorf("%w: %s", err, strings.TrimSpace(string(ee.Stderr)))
		}
		b.Fatalf("libdbus_calls.py %s: %v", strings.Join(call, " "), err)
	}
	var d dist
	for _, f := range strings.Fields(string(out)) {
		ns, err := strconv.ParseInt(f, 10, 64)
		if err != nil {
			b.Fatalf("libdbus_calls.py %s: got %q, want a latency in ns", strings.Join(call, " "), f)
		}
		d = append(d, time.Duration(ns))
	}
	if len(d) != n {
		b.Fatalf("libdbus_calls.py %s: %d latencies, want %d", strings.Join(call, " "), len(d), n)
	}
	return d
}

func us(d time.Duration) float64 { return float64(d) / float64(time.Microsecond) }

// soft runs f, which starts an optional part of a benchmark with testenv's
// helpers, and returns why it stopped short: a Skip or Fatal inside f
// (a tool or the rootfs missing, a program that did not start) ends f
// alone and becomes the returned reason, instead of skipping or failing
// the whole benchmark. "" means f ran to the end. What f starts is stopped
// at tb's cleanup, as usual.
func soft(tb testing.TB, f func(testing.TB)) string {
	s := &softTB{TB: tb}
	done := make(chan struct{})
	go func() {
		defer close(done)
		f(s)
	}()
	<-done
	return s.why
}

// softTB is the testing.TB soft hands f: its failures and skips record the
// reason and end f's goroutine; everything else is tb's.
type softTB struct {
	testing.TB
	why string
}

func (s *softTB) stop(why string) {
	if s.why == "" {
		s.why = why
	}
	runtime.Goexit()
}

func (s *softTB) Error(args ...any)                 { s.Fatal(args...) }
func (s *softTB) Errorf(format string, args ...any) { s.Fatalf(format, args...) }
func (s *softTB) Fail()                             { s.stop("failed") }
func (s *softTB) FailNow()                          { s.stop("failed") }
func (s *softTB) Fatal(args ...any)                 { s.stop(fmt.Sprint(args...)) }
func (s *softTB) Fatalf(format string, args ...any) { s.stop(fmt.Sprintf(format, args...)) }
func (s *softTB) Skip(args ...any)                  { s.stop(fmt.Sprint(args...)) }
func (s *softTB) Skipf(format string, args ...any)  { s.stop(fmt.Sprintf(format, args...)) }
func (s *softTB) SkipNow()                          { s.stop("skipped") }
func (s *softTB) Failed() bool                      { return s.why != "" || s.TB.Failed() }
func (s *softTB) Skipped() bool                     { return s.why != "" || s.TB.Skipped() }
