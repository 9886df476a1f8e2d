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
		t.Fatalf("Limit after Apply with GOGC set: got %d, want %d, unchanged", Limit(), before)
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
		t.Fatal("GOGC after Apply: got it on, want off: else the runtime forces a collection every two minutes")
	}
	live := make([][]byte, 0, 64)
	for range 64 {
		live = append(live, make([]byte, 1<<20)) // 64 MiB live
	}
	churn(3)
	if l := Limit(); l < 2*64<<20 {
		t.Fatalf("the limit with 64 MiB live: got %d MiB, want at least 128 (room for the live heap again)", l>>20)
	}
	runtime.KeepAlive(live)
	live = nil
	churn(3)
	if l := Limit(); l > 32<<20 {
		t.Fatalf("the limit with the live heap freed: got %d MiB, want at most 32", l>>20)
	}
}
