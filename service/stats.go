package service

import (
	"slices"
	"sort"
	"time"
)

// MaxBucketKeys bounds the distinct (class, title) keys one session keeps,
// so memory stays flat however many titles a session sees. Time for keys
// beyond the bound folds into the reserved (other) bucket.
const MaxBucketKeys = 1000

// Reserved bucket titles. Their class is empty, which no real window has.
const (
	UnavailableTitle = "(evidence unavailable)"
	OtherTitle       = "(other)"
	AwayTitle        = "(away)"      // idle or behind a locked screen
	SuspendedTitle   = "(suspended)" // the machine was asleep
)

type bucketKey struct{ class, title string }

var (
	unavailableKey = bucketKey{title: UnavailableTitle}
	otherKey       = bucketKey{title: OtherTitle}
	awayKey        = bucketKey{title: AwayTitle}
	suspendedKey   = bucketKey{title: SuspendedTitle}
)

func (k bucketKey) reserved() bool { return k.class == "" }

// keyOf is the bucket a raw event's time accrues to.
func keyOf(e FocusEvent) bucketKey {
	if !e.Available {
		return unavailableKey
	}
	return bucketKey{class: e.Class, title: ScrubTitle(e.Title)}
}

// stats is one session's evidence accounting. It is fed raw events, live
// and on replay alike, so replaying the raw log rebuilds identical stats.
//
// Time between two events accrues to the bucket of the earlier one, so the
// buckets always add up to the wall-clock time accounting ran.
type stats struct {
	buckets    map[bucketKey]time.Duration
	distinct   int // non-reserved keys in buckets
	switches   uint32
	drift      time.Duration // time on off-task windows, grace included
	away       time.Duration // time away or suspended
	minimizes  uint32
	clockJumps uint32

	running bool      // accounting; false before the first event and after a pause
	seen    bucketKey // the last bucket with evidence, for counting switches
	hasSeen bool
	winKey  bucketKey // the current window's bucket
	winOff  bool      // whether the current window is off task
	isAway  bool      // the person is away: time accrues to awayAt, never to the window or drift
	awayAt  bucketKey // (away) or (suspended)
	lastAt  time.Time // when the open segment started

	top []Bucket // topN's answer, nil when a credit made it stale

	// credited, when set, hears of every stretch of time as it is credited
	// (see Timeline); live accounting leaves it nil.
	credited func(from, to time.Time, k bucketKey, kind SegmentKind)
}

func newStats() *stats { return &stats{buckets: make(map[bucketKey]time.Duration)} }

// apply accounts one raw event.
func (s *stats) apply(e FocusEvent) {
	at := time.UnixMilli(e.AtUnixMillis)
	if e.Mark == MarkClock {
		// Credit up to where the boot clock says it is, then go on from the
		// new wall time.
		s.clockJumps++
		if s.running {
			s.flush(at.Add(-time.Duration(e.JumpMillis) * time.Millisecond))
			s.lastAt = at
		}
		return
	}
	if s.running && at.Before(s.lastAt) {
		at = s.lastAt // the wall clock stepped back: time never runs backwards here
	}
	switch e.Mark {
	case MarkPause:
		s.flush(at)
		s.running, s.isAway = false, false
		return
	case MarkVerdict:
		s.flush(at)
		s.winOff = e.OffTask
		return
	case MarkMinimized:
		s.minimizes++
		return
	case MarkNotDistraction:
		return
	case MarkAway:
		s.flush(at)
		s.isAway, s.awayAt = true, awayKey
		if e.Reason == AwaySuspended {
			s.awayAt = suspendedKey
		}
		return
	case MarkBack:
		s.flush(at)
		s.isAway = false
		return
	}
	key := keyOf(e)
	if s.running {
		s.flush(at)
		// A switch is a move from one window to another by the person. The
		// moment of no focus a window manager passes through between two
		// windows is not one, nor is coming back to the same window after
		// it, nor whatever happens behind a locked screen.
		if e.Available && s.hasSeen && key != s.seen && !s.isAway {
			s.switches++
		}
	}
	if e.Available {
		s.seen, s.hasSeen = key, true
	}
	s.running, s.winKey, s.winOff, s.lastAt = true, key, e.OffTask, at
}

// flush credits the open segment up to at and restarts it there.
func (s *stats) flush(at time.Time) {
	if !s.running {
		return
	}
	if d := at.Sub(s.lastAt); d > 0 {
		if s.credited != nil {
			s.credited(s.lastAt, at, s.creditKey(), s.kind())
		}
		switch {
		case s.isAway:
			s.credit(s.awayAt, d)
			s.away += d
		case s.winOff:
			s.credit(s.winKey, d)
			s.drift += d
		default:
			s.credit(s.winKey, d)
		}
	}
	s.lastAt = at
}

func (s *stats) credit(k bucketKey, d time.Duration) {
	if _, seen := s.buckets[k]; !seen && !k.reserved() {
		if s.distinct >= MaxBucketKeys {
			k = otherKey
		} else {
			s.distinct++
		}
	}
	s.buckets[k] += d
	s.top = nil
}

// timed is a bucket key with its time, in the order buckets are shown:
// longest first, ties by class then title so the order is stable.
type timed struct {
	k bucketKey
	d time.Duration
}

func (a timed) before(b timed) bool {
	if a.d != b.d {
		return a.d > b.d
	}
	if a.k.class != b.k.class {
		return a.k.class < b.k.class
	}
	return a.k.title < b.k.title
}

func toBuckets(list []timed) []Bucket {
	out := make([]Bucket, len(list))
	for i, x := range list {
		out[i] = Bucket{Class: x.k.class, Title: x.k.title, Seconds: seconds(x.d)}
	}
	return out
}

// topN is the n first of sorted by one pass that keeps the n best, cached
// until the next credit: every listener asks for it on every change.
func (s *stats) topN(n int) []Bucket {
	if s.top == nil {
		best := make([]timed, 0, n+1)
		for k, d := range s.buckets {
			x := timed{k, d}
			if len(best) == n && !x.before(best[n-1]) {
				continue
			}
			i := sort.Search(len(best), func(i int) bool { return x.before(best[i]) })
			best = slices.Insert(best, i, x)
			if len(best) > n {
				best = best[:n]
			}
		}
		s.top = toBuckets(best)
	}
	return slices.Clone(s.top)
}

// liveTopN is topN as of now: the open segment (the current window's, or
// away time, since the last event) is counted up to now, without crediting
// it, so the buckets sum to the time accounted so far at any moment and
// no timer is needed to keep them current. Only the open segment's bucket
// grows, so the cached top n stays right except for where it goes.
//
// changesIn is how long after now the list will read differently with no
// event in between — the growing bucket's seconds round up, or it
// overtakes the bucket above it — so a reader may cache it that long; 0
// when nothing grows.
func (s *stats) liveTopN(n int, now time.Time) (top []Bucket, changesIn time.Duration) {
	top = s.topN(n)
	if !s.running {
		return top, 0
	}
	d := now.Sub(s.lastAt)
	if d <= 0 {
		// The wall clock stepped back a little (less than a jump): the open
		// segment starts growing once now passes the last event again.
		return top, max(-d, 1)
	}
	k := s.winKey
	if s.isAway {
		k = s.awayAt
	}
	if _, seen := s.buckets[k]; !seen && !k.reserved() && s.distinct >= MaxBucketKeys {
		k = otherKey
	}
	live := timed{k, s.buckets[k] + d}
	list := make([]timed, 0, len(top)+1)
	for _, b := range top {
		if x := (timed{bucketKey{b.Class, b.Title}, 0}); x.k != k {
			x.d = s.buckets[x.k]
			list = append(list, x)
		}
	}
	i := sort.Search(len(list), func(i int) bool { return live.before(list[i]) })
	list = slices.Insert(list, i, live)
	// Seconds are rounded: they tick over at every half second.
	changesIn = time.Second - (live.d+time.Second/2)%time.Second
	if i > 0 {
		changesIn = min(changesIn, max(list[i-1].d-live.d, 1))
	}
	return toBuckets(list[:min(len(list), n)]), changesIn
}

// total is all accounted time (the open segment excluded).
func (s *stats) total() time.Duration {
	var t time.Duration
	for _, d := range s.buckets {
		t += d
	}
	return t
}

// sorted returns every bucket in the order they are shown (see timed).
func (s *stats) sorted() []Bucket {
	all := make([]timed, 0, len(s.buckets))
	for k, d := range s.buckets {
		all = append(all, timed{k, d})
	}
	sort.Slice(all, func(i, j int) bool { return all[i].before(all[j]) })
	return toBuckets(all)
}

// seconds rounds a duration to whole seconds for display and the summary.
func seconds(d time.Duration) uint64 {
	if d <= 0 {
		return 0
	}
	return uint64(d.Round(time.Second) / time.Second)
}
