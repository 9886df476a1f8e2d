package bench

import (
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"sort"
	"strconv"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/godbus/dbus/v5"

	"github.com/antidrift/antidrift/internal/testsupport/testenv"
)

// BenchmarkIdle watches the real antidriftd for -idle (60 s) while nothing
// happens — Xvfb + openbox with one xterm focused, the daemon connected to
// both — first locked, then with an active session and no focus changes.
// It counts, over the window, every thread's voluntary context switches
// (each is one sleep, so one wakeup follows), involuntary ones (preempted
// while running) and CPU time, from /proc/<pid>/task/*/{status,schedstat},
// and /proc/<pid>/stat for utime+stime. Side by side, over the same window,
// the same for floord: a Go process with the same runtime and libraries
// holding the same two connections (bus and X, listening on the root
// window) and no antidrift code. What the daemon shows beyond floord is
// ours; what both show is the Go runtime's.
//
// The daemons run with idle_after = "1h": the rows run back to back for
// about four minutes with no input on the X server, and at the default
// three minutes the session would go away during a window — a transition
// (an X event, a raw-log line, state.json), not idle cost.
func BenchmarkIdle(b *testing.B) {
	testenv.Need(b, "dbus-daemon", "Xvfb", "openbox", "xterm", "xdotool", "xprop")
	x := testenv.StartX(b)
	win := x.XTerm(b, "Editor", "main.go - editor")
	x.Activate(b, win)
	bus := testenv.StartBus(b)
	d := testenv.StartDaemon(b, bus, filepath.Join(b.TempDir(), "state"), "DISPLAY="+x.Name, configHome(b, ""))

	floor := startFloord(b, bus, "DISPLAY="+x.Name)

	b.Run("state=locked", func(b *testing.B) { idle(b, d.PID(), floor) })
	conn, err := dbus.Connect(bus.Address)
	if err != nil {
		b.Fatal(err)
	}
	defer conn.Close()
	var id string
	if err := conn.Object("org.antidrift", "/org/antidrift/Session1").Call("org.antidrift.Session1.Start", 0,
		"sit still", "nothing moved", uint64(4*3600), "block", []string{"Editor"}).Store(&id); err != nil {
		b.Fatal(err)
	}
	b.Run("state=active", func(b *testing.B) { idle(b, d.PID(), floor) })

	// The same, with the model judge configured and the current window
	// judged by it: a second daemon on its own bus, asking a real
	// llama-server (tiny model, steered to say on task). Once the verdict is
	// in, nothing should wake: no polling, no retry timers.
	srv := testenv.StartLlamaServer(b, "true")
	judge := fmt.Sprintf("[judge]\nkind = \"llm\"\nendpoint = %q\ntimeout = \"60s\"\n", srv.URL)
	d.Stop(b)
	bus2 := testenv.StartBus(b)
	dj := testenv.StartDaemon(b, bus2, filepath.Join(b.TempDir(), "state"), "DISPLAY="+x.Name, configHome(b, judge))
	conn2, err := dbus.Connect(bus2.Address)
	if err != nil {
		b.Fatal(err)
	}
	defer conn2.Close()
	obj := conn2.Object("org.antidrift", "/org/antidrift/Session1")
	if err := obj.Call("org.antidrift.Session1.Start", 0, "sit still", "nothing moved", uint64(4*3600), "block", []string{"Nothing"}).Store(&id); err != nil {
		b.Fatal(err)
	}
	testenv.WaitForProp(b, 2*time.Minute, dj.Session(b), "Drift", "on_task") // the model judged the focused window
	b.Run("state=active,judge=llm", func(b *testing.B) { idle(b, dj.PID(), floor) })
}

// configHome writes the idle benchmarks' config.toml (idle_after = "1h",
// then extra) and returns the XDG_CONFIG_HOME= setting that points at it.
func configHome(b testing.TB, extra string) string {
	b.Helper()
	home := b.TempDir()
	if err := os.MkdirAll(filepath.Join(home, "antidrift"), 0o700); err != nil {
		b.Fatal(err)
	}
	cfg := "idle_after = \"1h\"\n" + extra
	if err := os.WriteFile(filepath.Join(home, "antidrift", "config.toml"), []byte(cfg), 0o600); err != nil {
		b.Fatal(err)
	}
	return "XDG_CONFIG_HOME=" + home
}

// waitOwner waits until pid owns name on bus; a failure names the pid it
// last saw owning it (0: none). exited, when not nil, fails the benchmark
// when the process has gone.
func waitOwner(t testing.TB, bus *testenv.Bus, name string, pid int, exited func()) {
	t.Helper()
	testenv.WaitForValue(t, 30*time.Second, "the pid owning "+name, pid, func() int {
		if exited != nil {
			exited()
		}
		return bus.OwnerPID(t, name)
	})
}

// startFloord starts floord on bus with env added (DISPLAY= for its X
// connection; without it, it holds the bus connection alone), waits until
// it owns its name and returns its pid. It is stopped at cleanup.
func startFloord(b *testing.B, bus *testenv.Bus, env ...string) int {
	b.Helper()
	floor := exec.Command(floorBinary(b))
	floor.Env = append(bus.Env(), env...)
	floor.SysProcAttr = &syscall.SysProcAttr{Setpgid: true, Pdeathsig: syscall.SIGKILL}
	if err := floor.Start(); err != nil {
		b.Fatal(err)
	}
	b.Cleanup(func() { floor.Process.Signal(syscall.SIGTERM); floor.Wait() })
	waitOwner(b, bus, "org.antidrift.BenchFloor", floor.Process.Pid, nil)
	return floor.Process.Pid
}

// idle watches the daemon (pid) and floord (floorPID) for -idle while
// nothing happens and reports what each did: wakeups, preemptions, CPU.

func idle(b *testing.B, pid, floorPID int) {
	// Let the last change settle: the runtime's background work after a
	// burst (sysmon backing off, the sweeper and scavenger returning what
	// the change allocated) is the change's cost, not idle cost. Full
	// make bench runs showed it outlasting 3 s on this shared machine
	// (the active row read 3 and 11 wakeups/min after 3 s, while the
	// judge row, settled 15 s, read 2).
	time.Sleep(15 * time.Second)
	var ours, theirs usage
	for b.Loop() {
		a0, f0 := readUsage(b, pid), readUsage(b, floorPID)
		time.Sleep(*idleWindow)
		ours, theirs = readUsage(b, pid).since(a0), readUsage(b, floorPID).since(f0)
	}
	perMin := func(n int64) float64 { return float64(n) / idleWindow.Minutes() }
	b.ReportMetric(idleWindow.Seconds(), "window_s")
	b.ReportMetric(perMin(ours.voluntary), "antidriftd_wakeups/min")
	b.ReportMetric(perMin(ours.involuntary), "antidriftd_preempted/min")
	b.ReportMetric(float64(ours.cpu.Microseconds())/1000/idleWindow.Minutes(), "antidriftd_cpu_ms/min")
	b.ReportMetric(perMin(ours.ticks), "antidriftd_stat_ticks/min")
	b.ReportMetric(float64(ours.threadsWoken()), "antidriftd_threads_woken")
	b.ReportMetric(perMin(theirs.voluntary), "floord_wakeups/min")
	b.ReportMetric(float64(theirs.cpu.Microseconds())/1000/idleWindow.Minutes(), "floord_cpu_ms/min")
	b.Logf("antidriftd pid %d, per thread over %v:\n%s", pid, *idleWindow, ours.table())
	b.Logf("floord pid %d, per thread over %v:\n%s", floorPID, *idleWindow, theirs.table())
}

// usage is what /proc says one process has done, per thread.
type usage struct {
	voluntary, involuntary int64
	cpu                    time.Duration
	ticks                  int64 // utime+stime of the process, in clock ticks
	threads                map[string]threadUsage
}

type threadUsage struct {
	voluntary, involuntary int64
	cpu                    time.Duration
	state, wchan, syscall  string
}

func readUsage(b *testing.B, pid int) usage {
	b.Helper()
	u := usage{threads: map[string]threadUsage{}}
	dirs, _ := filepath.Glob(fmt.Sprintf("/proc/%d/task/*", pid))
	if len(dirs) == 0 {
		b.Fatalf("pid %d's threads: got none (exited?), want some", pid)
	}
	for _, dir := range dirs {
		st, err := procStatus(dir + "/status")
		if err != nil {
			continue
		}
		t := threadUsage{voluntary: st["voluntary_ctxt_switches"], involuntary: st["nonvoluntary_ctxt_switches"]}
		if sched, err := os.ReadFile(dir + "/schedstat"); err == nil {
			if f := strings.Fields(string(sched)); len(f) > 0 {
				n, _ := strconv.ParseInt(f[0], 10, 64)
				t.cpu = time.Duration(n)
			}
		}
		if stat, err := os.ReadFile(dir + "/stat"); err == nil {
			if _, rest, ok := strings.Cut(string(stat), ") "); ok && len(rest) > 0 {
				t.state = rest[:1]
			}
		}
		if w, err := os.ReadFile(dir + "/wchan"); err == nil {
			t.wchan = string(w)
		}
		if s, err := os.ReadFile(dir + "/syscall"); err == nil {
			if f := strings.Fields(string(s)); len(f) > 0 {
				t.syscall = syscallName(f[0])
			}
		}
		u.threads[filepath.Base(dir)] = t
		u.voluntary += t.voluntary
		u.involuntary += t.involuntary
		u.cpu += t.cpu
	}
	if stat, err := os.ReadFile(fmt.Sprintf("/proc/%d/stat", pid)); err == nil {
		if _, rest, ok := strings.Cut(string(stat), ") "); ok {
			f := strings.Fields(rest)
			// Fields after the command: state is 0, utime 11, stime 12.
			if len(f) > 12 {
				ut, _ := strconv.ParseInt(f[11], 10, 64)
				stt, _ := strconv.ParseInt(f[12], 10, 64)
				u.ticks = ut + stt
			}
		}
	}
	return u
}

// since is u minus an earlier reading. Threads born in between count whole.
func (u usage) since(before usage) usage {
	d := usage{voluntary: u.voluntary - before.voluntary, involuntary: u.involuntary - before.involuntary,
		cpu: u.cpu - before.cpu, ticks: u.ticks - before.ticks, threads: map[string]threadUsage{}}
	for tid, t := range u.threads {
		p := before.threads[tid]
		d.threads[tid] = threadUsage{voluntary: t.voluntary - p.voluntary, involuntary: t.involuntary - p.involuntary,
			cpu: t.cpu - p.cpu, state: t.state, wchan: t.wchan, syscall: t.syscall}
	}
	return d
}

func (u usage) threadsWoken() int {
	n := 0
	for _, t := range u.threads {
		if t.voluntary+t.involuntary > 0 {
			n++
		}
	}
	return n
}

func (u usage) table() string {
	tids := make([]string, 0, len(u.threads))
	for tid := range u.threads {
		tids = append(tids, tid)
	}
	sort.Slice(tids, func(i, j int) bool {
		a, _ := strconv.Atoi(tids[i])
		c, _ := strconv.Atoi(tids[j])
		return a < c
	})
	var sb strings.Builder
	fmt.Fprintf(&sb, "    %-8s %9s %11s %9s  %s\n", "tid", "voluntary", "involuntary", "cpu_us", "now blocked in")
	for _, tid := range tids {
		t := u.threads[tid]
		fmt.Fprintf(&sb, "    %-8s %9d %11d %9d  %s %s (%s)\n", tid, t.voluntary, t.involuntary, t.cpu.Microseconds(), t.state, t.syscall, t.wchan)
	}
	return sb.String()
}

// syscallName names the x86-64 syscalls a parked Go thread sits in.
func syscallName(nr string) string {
	switch nr {
	case "202":
		return "futex"
	case "232":
		return "epoll_wait"
	case "281":
		return "epoll_pwait"
	case "0":
		return "read"
	case "7":
		return "poll"
	case "35":
		return "nanosleep"
	case "running":
		return "running"
	}
	return "syscall " + nr
}
