package service

import (
	"slices"
	"strings"
	"time"
)

// MaxBucketKeys bounds the distinct (class, title) keys one session keeps,
// so memory stays flat however many titles a session sees. Time for keys
// beyond the bound folds into the reserved (other) bucket. Titles are
// folded first (FoldTitle), so a ticking title is one key, not one a
// second.
const MaxBucketKeys = 1000

// Reserved bucket titles. Their class is empty, which no real window has.
const (
	UnavailableTitle = "(evidence unavailable)"
	OtherTitle       = "(other)"
	AwayTitle        = "(away)"      // idle or behind a locked screen
	SuspendedTitle   = "(suspended)" // the machine was asleep
)

// OtherTitlesTitle is the title of a class's remainder in a bounded list of
// buckets (see listed): the time of the class's titles not shown by name.
const OtherTitlesTitle = "(other titles)"

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
	return bucketKey{class: e.Class, title: FoldTitle(e.Title)}
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

	// total is the sum of buckets; byClass the same per class, over the
	// non-reserved buckets (at most MaxBucketKeys classes, the rest
	// counted under ""), kept with top (see best). So a bounded list's
	// remainders cost nothing to find.
	total   time.Duration
	byClass map[string]time.Duration
	// top is the TopBuckets best buckets in shown order, kept as time is
	// credited once anyone asked for it (replay never does): a credit
	// moves one bucket up, so keeping it costs O(TopBuckets), not a pass
	// over every bucket, per event.
	top      []timed
	topValid bool
	// Buffers a read reuses (listed, liveTopN): what it returns is copied.
	listBuf, liveBuf []timed

	// sites is the time per host of the pages in front (sites.go); winSite
	// the current window's host, "" when no page is known.
	sites   siteTally
	winSite string

	// review is the evidence the review proposes from (reviewevidence.go).
	review *reviewTally

	// credited, when set, hears of every stretch of time as it is credited
	// (see Timeline); live accounting leaves it nil.
	credited func(from, to time.Time, k bucketKey, kind SegmentKind)
}

func newStats() *stats {
	return &stats{buckets: make(map[bucketKey]time.Duration), byClass: make(map[string]time.Duration), sites: siteTally{}, review: newReviewTally()}
}

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
		host := ""
		if strings.EqualFold(e.Class, s.winKey.class) {
			host = s.winSite
		}
		s.review.answered(e.Class, host)
		return
	case MarkTabBlocked, MarkTask:
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
	s.winSite = ""
	if e.Available {
		s.winSite = SiteHost(e.Site)
	}
}

// flush credits the open segment up to at and restarts it there.
func (s *stats) flush(at time.Time) {
	if !s.running {
		return
	}
	if d := at.Sub(s.lastAt); d > 0 {
		k, kind := s.creditKey(), s.kind()
		if s.credited != nil {
			s.credited(s.lastAt, at, k, kind)
		}
		s.review.credit(s.lastAt, at, k.class, s.winSite, kind)
		switch {
		case s.isAway:
			s.credit(s.awayAt, d)
			s.away += d
		case s.winOff:
			s.credit(s.winKey, d)
			s.drift += d
			s.sites.credit(s.winSite, d, true)
		default:
			s.credit(s.winKey, d)
			s.sites.credit(s.winSite, d, false)
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
	now := s.buckets[k] + d
	s.buckets[k] = now
	s.total += d
	if s.topValid {
		s.addToClass(k, d)
		s.top = raise(s.top, timed{k, now}, TopBuckets)
	}
}

// addToClass counts d to k's class in byClass.
func (s *stats) addToClass(k bucketKey, d time.Duration) {
	if k.reserved() {
		return
	}
	c := k.class
	if _, seen := s.byClass[c]; !seen && len(s.byClass) >= MaxBucketKeys {
		c = ""
	}
	s.byClass[c] += d
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

// raise updates top, the n best buckets in order, for bucket x.k whose
// time grew to x.d. Times only grow, so x is the one bucket that can move
// up or enter, pushing out the last.
func raise(top []timed, x timed, n int) []timed {
	i := slices.IndexFunc(top, func(t timed) bool { return t.k == x.k })
	switch {
	case i >= 0:
		top[i] = x
	case len(top) < n:
		top, i = append(top, x), len(top)
	case x.before(top[n-1]):
		top[n-1], i = x, n-1
	default:
		return top
	}
	for ; i > 0 && top[i].before(top[i-1]); i-- {
		top[i], top[i-1] = top[i-1], top[i]
	}
	return top
}

// best is the n best buckets. The first call finds them, and the time per
// class, by one pass over every bucket; from then on credit keeps both. A
// replay, which never asks until it is done, pays for neither per event.
func (s *stats) best() []timed {
	if !s.topValid {
		s.top = make([]timed, 0, TopBuckets)
		clear(s.byClass)
		for k, d := range s.buckets {
			s.top = raise(s.top, timed{k, d}, TopBuckets)
			s.addToClass(k, d)
		}
		s.topValid = true
	}
	return s.top
}

func toBuckets(list []timed) []Bucket {
	out := make([]Bucket, len(list))
	for i, x := range list {
		out[i] = Bucket{Class: x.k.class, Title: x.k.title, Seconds: seconds(x.d)}
	}
	return out
}

// listed is the bounded list of buckets a person sees — the View's
// Buckets, the sealed summary — given top, the best buckets by name: them,
// then for each class among them one "(other titles)" remainder with the
// time of its titles not named, every reserved bucket (away, evidence
// unavailable, ...), and (other) for what is left (classes not named at
// all, titles past MaxBucketKeys). So the list is at most 2·TopBuckets+5
// long whatever the session saw, and its times add up to total exactly.
// All in shown order.
//
// live, when extra > 0, is the bucket growing right now, already counted
// in top; extra is its growth, not yet in byClass or total. grows is the
// index of the entry that grows with it (-1 when none).
func (s *stats) listed(top []timed, live bucketKey, extra time.Duration) (list []timed, grows int) {
	// At most 45 entries: linear scans beat maps, and the list is built in
	// a buffer kept for the next call (callers copy it out), so a read
	// allocates nothing here.
	list = append(s.listBuf[:0], top...)
	find := func(k bucketKey) int {
		return slices.IndexFunc(list, func(t timed) bool { return t.k == k })
	}
	var sum time.Duration
	for _, x := range top {
		sum += x.d
	}
	add := func(k bucketKey, d time.Duration) {
		if d <= 0 {
			return
		}
		if i := find(k); i >= 0 {
			list[i].d += d
		} else {
			list = append(list, timed{k, d})
		}
		sum += d
	}
	for i, x := range top {
		c := x.k.class
		if x.k.reserved() || slices.ContainsFunc(top[:i], func(t timed) bool { return !t.k.reserved() && t.k.class == c }) {
			continue // once per class
		}
		rem := s.byClass[c]
		for _, y := range top[i:] {
			if !y.k.reserved() && y.k.class == c {
				rem -= y.d
			}
		}
		if !live.reserved() && live.class == c {
			rem += extra
		}
		add(bucketKey{c, OtherTitlesTitle}, rem)
	}
	for _, k := range [...]bucketKey{awayKey, suspendedKey, unavailableKey, otherKey} {
		if find(k) < 0 {
			d := s.buckets[k]
			if k == live && extra > 0 {
				d += extra
			}
			add(k, d)
		}
	}
	add(otherKey, s.total+extra-sum)
	grows = -1
	if extra > 0 {
		// The growing time shows in live's own entry, else in its
		// class's remainder, else in (other).
		for _, k := range [...]bucketKey{live, {live.class, OtherTitlesTitle}, otherKey} {
			if i := find(k); i >= 0 && (k == live || !live.reserved()) {
				grows = i
				break
			}
		}
	}
	var key bucketKey
	if grows >= 0 {
		key = list[grows].k
	}
	slices.SortFunc(list, func(a, b timed) int {
		if a.before(b) {
			return -1
		}
		if b.before(a) {
			return 1
		}
		return 0
	})
	if grows >= 0 {
		grows = find(key)
	}
	s.listBuf = list
	return list, grows
}

// topSites is the hosts with the most time (TopSites, the rest in
// (other)); nil when no page was ever known.
func (s *stats) topSites() []SiteTime {
	if len(s.sites) == 0 {
		return nil
	}
	return s.sites.top(TopSites)
}

// topN is the bounded list of buckets (see listed) as credited so far.
func (s *stats) topN() []Bucket {
	list, _ := s.listed(s.best(), bucketKey{}, 0)
	return toBuckets(list)
}

// liveTopN is topN as of now: the open segment (the current window's, or
// away time, since the last event) is counted up to now, without crediting
// it, so the buckets sum to the time accounted so far at any moment and
// no timer is needed to keep them current. Only the open segment's bucket
// grows, so the kept top stays right except for where it goes.
//
// changesIn is how long after now the list will read differently with no
// event in between — the growing entry's seconds round up, it overtakes
// the entry above it, or the growing bucket earns a place by name — so a
// reader may cache it that long; 0 when nothing grows.
func (s *stats) liveTopN(now time.Time) (top []Bucket, changesIn time.Duration) {
	if !s.running {
		return s.topN(), 0
	}
	d := now.Sub(s.lastAt)
	if d <= 0 {
		// The wall clock stepped back a little (less than a jump): the open
		// segment starts growing once now passes the last event again.
		return s.topN(), max(-d, 1)
	}
	k := s.winKey
	if s.isAway {
		k = s.awayAt
	}
	if _, seen := s.buckets[k]; !seen && !k.reserved() && s.distinct >= MaxBucketKeys {
		k = otherKey
	}
	best := s.best()
	live := timed{k, s.buckets[k] + d}
	withLive := raise(append(s.liveBuf[:0], best...), live, TopBuckets)
	s.liveBuf = withLive
	list, grows := s.listed(withLive, k, d)
	if grows < 0 { // cannot happen: the growing time is always in some entry
		return toBuckets(list), time.Second
	}
	g := list[grows]
	// Seconds are rounded: they tick over at every half second.
	changesIn = time.Second - (g.d+time.Second/2)%time.Second
	if grows > 0 {
		changesIn = min(changesIn, max(list[grows-1].d-g.d, 1))
	}
	if g.k != k && len(withLive) == TopBuckets {
		changesIn = min(changesIn, max(withLive[TopBuckets-1].d-live.d, 1))
	}
	return toBuckets(list), changesIn
}

// seconds rounds a duration to whole seconds for display and the summary.
func seconds(d time.Duration) uint64 {
	if d <= 0 {
		return 0
	}
	return uint64(d.Round(time.Second) / time.Second)
}
