package service

import (
	"reflect"
	"slices"
	"testing"
	"time"
)

// The buckets count the current window up to the moment they are read,
// with no focus change and no timer: they always add up to the time the
// session has been active now.
func TestBucketsAreLiveWithoutAFocusChange(t *testing.T) {
	h := newHarness(t)
	h.RecordWindow(win("Editor", "main.go"))
	h.start(t, LevelWarn)
	h.clock.Advance(10 * time.Second)
	h.RecordWindow(win("Firefox", "docs"))
	armed := h.clock.armed()
	h.clock.Advance(19 * time.Second)

	v := h.View()
	want := []Bucket{{"Firefox", "docs", 19}, {"Editor", "main.go", 10}}
	if !reflect.DeepEqual(v.Buckets, want) {
		t.Fatalf("19 s on the current window without a focus change: buckets %+v, want %+v", v.Buckets, want)
	}
	h.clock.Advance(time.Second)
	if v := h.View(); v.Buckets[0].Seconds != 20 {
		t.Fatalf("a second later: Buckets[0].Seconds: got %d, want 20 (%+v)", v.Buckets[0].Seconds, v.Buckets)
	}
	if h.clock.armed() != armed {
		t.Fatalf("armed timers after reading live buckets: got %d, want %d as before", h.clock.armed(), armed)
	}

	// Away time grows the (away) bucket the same way.
	h.SetAway("test", AwayIdle, true)
	h.clock.Advance(7 * time.Second)
	if v := h.View(); !reflect.DeepEqual(v.Buckets[2], Bucket{"", AwayTitle, 7}) {
		t.Fatalf("away for 7 s: Buckets[2]: got %+v, want %+v (all %+v)", v.Buckets[2], Bucket{"", AwayTitle, 7}, v.Buckets)
	}

	// Once the session ends, the buckets freeze at its end.
	must(t, h.Complete())
	frozen := h.View().Buckets
	h.clock.Advance(time.Minute)
	if got := h.View().Buckets; !reflect.DeepEqual(got, frozen) {
		t.Fatalf("review buckets a minute on: got %+v, want %+v, frozen at the end", got, frozen)
	}
}

// The live bucket takes its place in the order, and the list stays at
// most TopBuckets long by name, however many buckets there are; the time
// of the titles not named is the class's remainder.
func TestLiveBucketKeepsTheTopOrdered(t *testing.T) {
	h := newHarness(t)
	h.start(t, LevelWarn)
	for i := range TopBuckets + 5 {
		h.RecordWindow(win("App", string(rune('a'+i))))
		h.clock.Advance(time.Duration(10+i) * time.Second)
	}
	h.RecordWindow(win("Late", "new"))
	h.clock.Advance(20 * time.Second)
	v := h.View()
	if len(v.Buckets) != TopBuckets+1 || !slices.Contains(v.Buckets, Bucket{"App", OtherTitlesTitle, 10 + 11 + 12 + 13 + 14 + 15}) {
		t.Fatalf("buckets: got %d, want %d named and App's remainder %+v: %+v", len(v.Buckets), TopBuckets, Bucket{"App", OtherTitlesTitle, 10 + 11 + 12 + 13 + 14 + 15}, v.Buckets)
	}
	for i := 1; i < len(v.Buckets); i++ {
		if v.Buckets[i].Seconds > v.Buckets[i-1].Seconds {
			t.Fatalf("Buckets[%d].Seconds: got %d, want at most %d, the one above (%+v)", i, v.Buckets[i].Seconds, v.Buckets[i-1].Seconds, v.Buckets)
		}
	}
	found := false
	for _, b := range v.Buckets {
		found = found || (b.Class == "Late" && b.Seconds == 20)
	}
	if !found {
		t.Fatalf("buckets: got %+v, want the current window Late with 20 s among them", v.Buckets)
	}
}

// ChangesIn says exactly how long a read view stays true, so a reader can
// cache it that long: until the current window's rounded seconds tick
// over, or until it overtakes the bucket above it; 0 when nothing grows.
func TestChangesInIsWhenTheLiveBucketsNextReadDifferently(t *testing.T) {
	h := newHarness(t)
	if v := h.View(); v.ChangesIn != 0 {
		t.Fatalf("locked: ChangesIn %v, want 0 (nothing moves with time)", v.ChangesIn)
	}
	h.RecordWindow(win("Editor", "main.go"))
	h.start(t, LevelWarn)
	h.clock.Advance(10200 * time.Millisecond) // 10.2 s reads 10; 10.5 s reads 11
	v := h.View()
	if v.ChangesIn != 300*time.Millisecond {
		t.Fatalf("10.2 s on the window: ChangesIn %v, want 300ms", v.ChangesIn)
	}
	h.clock.Advance(v.ChangesIn - time.Millisecond)
	if got := h.View().Buckets; !reflect.DeepEqual(got, v.Buckets) {
		t.Fatalf("buckets within ChangesIn: got %+v, want %+v, unmoved", got, v.Buckets)
	}
	h.clock.Advance(time.Millisecond)
	if got := h.View().Buckets[0].Seconds; got != 11 {
		t.Fatalf("at ChangesIn the seconds read %d, want 11", got)
	}

	// The first window ends at 10.7 s. 2.9 s into the next (reads 3), its
	// seconds tick at 3.5 s; at 10.6 s they would tick at 11.5 s, but it
	// overtakes the first at 10.7 s.
	h.clock.Advance(200 * time.Millisecond)
	h.RecordWindow(win("Firefox", "docs"))
	h.clock.Advance(2900 * time.Millisecond)
	if v := h.View(); v.ChangesIn != 600*time.Millisecond {
		t.Fatalf("2.9 s on the second window: ChangesIn %v, want 600ms", v.ChangesIn)
	}
	h.clock.Advance(7700 * time.Millisecond)
	v = h.View()
	if v.ChangesIn != 100*time.Millisecond || v.Buckets[0].Class != "Editor" {
		t.Fatalf("10.6 s against 10.7 s: got ChangesIn %v, buckets %+v; want 100ms to the overtaking, Editor first", v.ChangesIn, v.Buckets)
	}
	h.clock.Advance(v.ChangesIn + time.Millisecond)
	if v := h.View(); v.Buckets[0].Class != "Firefox" {
		t.Fatalf("past ChangesIn: Buckets[0].Class: got %q, want %q, the second window (%+v)", v.Buckets[0].Class, "Firefox", v.Buckets)
	}

	must(t, h.Complete())
	if v := h.View(); v.ChangesIn != 0 {
		t.Fatalf("in review: ChangesIn %v, want 0", v.ChangesIn)
	}
}

// A wall clock set back a little (less than a jump) leaves the last event
// ahead of now for a moment: the buckets do not grow yet, and ChangesIn
// says when they start to, instead of "never" (0).
func TestChangesInAfterASmallStepBack(t *testing.T) {
	h := newHarness(t)
	h.RecordWindow(win("Editor", "main.go"))
	h.start(t, LevelWarn)
	h.clock.Advance(5 * time.Second)
	h.clock.SetWall(-time.Second)
	h.RecordWindow(win("Firefox", "docs"))
	if v := h.View(); v.ChangesIn <= 0 || v.ChangesIn > 2*time.Second {
		t.Fatalf("just after a 1 s step back: ChangesIn %v, want when the segment starts growing", v.ChangesIn)
	}
}
