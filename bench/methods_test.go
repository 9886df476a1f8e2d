package bench

import (
	"os"
	"os/exec"
	"path/filepath"
	"syscall"
	"testing"
	"time"

	"github.com/godbus/dbus/v5"

	"github.com/antidrift/antidrift/internal/testsupport/testenv"
)

// BenchmarkMethodRoundTrip calls the real daemon over a private bus at
// -call-rate calls per second (a paced closed loop: each call is sent at
// its slot, or at once when the previous reply came after it) and reports
// the round trip of each call, send to reply, as a godbus client sees it.
//
//   - GetAll: org.freedesktop.DBus.Properties.GetAll, no disk.
//   - floord-Ping: the floor under GetAll, a no-op method of floord
//     (bench/internal/floord: godbus, the same runtime, no antidrift code).
//   - cycle: Start, Complete, End, Start, ...; every one is a transition,
//     made durable (state.json replaced with fsync + rename + directory
//     fsync; the raw log created and fsynced; End appends to the audit
//     chain) before the reply. Measured with the state directory on the
//     disk the benchmarks run on and, to separate the disk from the code,
//     on tmpfs (/dev/shm), where fsync returns at once.
//   - fsync: the floor under cycle/disk: write 200 B to a file in the same
//     directory and fsync it, paced the same way.
func BenchmarkMethodRoundTrip(b *testing.B) {
	testenv.Need(b, "dbus-daemon")
	disk := filepath.Join(b.TempDir(), "state")
	shm, err := os.MkdirTemp("/dev/shm", "antidrift-bench-")
	if err != nil {
		b.Fatal(err)
	}
	b.Cleanup(func() { os.RemoveAll(shm) })

	bus := testenv.StartBus(b)
	d := testenv.StartDaemon(b, bus, disk)
	conn, err := dbus.Connect(bus.Address)
	if err != nil {
		b.Fatal(err)
	}
	b.Cleanup(func() { conn.Close() })
	obj := conn.Object("org.antidrift", "/org/antidrift/Session1")

	b.Run("GetAll", func(b *testing.B) {
		paced(b, d.PID(), func(int) (string, error) {
			var props map[string]dbus.Variant
			return "GetAll", obj.Call("org.freedesktop.DBus.Properties.GetAll", 0, "org.antidrift.Session1").Store(&props)
		})
	})
	b.Run("floord-Ping", func(b *testing.B) {
		floor := exec.Command(floorBinary(b))
		floor.Env = bus.Env()
		floor.SysProcAttr = &syscall.SysProcAttr{Setpgid: true, Pdeathsig: syscall.SIGKILL}
		if err := floor.Start(); err != nil {
			b.Fatal(err)
		}
		defer func() { floor.Process.Signal(syscall.SIGTERM); floor.Wait() }()
		waitOwner(b, bus, "org.antidrift.BenchFloor", floor.Process.Pid, nil)
		fobj := conn.Object("org.antidrift.BenchFloor", "/org/antidrift/BenchFloor")
		paced(b, floor.Process.Pid, func(int) (string, error) {
			return "Ping", fobj.Call("org.antidrift.BenchFloor.Ping", 0).Err
		})
	})
	b.Run("cycle/disk", func(b *testing.B) { paced(b, d.PID(), cycle(obj)) })
	b.Run("fsync/disk", func(b *testing.B) {
		f, err := os.Create(filepath.Join(b.TempDir(), "floor"))
		if err != nil {
			b.Fatal(err)
		}
		defer f.Close()
		line := make([]byte, 200)
		paced(b, 0, func(int) (string, error) {
			if _, err := f.Write(line); err != nil {
				return "", err
			}
			return "fsync", f.Sync()
		})
	})
	d.Stop(b)

	bus2 := testenv.StartBus(b)
	d2 := testenv.StartDaemon(b, bus2, shm)
	conn2, err := dbus.Connect(bus2.Address)
	if err != nil {
		b.Fatal(err)
	}
	b.Cleanup(func() { conn2.Close() })
	obj2 := conn2.Object("org.antidrift", "/org/antidrift/Session1")
	b.Run("cycle/tmpfs", func(b *testing.B) { paced(b, d2.PID(), cycle(obj2)) })
}

// cycle returns the i-th call of Start, Complete, End, Start, ...
func cycle(obj dbus.BusObject) func(int) (string, error) {
	return func(i int) (string, error) {
		const iface = "org.antidrift.Session1."
		switch i % 3 {
		case 0:
			var id string
			return "Start", obj.Call(iface+"Start", 0, "benchmark the round trip", "p99 measured",
				uint64(3600), "observe", []string{"Editor"}).Store(&id)
		case 1:
			return "Complete", obj.Call(iface+"Complete", 0).Err
		default:
			var hash string
			return "End", obj.Call(iface+"End", 0).Store(&hash)
		}
	}
}

// paced runs -calls calls of call at -call-rate, and reports the latency
// percentiles overall and per method name. pid, when not 0, is the daemon
// whose CPU time per call is reported.
func paced(b *testing.B, pid int, call func(i int) (string, error)) {
	n := *calls
	n -= n % 3 // whole cycles
	interval := time.Second / time.Duration(*callsPerSec)
	var all dist
	per := map[string]dist{}
	var elapsed, cpu time.Duration
	for b.Loop() {
		all, per = nil, map[string]dist{}
		var cpu0 time.Duration
		if pid != 0 {
			cpu0 = cpuTime(b, pid)
		}
		start := time.Now()
		for i := range n {
			if wait := time.Until(start.Add(time.Duration(i) * interval)); wait > 0 {
				time.Sleep(wait)
			}
			t0 := time.Now()
			name, err := call(i)
			lat := time.Since(t0)
			if err != nil {
				b.Fatalf("call %d (%s): %v", i, name, err)
			}
			all = append(all, lat)
			per[name] = append(per[name], lat)
		}
		elapsed = time.Since(start)
		if pid != 0 {
			cpu = cpuTime(b, pid) - cpu0
		}
	}
	b.ReportMetric(float64(len(all)), "calls")
	b.ReportMetric(float64(len(all))/elapsed.Seconds(), "calls/s")
	b.ReportMetric(ms(all.pct(50)), "p50_ms")
	b.ReportMetric(ms(all.pct(99)), "p99_ms")
	b.ReportMetric(ms(all.pct(100)), "max_ms")
	if pid != 0 {
		b.ReportMetric(float64(cpu.Microseconds())/float64(len(all)), "antidriftd_cpu_us/call")
	}
	if len(per) > 1 {
		for name, d := range per {
			b.ReportMetric(ms(d.pct(50)), name+"_p50_ms")
			b.ReportMetric(ms(d.pct(99)), name+"_p99_ms")
		}
	}
}
