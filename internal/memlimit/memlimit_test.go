package memlimit

import (
	"runtime"
	"runtime/debug"
	"testing"
)

var sink []byte

// churn allocates garbage until n collections have run.
func churn(n uint32) {
	var ms runtime.MemStats
	runtime.ReadMemStats(&ms)
	for want := ms.NumGC + n; ms.NumGC < want; runtime.ReadMemStats(&ms) {
		for range 1000 {
			sink = make([]byte, 4096)
		}
	}
}

func TestTheEnvironmentWins(t *testing.T) {
	t.Setenv("GOGC", "200")
	defer debug.SetMemoryLimit(debug.SetMemoryLimit(-1))
	before := Limit()
	Apply()
	if Limit() != before {
		t.Fatal("Apply set a limit though GOGC is set")
	}
}

// TestLimitFollowsTheLiveHeap: a live heap far past the floor gets room to
// allocate of at least its own size (no collection thrash near a fixed
// limit), and the limit comes back down when the heap is freed.
func TestLimitFollowsTheLiveHeap(t *testing.T) {
	t.Setenv("GOGC", "")
	t.Setenv("GOMEMLIMIT", "")
	defer debug.SetGCPercent(debug.SetGCPercent(100))
	defer debug.SetMemoryLimit(debug.SetMemoryLimit(-1))
	Apply()
	if debug.SetGCPercent(-1) != -1 {
		t.Fatal("Apply left GOGC on: the runtime would force a collection every two minutes")
	}
	live := make([][]byte, 0, 64)
	for range 64 {
		live = append(live, make([]byte, 1<<20)) // 64 MiB live
	}
	churn(3)
	if l := Limit(); l < 2*64<<20 {
		t.Fatalf("with 64 MiB live the limit is %d MiB: less room than the live heap again", l>>20)
	}
	runtime.KeepAlive(live)
	live = nil
	churn(3)
	if l := Limit(); l > 32<<20 {
		t.Fatalf("with the live heap freed the limit stayed at %d MiB", l>>20)
	}
}
