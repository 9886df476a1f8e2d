package bench

import (
	"bufio"
	"fmt"
	"log/slog"
	"os"
	"os/exec"
	"path/filepath"
	"runtime"
	"runtime/debug"
	"runtime/pprof"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/antidrift/antidrift/internal/memlimit"
	"github.com/antidrift/antidrift/internal/testsupport/testenv"
	"github.com/antidrift/antidrift/persist"
	"github.com/antidrift/antidrift/service"
)

// helperEnv makes TestMain run a helper instead of the benchmarks: the
// memory benchmark needs a process of its own, whose resident set is the
// core's and not that of whatever benchmark ran before in this one.
const helperEnv = "ANTIDRIFT_BENCH_HELPER"

// BenchmarkResidentMemory reports the resident set (VmRSS) of
//
//   - start: the real antidriftd process just after it owns its name (no X
//     display; BenchmarkFocusChange/rss has it with X, and after real
//     focus events);
//   - feed: a clean child process running the core in-process — persist on
//     a state dir in /dev/shm, service.New, Recover, Start — before and
//     after service.RecordWindow is fed -mem-events focus events with
//     -mem-titles distinct titles. In-process means no D-Bus listener: the
//     View is not rendered per event. The state dir is on tmpfs so that
//     1M fsyncs take seconds rather than an hour; tmpfs pages written with
//     write(2) are not mapped, so they are not in the process's RSS.
func BenchmarkResidentMemory(b *testing.B) {
	b.Run("daemon-start", func(b *testing.B) {
		testenv.Need(b, "dbus-daemon")
		bus := testenv.StartBus(b)
		d := testenv.StartDaemon(b, bus, filepath.Join(b.TempDir(), "state"))
		var rss float64
		for b.Loop() {
			rss = rssMB(b, d.PID())
		}
		b.ReportMetric(rss, "rss_MB")
		st, _ := procStatus(fmt.Sprintf("/proc/%d/status", d.PID()))
		b.ReportMetric(float64(st["RssAnon"])*1024/1e6, "anon_MB")
		b.ReportMetric(float64(st["RssFile"])*1024/1e6, "file_MB")
	})
	b.Run("daemon-recovering-1M", func(b *testing.B) {
		// A restart in the middle of a session whose raw log has
		// -replay-events events: the daemon replays it before it serves.
		testenv.Need(b, "dbus-daemon")
		dir := filepath.Join(b.TempDir(), "state")
		now := time.Now()
		started := now.Add(-time.Duration(*replayEvents+2) * time.Second)
		writeRawLog(b, dir, replayID, *replayEvents, started)
		st, _, err := persist.Open(dir)
		if err != nil {
			b.Fatal(err)
		}
		if err := st.SaveSnapshot(service.Snapshot{Version: service.SnapshotVersion, State: service.StateActive,
			SessionID: replayID, NextAction: "recover", SuccessCondition: "stats rebuilt", TimeboxSecs: 24 * 3600,
			StartedUnixMilli:  started.UnixMilli(),
			DeadlineUnixMilli: now.Add(24 * time.Hour).UnixMilli(), Enforcement: service.LevelObserve}); err != nil {
			b.Fatal(err)
		}
		st.Close()
		bus := testenv.StartBus(b)
		var rss float64
		var took time.Duration
		for b.Loop() {
			t0 := time.Now()
			d := testenv.StartDaemon(b, bus, dir)
			took = time.Since(t0)
			rss = rssMB(b, d.PID())
			d.Stop(b)
		}
		b.ReportMetric(rss, "rss_MB")
		b.ReportMetric(took.Seconds(), "start_to_name_s")
	})
	b.Run("core-feed", func(b *testing.B) {
		var res map[string]float64
		for b.Loop() {
			res = runMemoryHelper(b)
		}
		b.ReportMetric(res["events"], "events")
		b.ReportMetric(res["titles"], "titles")
		b.ReportMetric(res["rss_start_kB"]*1024/1e6, "start_MB")
		b.ReportMetric(res["rss_after_kB"]*1024/1e6, "after_MB")
		b.ReportMetric(res["rss_max_kB"]*1024/1e6, "max_MB")
		b.ReportMetric(res["rss_tenth_kB"]*1024/1e6, "at_10pct_MB")
		b.ReportMetric(res["rss_after_kB"]/res["rss_start_kB"], "after/start")
		b.ReportMetric(res["rss_after_kB"]/res["rss_tenth_kB"], "after/at_10pct")
		b.ReportMetric(res["heap_after_kB"]*1024/1e6, "heap_inuse_after_MB")
		b.ReportMetric(res["heap_sys_kB"]*1024/1e6, "heap_sys_after_MB")
		b.ReportMetric(res["rss_released_kB"]*1024/1e6, "after_FreeOSMemory_MB")
		b.ReportMetric(res["ns_per_event"], "ns/event")
		b.ReportMetric(res["rss_anon_kB"]*1024/1e6, "anon_after_MB")
		b.ReportMetric(res["rss_file_kB"]*1024/1e6, "file_after_MB")
		b.ReportMetric(res["gc_cycles"], "gc_cycles")
	})
}

// runHelperProcess runs this binary again as helper mode with args and
// the state dir on tmpfs, and returns the key=value figures it printed;
// want must be among them. extraEnv comes last, so it wins.
func runHelperProcess(b *testing.B, mode, want string, args []string, extraEnv ...string) map[string]float64 {
	b.Helper()
	dir, err := os.MkdirTemp("/dev/shm", "antidrift-bench-")
	if err != nil {
		b.Skipf("no /dev/shm: %v", err)
	}
	defer os.RemoveAll(dir)
	exe, err := os.Executable()
	if err != nil {
		b.Fatal(err)
	}
	cmd := exec.Command(exe, args...)
	cmd.Env = append(append(os.Environ(), helperEnv+"="+mode, "ANTIDRIFT_BENCH_DIR="+dir, "GOGC=", "GOMEMLIMIT="), extraEnv...)
	out, err := cmd.Output()
	if err != nil {
		b.Fatalf("%s helper: %v\n%s", mode, err, out)
	}
	res := map[string]float64{}
	for _, f := range strings.Fields(string(out)) {
		if k, v, ok := strings.Cut(f, "="); ok {
			if x, err := strconv.ParseFloat(v, 64); err == nil {
				res[k] = x
			}
		}
	}
	if res[want] == 0 {
		b.Fatalf("%s helper: got %q, want a nonzero %s=…", mode, out, want)
	}
	return res
}

func runMemoryHelper(b *testing.B) map[string]float64 {
	return runHelperProcess(b, "memory", "events", []string{"-mem-events", strconv.Itoa(*memEvents), "-mem-titles", strconv.Itoa(*memTitles)})
}

// runHelper is the child's side.
func runHelper() int {
	switch os.Getenv(helperEnv) {
	case "cost":
		if err := feedCost(os.Getenv("ANTIDRIFT_BENCH_DIR"), *costTitles); err != nil {
			fmt.Fprintln(os.Stderr, err)
			return 1
		}
		return 0
	case "memory":
		memlimit.Apply() // the daemon's memory policy
		if os.Getenv("ANTIDRIFT_BENCH_HEAPPROFILE") != "" {
			runtime.MemProfileRate = 4096
		}
		if err := feedCore(os.Getenv("ANTIDRIFT_BENCH_DIR"), *memEvents, *memTitles); err != nil {
			fmt.Fprintln(os.Stderr, err)
			return 1
		}
		return 0
	}
	fmt.Fprintln(os.Stderr, "unknown helper", os.Getenv(helperEnv))
	return 2
}

// classes are the window classes the fed events rotate through.
var classes = []struct{ class, instance, suffix string }{
	{"firefox", "Navigator", " — Mozilla Firefox"},
	{"Code", "code", " - antidrift - Visual Studio Code"},
	{"kitty", "kitty", " — kitty"},
	{"Slack", "slack", " | Slack"},
	{"evince", "evince", ".pdf — Document Viewer"},
	{"thunderbird", "Mail", " - Mozilla Thunderbird"},
	{"mpv", "gl", " - mpv"},
	{"Gimp-2.10", "gimp", " – GIMP"},
}

// titleOf is window i of a stream with n distinct titles: realistic
// lengths (the class's suffix, a few words), and a word made of k's
// letters, so every title is its own bucket key until the bucket cap. (A
// number would be folded: "issue 41" and "issue 42" are one title.)
func titleOf(i, n int) (class, instance, title string) {
	k := i % n
	c := classes[k%len(classes)]
	return c.class, c.instance, "notes on issue " + letters(k) + " and its review" + c.suffix
}

// letters spells k in base 26, a to z.
func letters(k int) string {
	var b []byte
	for {
		b = append(b, byte('a'+k%26))
		if k /= 26; k == 0 {
			return string(b)
		}
	}
}

func feedCore(dir string, events, titles int) error {
	store, _, err := persist.Open(dir)
	if err != nil {
		return err
	}
	defer store.Close()
	snap, _, _, err := store.LoadSnapshot()
	if err != nil {
		return err
	}
	allowed := []string{"Code", "kitty", "evince"}
	svc := service.New(service.Options{Store: store, Logger: slog.New(slog.DiscardHandler)})
	if err := svc.Recover(snap); err != nil {
		return err
	}
	if _, err := svc.Start("feed the core", "RSS is flat", 24*3600, "observe", allowed); err != nil {
		return err
	}
	svc.RecordWindow(service.Window{ID: "1", Class: "Code", Instance: "code", Title: "main.go", Available: true})
	runtime.GC()
	start := rssKB()
	maxRSS, tenth := start, int64(0)
	t0 := time.Now()
	for i := range events {
		class, instance, title := titleOf(i, titles)
		svc.RecordWindow(service.Window{ID: strconv.Itoa(i%97 + 2), Class: class, Instance: instance, Title: title, Available: true})
		if i%(events/20+1) == 0 {
			maxRSS = max(maxRSS, rssKB())
		}
		if i == events/10 {
			tenth = rssKB()
		}
	}
	perEvent := float64(time.Since(t0).Nanoseconds()) / float64(events)
	after := rssKB()
	maxRSS = max(maxRSS, after)
	var ms runtime.MemStats
	runtime.ReadMemStats(&ms)
	v := svc.View()
	if path := os.Getenv("ANTIDRIFT_BENCH_HEAPPROFILE"); path != "" {
		if f, err := os.Create(path); err == nil {
			runtime.GC()
			pprof.WriteHeapProfile(f)
			f.Close()
		}
	}
	debug.FreeOSMemory() // a GC, and every free page back to the OS
	released := rssKB()
	w := bufio.NewWriter(os.Stdout)
	st, _ := procStatus("/proc/self/status")
	fmt.Fprintf(w, "rss_anon_kB=%d rss_file_kB=%d rss_shmem_kB=%d ", st["RssAnon"], st["RssFile"], st["RssShmem"])
	fmt.Fprintf(w, "events=%d titles=%d rss_start_kB=%d rss_tenth_kB=%d rss_after_kB=%d rss_max_kB=%d rss_released_kB=%d heap_after_kB=%d heap_sys_kB=%d gc_cycles=%d ns_per_event=%.0f switches=%d buckets=%d\n",
		events, titles, start, tenth, after, maxRSS, released, ms.HeapInuse/1024, ms.HeapSys/1024, ms.NumGC, perEvent, v.SwitchCount, len(v.Buckets))
	return w.Flush()
}

func rssKB() int64 {
	st, err := procStatus("/proc/self/status")
	if err != nil {
		return 0
	}
	return st["VmRSS"]
}
