// Package memlimit is the daemon's memory policy: when the Go runtime
// collects garbage. It keeps two promises that the runtime's own knobs
// trade against each other:
//
//   - an idle daemon costs nothing: no collection runs while nothing is
//     allocated. GOGC's proportional pacing would do, but with GOGC on the
//     runtime also forces a full collection every two minutes once any has
//     run, waking an idle daemon's threads (BENCHMARKS.md, issue #12). So
//     GOGC is off and a memory limit alone decides when to collect.
//   - a focus event costs the same in the third hour as in the first
//     minute. A fixed limit does not keep that: the closer the live heap
//     grows to it, the less room is left between collections and the more
//     often they run, each marking the whole live heap (issue #24 measured
//     61 collections a minute at the start of a session and 172 at its
//     end under the old fixed 8 MiB). So the limit follows the live heap:
//     after every collection it is set to what the runtime needs besides
//     the heap, plus the live heap, plus room to allocate of at least the
//     live heap again (GOGC=100's proportion) and at least MinHeadroom.
//     Collections then come every MinHeadroom (or live heap) bytes
//     allocated, each costing in proportion to the live heap: a constant
//     cost per byte allocated, whatever the heap holds.
//
// The follower runs in the runtime's finalizer goroutine once per
// collection; collections only follow allocation, so it never wakes an idle
// process either.
package memlimit

import (
	"os"
	"runtime"
	"runtime/debug"
	"runtime/metrics"
)

// MinHeadroom is the least room to allocate between two collections, room
// the runtime really has (see follow). Measured on 1M focus events with
// 100k titles (BENCHMARKS.md, issue #24), on an otherwise idle machine:
// 1 MiB collects once every ~1,650 events and ends at 15.0 MB resident;
// 2 MiB ends at 16.1 MB, over issue #24's 15 MB; both are flat per event
// (1.03–1.12× from the 100th to the 100,000th title). The old fixed 8 MiB
// limit collected once every ~54 events, more often as the heap grew.
const MinHeadroom = 1 << 20

// Floor is the least limit ever set: what the daemon needs at start.
const Floor = 8 << 20

// Apply sets the policy, unless the person set GOGC or GOMEMLIMIT: their
// settings win, as the runtime documents.
func Apply() {
	if os.Getenv("GOMEMLIMIT") != "" || os.Getenv("GOGC") != "" {
		return
	}
	debug.SetGCPercent(-1)
	debug.SetMemoryLimit(Floor)
	arm()
}

// sentinel is garbage made on purpose: its finalizer runs once the
// collection after it was made is done, and makes the next one.
type sentinel struct{ _ [16]byte }

func arm() {
	runtime.SetFinalizer(&sentinel{}, func(*sentinel) {
		follow()
		arm()
	})
}

var samples = []metrics.Sample{
	{Name: "/gc/heap/live:bytes"},
	{Name: "/memory/classes/total:bytes"},
	{Name: "/memory/classes/heap/released:bytes"},
	{Name: "/memory/classes/heap/objects:bytes"},
	{Name: "/memory/classes/heap/unused:bytes"},
	{Name: "/memory/classes/heap/free:bytes"},
}

// follow sets the limit for the next collection from the live heap the
// last one left (see the package comment).
func follow() {
	metrics.Read(samples)
	v := func(i int) uint64 {
		if samples[i].Value.Kind() != metrics.KindUint64 {
			return 0
		}
		return samples[i].Value.Uint64()
	}
	live := v(0)
	mapped := v(1) - v(2)
	// What the runtime counts besides the heap's objects when it turns a
	// limit into a heap goal: stacks and its own structures, and also the
	// heap's unused (fragmented) bytes — only the free spans are room.
	var other uint64
	if heap := v(3) + v(5); mapped > heap {
		other = mapped - heap
	}
	limit := other + live + max(live, MinHeadroom)
	// The runtime keeps max(3%, 1 MiB) of a limit back as its own headroom;
	// added here so the room between collections really is the above, and
	// never shrinks to nothing, which would make it collect back to back.
	limit += max(1<<20, limit*3/100)
	debug.SetMemoryLimit(int64(max(Floor, limit)))
}

// Limit is the limit in force, for tests and benchmarks.
func Limit() int64 { return debug.SetMemoryLimit(-1) }
