package bench

import (
	"flag"
	"fmt"
	"io"
	"math"
	"os"
	"path/filepath"
	"slices"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/jezek/xgb"

	"github.com/antidrift/antidrift/internal/testsupport/testenv"
)

// Sample counts and windows. The defaults are what `make bench` measures;
// pass e.g. -args -focus-samples=200 -idle=10s for a quick look.
var (
	focusSamples  = flag.Int("focus-samples", 1000, "focus changes per focus-latency sub-benchmark")
	pollerSamples = flag.Int("poller-samples", 20, "of those, changes held until a real 1 Hz poller saw them")
	callsPerSec   = flag.Int("call-rate", 1000, "method calls per second in the round-trip benchmark")
	calls         = flag.Int("calls", 3000, "method calls per round-trip sub-benchmark")
	execSamples   = flag.Int("exec-samples", 30, "bus activations per exec benchmark (plus one discarded warm-up)")
	idleWindow    = flag.Duration("idle", 60*time.Second, "how long the idle benchmark watches the daemon")
	memEvents     = flag.Int("mem-events", 1_000_000, "focus events fed to the core in the memory benchmark")
	memTitles     = flag.Int("mem-titles", 100_000, "distinct window titles among them")
	replayEvents  = flag.Int("replay-events", 1_000_000, "raw-log lines in the replay benchmark")
	auditEntries  = flag.Int("audit-entries", 100_000, "audit lines in the VerifyAudit benchmark")
	judgeMisses   = flag.Int("judge-misses", 10, "windows the model judge is asked about in the judge-latency benchmark")
)

func TestMain(m *testing.M) {
	// The memory benchmark re-runs this binary as a clean process to feed
	// the core; see memory_test.go.
	if os.Getenv(helperEnv) != "" {
		flag.Parse()
		os.Exit(runHelper())
	}
	xgb.Logger.SetOutput(io.Discard) // "Could not get authority info", for each connection
	os.Exit(testenv.Main(m))
}

// dist is a set of latency samples.
type dist []time.Duration

// pct is the p-th percentile (0 < p <= 100) by nearest rank.
func (d dist) pct(p float64) time.Duration {
	if len(d) == 0 {
		return 0
	}
	s := slices.Clone(d)
	slices.Sort(s)
	i := int(math.Ceil(p/100*float64(len(s)))) - 1
	return s[max(0, min(i, len(s)-1))]
}

func (d dist) mean() time.Duration {
	if len(d) == 0 {
		return 0
	}
	var sum time.Duration
	for _, x := range d {
		sum += x
	}
	return sum / time.Duration(len(d))
}

func ms(d time.Duration) float64 { return float64(d) / float64(time.Millisecond) }

// ratio is a/b, 0 when b is 0.
func ratio(a, b time.Duration) float64 {
	if b == 0 {
		return 0
	}
	return float64(a) / float64(b)
}

// procStatus reads the numeric fields of /proc/<pid>/status (kB values in kB).
func procStatus(path string) (map[string]int64, error) {
	b, err := os.ReadFile(path)
	if err != nil {
		return nil, err
	}
	out := map[string]int64{}
	for _, line := range strings.Split(string(b), "\n") {
		k, v, ok := strings.Cut(line, ":")
		if !ok {
			continue
		}
		f := strings.Fields(v)
		if len(f) == 0 {
			continue
		}
		if n, err := strconv.ParseInt(f[0], 10, 64); err == nil {
			out[k] = n
		}
	}
	return out, nil
}

// rssMB is VmRSS of pid in MB (10^6 bytes).
func rssMB(tb testing.TB, pid int) float64 {
	tb.Helper()
	st, err := procStatus(fmt.Sprintf("/proc/%d/status", pid))
	if err != nil {
		tb.Fatal(err)
	}
	return float64(st["VmRSS"]) * 1024 / 1e6
}

// cpuTime is the CPU time pid's threads have used: the sum of the first
// field of /proc/<pid>/task/*/schedstat (nanoseconds on a CPU), which is
// exact where /proc/<pid>/stat counts 10 ms ticks. Threads that exited
// are not counted; Go's do not exit.
func cpuTime(tb testing.TB, pid int) time.Duration {
	tb.Helper()
	tasks, err := filepath.Glob(fmt.Sprintf("/proc/%d/task/*/schedstat", pid))
	if err != nil || len(tasks) == 0 {
		tb.Fatalf("no threads for pid %d: %v", pid, err)
	}
	var sum time.Duration
	for _, t := range tasks {
		b, err := os.ReadFile(t)
		if err != nil {
			continue
		}
		if f := strings.Fields(string(b)); len(f) > 0 {
			n, _ := strconv.ParseInt(f[0], 10, 64)
			sum += time.Duration(n)
		}
	}
	return sum
}
