package bench

import (
	"bufio"
	"bytes"
	"crypto/sha256"
	"encoding/json"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"runtime"
	"strconv"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/godbus/dbus/v5"

	"github.com/antidrift/antidrift/internal/testsupport/testenv"
	"github.com/antidrift/antidrift/service"
)

// TestSoakFocusCost is issue #24's afternoon, compressed: the real daemon
// on sway (headless, from the Debian 13 rootfs) with two foot terminals and
// a real browser — the host's Chromium, a Wayland client of that sway —
// showing a local page whose <title> ticks every second ("Design doc 1",
// "Design doc 2", …). Focus moves every 0.3 s, in a block session whose
// allowlist holds a title rule written for one reading of that title.
//
// Every minute it writes the daemon's CPU, the events it logged, CPU per
// event, RSS, open fds and the size of the Buckets the panels read; at the
// end the size of the sealed audit line. It fails when CPU per event of
// the last five minutes is more than 1.2× that of the first five (the
// first and last 40% of a shorter run), or when the ticking page was
// not judged by its title rule.
//
// It runs under make soak (ANTIDRIFT_SOAK=1) for ANTIDRIFT_SOAK_MINUTES
// (default 20). Not under -race: the race detector's own cost per event
// would be what it measures.
func TestSoakFocusCost(t *testing.T) {
	if os.Getenv("ANTIDRIFT_SOAK") == "" {
		t.Skip("a 20-minute soak: run it with make soak (ANTIDRIFT_SOAK=1)")
	}
	minutes := 20
	if m, err := strconv.Atoi(os.Getenv("ANTIDRIFT_SOAK_MINUTES")); err == nil && m >= 2 {
		minutes = m
	}
	testenv.Need(t, "dbus-daemon", "chromium")
	sw := testenv.StartSway(t)
	sw.Foot(t, "Editor", "main.go - editor")
	sw.Foot(t, "Terminal", "make test")
	page := filepath.Join(t.TempDir(), "doc.html")
	os.WriteFile(page, []byte(`<!doctype html><title>Design doc 1</title><p>A page whose title ticks.
<script>let n = 1; setInterval(() => { document.title = "Design doc " + (++n) }, 1000)</script>`), 0o644)
	browser := startChromium(t, sw, page)
	ipc := dialSway(t, sw.SwaySock)
	apps := []string{"Editor", "chromium", "Terminal", "chromium"}
	testenv.WaitFor(t, 60*time.Second, "the foot windows and Chromium to take focus", func() error {
		for _, a := range apps {
			if err := ipc.focus(a); err != nil {
				return err
			}
		}
		return nil
	}, func(err error) bool { return err == nil })

	bus := testenv.StartBus(t)
	state := filepath.Join(t.TempDir(), "state")
	// gctrace: the collections per minute and the live heap they leave go
	// into the table, the first suspects when the cost per event grows.
	d := testenv.StartDaemon(t, bus, state, append(sw.Env(), configHome(t, ""), "GODEBUG=gctrace=1")...)
	conn := bus.Dial(t)
	session := conn.Object("org.antidrift", "/org/antidrift/Session1")
	var id string
	allowed := []string{"Editor", "Terminal", "chromium:Design doc 1"}
	if err := session.Call("org.antidrift.Session1.Start", 0, "soak the daemon", "CPU per event stays flat",
		uint64(minutes+10)*60, "block", allowed).Store(&id); err != nil {
		t.Fatal(err)
	}
	rawLog := filepath.Join(state, "sessions", id+".jsonl")

	type minute struct {
		cpu     time.Duration
		events  int
		rss     float64
		fds     int
		buckets int
		gcs     int
		liveMB  string
		calib   time.Duration
	}
	var rows []minute
	out := &bytes.Buffer{}
	fmt.Fprintf(out, "soak: %d minutes on sway + Chromium, focus every 0.3 s, the page's title ticking every second; load average at start %s\n", minutes, loadavg())
	fmt.Fprintf(out, "%6s %10s %8s %12s %8s %5s %10s %6s %12s %9s\n", "minute", "cpu_ms", "events", "cpu_us/event", "rss_MB", "fds", "buckets_B", "gc", "live_heap_MB", "calib_ms")
	cpu0, lines0, gcs0 := cpuTime(t, d.PID()), countLines(t, rawLog), 0
	next, i := time.Now(), 0
	for m := range minutes {
		end := time.Now().Add(time.Minute)
		for time.Now().Before(end) {
			if err := ipc.focus(apps[i%len(apps)]); err != nil {
				t.Fatalf("sway: %v", err)
			}
			i++
			next = next.Add(300 * time.Millisecond)
			time.Sleep(time.Until(next))
		}
		cpu, lines := cpuTime(t, d.PID()), countLines(t, rawLog)
		gcs, live := gcTrace(d.Output())
		row := minute{cpu: cpu - cpu0, events: lines - lines0, rss: rssMB(t, d.PID()), fds: countFDs(t, d.PID()), buckets: bucketsSize(t, session),
			gcs: gcs - gcs0, liveMB: live, calib: calibrate()}
		cpu0, lines0, gcs0 = cpu, lines, gcs
		rows = append(rows, row)
		fmt.Fprintf(out, "%6d %10.1f %8d %12.1f %8.1f %5d %10d %6d %12s %9.1f\n", m+1, float64(row.cpu.Microseconds())/1000, row.events,
			float64(row.cpu.Microseconds())/float64(max(row.events, 1)), row.rss, row.fds, row.buckets, row.gcs, row.liveMB, float64(row.calib.Microseconds())/1000)
		t.Logf("minute %d: %s", m+1, strings.TrimSpace(out.String()[strings.LastIndex(strings.TrimSpace(out.String()), "\n")+1:]))
		if browser.ProcessState != nil {
			t.Fatal("Chromium exited")
		}
	}

	ipc.focus("chromium")
	time.Sleep(time.Second)
	var drift dbus.Variant
	drift, err := session.GetProperty("org.antidrift.Session1.Drift")
	if err != nil {
		t.Fatal(err)
	}
	var title dbus.Variant
	title, _ = session.GetProperty("org.antidrift.Session1.CurrentTitle")
	if err := session.Call("org.antidrift.Session1.Complete", 0).Err; err != nil {
		t.Fatal(err)
	}
	var hash string
	if err := session.Call("org.antidrift.Session1.End", 0).Store(&hash); err != nil {
		t.Fatal(err)
	}
	sealed := lastLineSize(t, filepath.Join(state, "audit.jsonl"))
	fmt.Fprintf(out, "sealed audit line: %d bytes; the ticking page (%v) read %v; load average at end %s\n", sealed, title.Value(), drift.Value(), loadavg())

	n := min(5, max(1, len(rows)*2/5))
	perEvent := func(rs []minute) float64 {
		var cpu time.Duration
		var ev int
		for _, r := range rs {
			cpu, ev = cpu+r.cpu, ev+r.events
		}
		return float64(cpu.Microseconds()) / float64(max(ev, 1))
	}
	calib := func(rs []minute) (sum time.Duration) {
		for _, r := range rs {
			sum += r.calib
		}
		return sum
	}
	first, last := perEvent(rows[:n]), perEvent(rows[len(rows)-n:])
	machine := float64(calib(rows[len(rows)-n:])) / float64(calib(rows[:n]))
	fmt.Fprintf(out, "CPU per event: first %d min %.1f µs, last %d min %.1f µs, last/first %.2f (goal ≤ 1.2); the same fixed work (calib) took %.2f× as long at the end as at the start\n", n, first, n, last, last/first, machine)
	os.Stdout.Write(out.Bytes())
	if path := os.Getenv("ANTIDRIFT_SOAK_OUT"); path != "" {
		os.WriteFile(path, out.Bytes(), 0o644)
	}
	if drift.Value() != service.DriftOnTask {
		t.Errorf("the ticking page read %v, want on_task by the rule chromium:Design doc 1", drift.Value())
	}
	if sealed > 8<<10 {
		t.Errorf("the sealed summary: got %d bytes, want at most %d", sealed, 8<<10)
	}
	if last > 1.2*first {
		t.Errorf("CPU per event from the first %d minutes to the last %d: got %.2f× growth, want at most 1.2×", n, n, last/first)
	}
}

// startChromium opens page in the host's Chromium as a Wayland client of
// sw (software rendering, a profile of its own, no sandbox: it runs as
// root here). It is killed at cleanup.
func startChromium(t *testing.T, sw *testenv.Sway, page string) *exec.Cmd {
	profile := t.TempDir()
	cmd := exec.Command("chromium", "--ozone-platform=wayland", "--no-sandbox", "--disable-gpu", "--no-first-run",
		"--no-default-browser-check", "--disable-extensions", "--disable-background-networking", "--disable-sync",
		"--user-data-dir="+profile, "--new-window", "file://"+page)
	cmd.Env = append(os.Environ(), sw.Env()...)
	cmd.Env = append(cmd.Env, "HOME="+profile)
	testenv.StartLogged(t, profile, "chromium", cmd)
	return cmd
}

// calibrate is the CPU time of a fixed piece of work (SHA-256 over 8 MB)
// on one thread of this process: when it grows, the machine got slower
// (neighbours, shared caches), not the daemon's work.
func calibrate() time.Duration {
	runtime.LockOSThread()
	defer runtime.UnlockOSThread()
	var ru0, ru1 syscall.Rusage
	buf := make([]byte, 1<<20)
	syscall.Getrusage(syscall.RUSAGE_THREAD, &ru0)
	h := sha256.New()
	for range 8 {
		h.Write(buf)
	}
	h.Sum(nil)
	syscall.Getrusage(syscall.RUSAGE_THREAD, &ru1)
	return time.Duration(ru1.Utime.Nano()+ru1.Stime.Nano()) - time.Duration(ru0.Utime.Nano()+ru0.Stime.Nano())
}

// gcTrace counts the collections GODEBUG=gctrace=1 reported in a log,
// and the live heap the last one left (its "a->b->c MB": c).
func gcTrace(log string) (n int, live string) {
	for _, line := range strings.Split(log, "\n") {
		if !strings.HasPrefix(line, "gc ") {
			continue
		}
		n++
		for _, f := range strings.Fields(line) {
			if strings.Count(f, "->") == 2 {
				live = f[strings.LastIndex(f, "->")+2:]
			}
		}
	}
	return n, live
}

func countLines(t *testing.T, path string) int {
	f, err := os.Open(path)
	if err != nil {
		return 0
	}
	defer f.Close()
	n, sc := 0, bufio.NewScanner(f)
	sc.Buffer(make([]byte, 1<<20), 1<<20)
	for sc.Scan() {
		n++
	}
	return n
}

func countFDs(t *testing.T, pid int) int {
	fds, _ := os.ReadDir(fmt.Sprintf("/proc/%d/fd", pid))
	return len(fds)
}

// bucketsSize is the size of the Buckets property as JSON: what every
// panel reads on each change.
func bucketsSize(t *testing.T, session dbus.BusObject) int {
	v, err := session.GetProperty("org.antidrift.Session1.Buckets")
	if err != nil {
		t.Fatal(err)
	}
	b, _ := json.Marshal(v.Value())
	return len(b)
}

func lastLineSize(t *testing.T, path string) int {
	b, err := os.ReadFile(path)
	if err != nil {
		t.Fatal(err)
	}
	lines := bytes.Split(bytes.TrimSpace(b), []byte("\n"))
	return len(lines[len(lines)-1])
}

func loadavg() string {
	b, _ := os.ReadFile("/proc/loadavg")
	return strings.Join(strings.Fields(string(b))[:3], " ")
}
