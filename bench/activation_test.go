package bench

import (
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/godbus/dbus/v5"

	"github.com/antidrift/antidrift/internal/testsupport/testenv"
)

// floorBinary builds ./internal/floord once per test process.
func floorBinary(b *testing.B) string {
	b.Helper()
	out := filepath.Join(b.TempDir(), "floord")
	cmd := exec.Command("go", "build", "-o", out, "./internal/floord")
	if msg, err := cmd.CombinedOutput(); err != nil {
		b.Fatalf("building floord: %v\n%s", err, msg)
	}
	return out
}

// noCgoDaemon builds antidriftd with CGO_ENABLED=0: a static binary that
// skips the dynamic loader and libc's start-up (the default build links
// libc because os/user and net have cgo variants).
func noCgoDaemon(b *testing.B) string {
	b.Helper()
	out := filepath.Join(b.TempDir(), "antidriftd-nocgo")
	cmd := exec.Command("go", "build", "-o", out, "github.com/antidrift/antidrift/cmd/antidriftd")
	cmd.Env = append(os.Environ(), "CGO_ENABLED=0")
	if msg, err := cmd.CombinedOutput(); err != nil {
		b.Fatalf("building antidriftd with CGO_ENABLED=0: %v\n%s", err, msg)
	}
	return out
}

// BenchmarkExecToNameOwned is bus activation of the built antidriftd: an
// activation file in the private bus's service directory, and the time from
// the activating call (StartServiceByName) to the NameOwnerChanged that
// says org.antidrift has an owner. Side by side, alternating with it, the
// same for floord (bench/internal/floord: connect, export, request a name),
// the floor of a Go service on this bus. Each sample then stops the service
// (SIGTERM) and waits until it is gone, so the next one is a fresh exec.
// The first sample of each is a discarded warm-up (cold page cache).
// The daemon's state directory persists across samples, as in real use,
// and it runs without an X display.
func BenchmarkExecToNameOwned(b *testing.B) {
	testenv.Need(b, "dbus-daemon")
	daemonBin := testenv.Binary(b, "antidriftd")
	floorBin := floorBinary(b)
	stateDir := filepath.Join(b.TempDir(), "state")
	shm, err := os.MkdirTemp("/dev/shm", "antidrift-bench-")
	if err != nil {
		b.Fatal(err)
	}
	b.Cleanup(func() { os.RemoveAll(shm) })
	bus := testenv.StartBus(b, "DISPLAY=", "XDG_CONFIG_HOME="+b.TempDir())
	// Four variants, one sample of each in turn: the daemon with its
	// state on disk, the same with its state on tmpfs (how much of the
	// start is the disk), the daemon built with CGO_ENABLED=0 (state on
	// disk), and floord. Both daemon variants own
	// org.antidrift, so its activation file is rewritten (and the bus told
	// to reload) before each, outside the measured time.
	variants := []struct{ name, bus, exec string }{
		{"antidriftd", "org.antidrift", daemonBin + " --state-dir " + stateDir},
		{"antidriftd_tmpfs", "org.antidrift", daemonBin + " --state-dir " + shm},
		{"antidriftd_nocgo", "org.antidrift", noCgoDaemon(b) + " --state-dir " + stateDir},
		{"floord", "org.antidrift.BenchFloor", floorBin},
	}
	install := func(name, exec string) {
		svc := fmt.Sprintf("[D-BUS Service]\nName=%s\nExec=%s\n", name, exec)
		if err := os.WriteFile(filepath.Join(bus.ServiceDir, name+".service"), []byte(svc), 0o644); err != nil {
			b.Fatal(err)
		}
	}
	conn, err := dbus.Connect(bus.Address)
	if err != nil {
		b.Fatal(err)
	}
	b.Cleanup(func() { conn.Close() })
	owners := make(chan stamped, 64)
	for _, name := range []string{"org.antidrift", "org.antidrift.BenchFloor"} {
		if err := conn.AddMatchSignal(dbus.WithMatchSender("org.freedesktop.DBus"), dbus.WithMatchMember("NameOwnerChanged"),
			dbus.WithMatchArg(0, name)); err != nil {
			b.Fatal(err)
		}
	}
	sigs := make(chan *dbus.Signal, 64)
	conn.Signal(sigs)
	go func() {
		for s := range sigs {
			at := time.Now()
			if s.Name == "org.freedesktop.DBus.NameOwnerChanged" && len(s.Body) == 3 {
				owners <- stamped{at, fmt.Sprintf("%v\x00%v", s.Body[0], s.Body[2])}
			}
		}
	}()

	got := map[string]dist{}
	for b.Loop() {
		got = map[string]dist{}
		for i := range *execSamples + 1 {
			for _, v := range variants {
				install(v.bus, v.exec)
				if err := conn.BusObject().Call("org.freedesktop.DBus.ReloadConfig", 0).Err; err != nil {
					b.Fatal(err)
				}
				lat := activate(b, conn, owners, v.bus)
				if i > 0 { // the first round is a warm-up
					got[v.name] = append(got[v.name], lat)
				}
			}
		}
	}
	b.ReportMetric(float64(len(got["antidriftd"])), "samples")
	for _, v := range variants {
		b.ReportMetric(ms(got[v.name].pct(50)), v.name+"_p50_ms")
		b.ReportMetric(ms(got[v.name].pct(99)), v.name+"_p99_ms")
	}
	b.ReportMetric(ratio(got["antidriftd"].pct(50), got["floord"].pct(50)), "antidriftd/floord_p50")
}

// activate starts name through the bus, returns the time to its
// NameOwnerChanged, then stops the process and waits until it is gone.
func activate(b *testing.B, conn *dbus.Conn, owners chan stamped, name string) time.Duration {
	b.Helper()
	bus := conn.BusObject()
	t0 := time.Now()
	pending := bus.Go("org.freedesktop.DBus.StartServiceByName", 0, nil, name, uint32(0))
	var t1 time.Time
	deadline := time.After(30 * time.Second)
	for t1.IsZero() {
		select {
		case s := <-owners:
			if n, owner, _ := strings.Cut(s.val, "\x00"); n == name && owner != "" {
				t1 = s.at
			}
		case <-deadline:
			b.Fatalf("%s's owner within 30 s: got none, want one", name)
		}
	}
	if call := <-pending.Done; call.Err != nil {
		b.Fatalf("StartServiceByName(%s): %v", name, call.Err)
	}
	var pid uint32
	if err := bus.Call("org.freedesktop.DBus.GetConnectionUnixProcessID", 0, name).Store(&pid); err != nil {
		b.Fatal(err)
	}
	syscall.Kill(int(pid), syscall.SIGTERM)
	for gone := false; !gone; {
		select {
		case s := <-owners:
			n, owner, _ := strings.Cut(s.val, "\x00")
			gone = n == name && owner == ""
		case <-deadline:
			b.Fatalf("%s after SIGTERM: got it still owned, want it to stop", name)
		}
	}
	// Wait for the process itself (it holds the state directory's lock
	// until it exits); the bus reaps it.
	for {
		stat, err := os.ReadFile(fmt.Sprintf("/proc/%d/stat", pid))
		if err != nil {
			break
		}
		if _, rest, ok := strings.Cut(string(stat), ") "); ok && strings.HasPrefix(rest, "Z") {
			break
		}
		time.Sleep(2 * time.Millisecond)
	}
	return t1.Sub(t0)
}
