package bench

import (
	"bufio"
	"flag"
	"fmt"
	"log/slog"
	"os"
	"path/filepath"
	"runtime"
	"slices"
	"strconv"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/godbus/dbus/v5"

	"github.com/antidrift/antidrift/internal/memlimit"
	"github.com/antidrift/antidrift/internal/testenv"
	"github.com/antidrift/antidrift/persist"
	"github.com/antidrift/antidrift/service"
)

var (
	costTitles = flag.Int("cost-titles", 100_000, "distinct titles fed in the per-event cost benchmark")
	costWindow = flag.Int("cost-window", 500, "events per CPU sample in the per-event cost benchmark")
	costEnv    = flag.String("cost-env", "", "space-separated KEY=value settings for the measured process, e.g. \"GOGC=off GOMEMLIMIT=8MiB\" for the memory policy before issue #24")
)

// costWindows is how many samples are taken at each end: the median of
// them is the figure, so one collection or one neighbour's burst on a busy
// machine does not decide it.
const costWindows = 5

// BenchmarkEventCost is issue #24's promise: a focus event costs the same
// CPU at the 100th distinct title of a session as at the 100,000th. Every
// event is a new title (words, no counter: a counter would fold into one
// title), in an active warn session with a title rule.
//
//   - in-process: a clean child process with the daemon's memory policy
//     runs persist (tmpfs) + service, and reads the View after every event
//     as a panel would; CPU is the process's (getrusage), the collector's
//     included.
//   - daemon: the real antidriftd on a private bus, evidence source
//     gnome-shell, fed by a stand-in compositor that owns org.gnome.Shell
//     and calls Evidence1.ReportFocus, waiting for each reply; CPU is the
//     daemon's (schedstat of all its threads).
//
// Each reports the median CPU per event of costWindows windows of
// -cost-window events starting at the 100th title, of the same number
// ending at the last, and their ratio.
func BenchmarkEventCost(b *testing.B) {
	b.Run("in-process", func(b *testing.B) {
		var res map[string]float64
		for b.Loop() {
			res = runCostHelper(b)
		}
		reportCost(b, res["early_us"], res["late_us"])
		b.ReportMetric(res["rss_late_kB"]*1024/1e6, "rss_end_MB")
		b.ReportMetric(res["gc_cycles"], "gc_cycles")
	})
	b.Run("daemon", func(b *testing.B) {
		testenv.Need(b, "dbus-daemon")
		var early, late float64
		for b.Loop() {
			early, late = daemonCost(b)
		}
		reportCost(b, early, late)
	})
}

func reportCost(b *testing.B, early, late float64) {
	b.ReportMetric(float64(*costTitles), "titles")
	b.ReportMetric(early, "cpu_us/event_at_100th")
	b.ReportMetric(late, "cpu_us/event_at_last")
	if early > 0 {
		b.ReportMetric(late/early, "last/100th")
	}
}

// costTitle is distinct title i of the cost feed, in one of two classes.
func costTitle(i int) (class, title string) {
	if i%2 == 0 {
		return "firefox", "notes on " + letters(i) + " — Mozilla Firefox"
	}
	return "Code", "review of " + letters(i) + " - antidrift - Visual Studio Code"
}

// costSamples feeds titles 0..n-1 through feed and returns the median CPU
// per event (µs) of the windows starting at the 100th title and of those
// ending at the last. cpu is the CPU time used so far.
func costSamples(n, window int, feed func(i int), cpu func() time.Duration) (early, late float64) {
	starts := map[int]bool{}
	for w := range costWindows {
		starts[100+w*window] = true
		starts[n-(costWindows-w)*window] = true
	}
	var eS, lS []float64
	for i := 0; i < n; {
		if !starts[i] {
			feed(i)
			i++
			continue
		}
		t0 := cpu()
		for range window {
			feed(i)
			i++
		}
		us := float64((cpu() - t0).Microseconds()) / float64(window)
		if i <= n/2 {
			eS = append(eS, us)
		} else {
			lS = append(lS, us)
		}
	}
	return median(eS), median(lS)
}

func median(xs []float64) float64 {
	if len(xs) == 0 {
		return 0
	}
	slices.Sort(xs)
	return xs[len(xs)/2]
}

func runCostHelper(b *testing.B) map[string]float64 {
	return runHelperProcess(b, "cost", "late_us", []string{"-cost-titles", strconv.Itoa(*costTitles), "-cost-window", strconv.Itoa(*costWindow)}, strings.Fields(*costEnv)...)
}

// feedCost is the in-process child's side.
func feedCost(dir string, n, window int) error {
	memlimit.Apply()
	store, _, err := persist.Open(dir)
	if err != nil {
		return err
	}
	defer store.Close()
	svc := service.New(service.Options{Store: store, Logger: slog.New(slog.DiscardHandler)})
	if err := svc.Recover(service.Snapshot{}); err != nil {
		return err
	}
	if _, err := svc.Start("feed the core", "the cost is flat", 24*3600, "warn", []string{"Code", "firefox:*notes*"}); err != nil {
		return err
	}
	early, late := costSamples(n, window, func(i int) {
		class, title := costTitle(i)
		svc.RecordWindow(service.Window{ID: strconv.Itoa(i%2 + 1), Class: class, Instance: strings.ToLower(class), Title: title, Available: true})
		svc.View()
	}, processCPU)
	var ms runtime.MemStats
	runtime.ReadMemStats(&ms)
	w := bufio.NewWriter(os.Stdout)
	fmt.Fprintf(w, "early_us=%.2f late_us=%.2f rss_late_kB=%d gc_cycles=%d\n", early, late, rssKB(), ms.NumGC)
	return w.Flush()
}

func processCPU() time.Duration {
	var ru syscall.Rusage
	syscall.Getrusage(syscall.RUSAGE_SELF, &ru)
	return time.Duration(ru.Utime.Nano() + ru.Stime.Nano())
}

// daemonCost runs the daemon leg of BenchmarkEventCost.
func daemonCost(b *testing.B) (early, late float64) {
	bus := testenv.StartBus(b)
	shell := bus.Dial(b)
	if reply, err := shell.RequestName("org.gnome.Shell", dbus.NameFlagDoNotQueue); err != nil || reply != dbus.RequestNameReplyPrimaryOwner {
		b.Fatalf("RequestName(org.gnome.Shell) = %v, %v", reply, err)
	}
	env := append([]string{configHome(b, "evidence = \"gnome-shell\"\n")}, strings.Fields(*costEnv)...)
	d := testenv.StartDaemon(b, bus, filepath.Join(b.TempDir(), "state"), env...)
	session := bus.Dial(b).Object("org.antidrift", "/org/antidrift/Session1")
	var id string
	if err := session.Call("org.antidrift.Session1.Start", 0, "feed the daemon", "the cost is flat", uint64(24*3600), "warn", []string{"Code", "firefox:*notes*"}).Store(&id); err != nil {
		b.Fatal(err)
	}
	evidence := shell.Object("org.antidrift", "/org/antidrift/Session1")
	early, late = costSamples(*costTitles, *costWindow, func(i int) {
		class, title := costTitle(i)
		if err := evidence.Call("org.antidrift.Evidence1.ReportFocus", 0, strconv.Itoa(i%2+1), class, title).Err; err != nil {
			b.Fatalf("ReportFocus %d: %v\n%s", i, err, d.Output())
		}
	}, func() time.Duration { return cpuTime(b, d.PID()) })
	b.ReportMetric(rssMB(b, d.PID()), "rss_end_MB")
	return early, late
}
