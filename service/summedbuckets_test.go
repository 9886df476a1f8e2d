package service

import (
	"testing"
	"time"
)

// A sealed summary's buckets add up to the session's active time, rounded
// once: 16 windows of 2.4 s and 2.6 s each, 40 s in all, are 40 s, not the
// 43 s (or, of 2.4 s alone, the 32 s) that rounding each bucket gave — so
// `history` and `report` show the session as the same 40 s.
func TestSummaryBucketsAddUpToTheActiveTime(t *testing.T) {
	for _, c := range []struct {
		name       string
		off, on    time.Duration
		wantActive uint64
	}{{"2.4 s and 2.6 s", 2400 * time.Millisecond, 2600 * time.Millisecond, 40}, {"2.4 s each", 2400 * time.Millisecond, 2400 * time.Millisecond, 38}} {
		h := newHarness(t)
		h.RecordWindow(win("Editor", "a"))
		h.start(t, LevelWarn)
		for i := range 8 {
			h.clock.Advance(c.on)
			h.RecordWindow(win("Term", string(rune('a'+i))))
			h.clock.Advance(c.off)
			h.RecordWindow(win("Editor", "a"))
		}
		must(t, h.Complete())
		h.End()
		sums := h.store.sealed()
		s := sums[len(sums)-1]
		var active uint64
		for i, b := range s.Buckets {
			active += b.Seconds
			if i > 0 && b.Seconds > s.Buckets[i-1].Seconds {
				t.Errorf("%s: bucket %d %+v shows more than the one before it %+v, want the order kept", c.name, i, b, s.Buckets[i-1])
			}
		}
		if active != c.wantActive || uint64(s.EndedUnix-s.StartedUnix) != c.wantActive {
			t.Errorf("%s: got buckets adding up to %d s over %d s from start to end (%+v), want both %d s", c.name, active, s.EndedUnix-s.StartedUnix, s.Buckets, c.wantActive)
		}
	}
}
