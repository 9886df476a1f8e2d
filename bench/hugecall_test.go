package bench

import (
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/godbus/dbus/v5"

	"github.com/antidrift/antidrift/internal/testsupport/testenv"
)

// hugeCalls is how many 60 MiB calls BenchmarkGetAllBesideAHugeCall
// sends, one after the other.
const hugeCalls = 3

// BenchmarkGetAllBesideAHugeCall is issue #19's attack, timed: on the
// stock session bus (max_message_size 1000000000), while one client reads
// GetAll in a loop, another sends hugeCalls calls of 60 MiB each (Allow
// with a 60 MiB string), which the daemon refuses with LimitsExceeded
// without reading them. Figures: the worst GetAll round trip of the reader
// while the huge calls are on their way (goal ≤ 250 ms), how long each
// huge call took to be refused, and GetAll's p50 before and after them
// (libdbus client, as BenchmarkGetAllPeers: goal, after within 1.5× of
// before), and the daemon's resident memory after. Beside the reader,
// another reads the bus's own GetId the same way: what the bus itself
// makes every client wait while it takes in and relays 60 MiB, which no
// service on it can undercut.
//
// With ANTIDRIFT_BENCH_GCTRACE=1 the daemon runs with GODEBUG=gctrace=1
// and its collector's lines during the run are logged: whether what
// follows the attack is the collector's doing.
func BenchmarkGetAllBesideAHugeCall(b *testing.B) {
	testenv.Need(b, "dbus-daemon", "python3")
	bus := testenv.StartStockSessionBus(b)
	var env []string
	trace := os.Getenv("ANTIDRIFT_BENCH_GCTRACE") == "1"
	if trace {
		env = append(env, "GODEBUG=gctrace=1")
	}
	d := testenv.StartDaemon(b, bus, filepath.Join(b.TempDir(), "state"), env...)
	conn := bus.Dial(b)
	obj := conn.Object("org.antidrift", "/org/antidrift/Session1")
	if err := obj.Call("org.antidrift.Session1.Start", 0, "sit still", "nothing moved", uint64(4*3600), "block", []string{"Editor"}).Err; err != nil {
		b.Fatal(err)
	}
	getAll := []string{"org.antidrift", "/org/antidrift/Session1", "org.freedesktop.DBus.Properties", "GetAll", "org.antidrift.Session1"}
	huge := strings.Repeat("A", 60<<20)
	attacker := bus.Dial(b).Object("org.antidrift", "/org/antidrift/Session1")

	var before, after, during, busDuring, refusals dist
	for b.Loop() {
		before = libdbusCalls(b, bus, getAllCalls, getAll...)
		during, busDuring, refusals = nil, nil, nil
		stop := make(chan struct{})
		var wg sync.WaitGroup
		// read calls method on o in a loop until stop, keeping each round trip.
		read := func(o dbus.BusObject, into *dist, method string, args ...any) {
			defer wg.Done()
			for {
				select {
				case <-stop:
					return
				default:
				}
				start := time.Now()
				if err := o.Call(method, 0, args...).Err; err != nil {
					b.Errorf("%s beside the huge call: %v", method, err)
					return
				}
				*into = append(*into, time.Since(start))
			}
		}
		wg.Add(2)
		go read(obj, &during, "org.freedesktop.DBus.Properties.GetAll", "org.antidrift.Session1")
		go read(bus.Dial(b).BusObject(), &busDuring, "org.freedesktop.DBus.GetId")
		for range hugeCalls {
			start := time.Now()
			err := attacker.Call("org.antidrift.Session1.Allow", 0, huge).Err
			if e, ok := err.(dbus.Error); !ok || e.Name != "org.freedesktop.DBus.Error.LimitsExceeded" {
				b.Fatalf("a 60 MiB Allow: %v; want LimitsExceeded", err)
			}
			refusals = append(refusals, time.Since(start))
		}
		close(stop)
		wg.Wait()
		after = libdbusCalls(b, bus, getAllCalls, getAll...)
	}
	b.ReportMetric(float64(len(during)), "getall_calls_during")
	b.ReportMetric(float64(during.pct(100))/float64(time.Millisecond), "worst_getall_during_ms")
	b.ReportMetric(float64(busDuring.pct(100))/float64(time.Millisecond), "worst_getid_during_ms")
	b.ReportMetric(float64(refusals.pct(50))/float64(time.Millisecond), "huge_call_refused_p50_ms")
	b.ReportMetric(us(before.pct(50)), "before_p50_us")
	b.ReportMetric(us(after.pct(50)), "after_p50_us")
	b.ReportMetric(ratio(after.pct(50), before.pct(50)), "after_over_before")
	if st, err := procStatus(fmt.Sprintf("/proc/%d/status", d.PID())); err == nil {
		b.ReportMetric(float64(st["VmRSS"]), "daemon_rss_after_kB")
		b.ReportMetric(float64(st["VmHWM"]), "daemon_rss_peak_kB")
	}
	if trace {
		for _, line := range strings.Split(d.Output(), "\n") {
			if strings.HasPrefix(line, "gc ") {
				b.Log(line)
			}
		}
	}
}
