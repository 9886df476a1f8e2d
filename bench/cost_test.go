package bench

import (
	"bufio"
	"cmp"
	"flag"
	"fmt"
	"log/slog"
	"os"
	"path/filepath"
	"runtime"
	"strconv"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/godbus/dbus/v5"

	"github.com/antidrift/antidrift/internal/memlimit"
	"github.com/antidrift/antidrift/internal/testsupport/testenv"
	"github.com/antidrift/antidrift/persist"
	"github.com/antidrift/antidrift/service"
)

var (
	costTitles = flag.Int("cost-titles", 100_000, "distinct titles fed in the per-event cost benchmark")
	costEnv    = flag.String("cost-env", "", "space-separated KEY=value settings for the measured process, e.g. \"GOGC=off GOMEMLIMIT=8MiB\" for the memory policy before issue #24")
)

// costRounds is how many sessions the early figure is taken over, and how
// many stretches of costEarly events make up the late one: both then span
// about 4,500 events and a few dozen collections, so whether one window
// happens to hold a collection does not decide the figure.
const costRounds = 5

// The early figure is taken from the 100th to the 1,000th title of a
// session: past the warm-up, before the bucket cap.
const costFrom, costTo = 100, 1000

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
// Each reports the mean CPU per event from the 100th to the 1,000th title
// of costRounds fresh sessions, the mean over the same number of events
// ending at the last title of a session that saw -cost-titles, and their
// ratio.
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

// costSamples measures CPU per event (µs) early and late in a session:
// start begins a fresh session, feed shows it title i, cpu is the CPU
// time used so far.
func costSamples(n int, start func(), feed func(i int), cpu func() time.Duration) (early, late float64) {
	var spent time.Duration
	for r := range costRounds {
		start()
		base := r * 10_000_000 // titles of their own
		for i := range costFrom {
			feed(base + i)
		}
		t0 := cpu()
		for i := costFrom; i < costTo; i++ {
			feed(base + i)
		}
		spent += cpu() - t0
	}
	early = float64(spent.Microseconds()) / float64(costRounds*(costTo-costFrom))
	start()
	last := n - costRounds*(costTo-costFrom)
	for i := range last {
		feed(100_000_000 + i)
	}
	t0 := cpu()
	for i := last; i < n; i++ {
		feed(100_000_000 + i)
	}
	late = float64((cpu() - t0).Microseconds()) / float64(n-last)
	return early, late
}

func runCostHelper(b *testing.B) map[string]float64 {
	return runHelperProcess(b, "cost", "late_us", []string{"-cost-titles", strconv.Itoa(*costTitles)}, strings.Fields(*costEnv)...)
}

// feedCost is the in-process child's side.
func feedCost(dir string, n int) error {
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
	var failed error
	start := func() {
		if svc.View().State == service.StateActive {
			failed = cmp.Or(failed, svc.Complete())
			_, err := svc.End()
			failed = cmp.Or(failed, err)
		}
		_, err := svc.Start("feed the core", "the cost is flat", 24*3600, "warn", costAllowed)
		failed = cmp.Or(failed, err)
	}
	early, late := costSamples(n, start, func(i int) {
		class, title := costTitle(i)
		svc.RecordWindow(service.Window{ID: strconv.Itoa(i%2 + 1), Class: class, Instance: strings.ToLower(class), Title: title, Available: true})
		svc.View()
	}, processCPU)
	if failed != nil {
		return failed
	}
	var ms runtime.MemStats
	runtime.ReadMemStats(&ms)
	w := bufio.NewWriter(os.Stdout)
	fmt.Fprintf(w, "early_us=%.2f late_us=%.2f rss_late_kB=%d gc_cycles=%d\n", early, late, rssKB(), ms.NumGC)
	return w.Flush()
}

// costAllowed is the cost sessions' allowlist: a class and a title rule.
var costAllowed = []string{"Code", "firefox:*notes*"}

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
	start := func() {
		if v, _ := session.GetProperty("org.antidrift.Session1.State"); v.Value() == string(service.StateActive) {
			if err := session.Call("org.antidrift.Session1.Complete", 0).Err; err != nil {
				b.Fatal(err)
			}
			if err := session.Call("org.antidrift.Session1.End", 0).Err; err != nil {
				b.Fatal(err)
			}
		}
		if err := session.Call("org.antidrift.Session1.Start", 0, "feed the daemon", "the cost is flat", uint64(24*3600), "warn", costAllowed).Err; err != nil {
			b.Fatal(err)
		}
	}
	evidence := shell.Object("org.antidrift", "/org/antidrift/Session1")
	early, late = costSamples(*costTitles, start, func(i int) {
		class, title := costTitle(i)
		if err := evidence.Call("org.antidrift.Evidence1.ReportFocus", 0, strconv.Itoa(i%2+1), class, title).Err; err != nil {
			b.Fatalf("ReportFocus %d: %v\n%s", i, err, d.Output())
		}
	}, func() time.Duration { return cpuTime(b, d.PID()) })
	b.ReportMetric(rssMB(b, d.PID()), "rss_end_MB")
	return early, late
}
