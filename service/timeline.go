package service

import "time"

// SegmentKind is what a stretch of a session's active time was.
type SegmentKind string

const (
	SegmentOnTask      SegmentKind = "on_task"
	SegmentDrift       SegmentKind = "drift"
	SegmentAway        SegmentKind = "away" // idle, locked or suspended
	SegmentUnavailable SegmentKind = "unavailable"
)

// Segment is one stretch of a session's active time spent in one bucket.
// Class is empty for the reserved buckets; Title is the scrubbed title.
type Segment struct {
	From, To time.Time
	Class    string
	Title    string
	Kind     SegmentKind
}

// Timeline replays a session's raw log through the accounting the live
// session used, and keeps the stretches its time was credited in, in order,
// neighbours in the same bucket and kind merged: so the timeline a report
// draws adds up to exactly the summary's drift and away time. Feed it the
// log's events in order, then read Segments:
//
//	tl := service.NewTimeline()
//	err := store.EachEvent(id, tl.Add)
//	segments := tl.Segments()
type Timeline struct {
	st   *stats
	segs []Segment
}

// NewTimeline starts an empty replay.
func NewTimeline() *Timeline {
	tl := &Timeline{st: newStats()}
	tl.st.credited = tl.credit
	return tl
}

// Add replays the next event of the log.
func (tl *Timeline) Add(e FocusEvent) { tl.st.apply(e) }

// Segments is the time credited so far, in order.
func (tl *Timeline) Segments() []Segment { return tl.segs }

// credit records one stretch of credited time, merged into the one before
// when it continues it.
func (tl *Timeline) credit(from, to time.Time, k bucketKey, kind SegmentKind) {
	if n := len(tl.segs); n > 0 {
		last := &tl.segs[n-1]
		if last.To.Equal(from) && last.Kind == kind && last.Class == k.class && last.Title == k.title {
			last.To = to
			return
		}
	}
	tl.segs = append(tl.segs, Segment{From: from, To: to, Class: k.class, Title: k.title, Kind: kind})
}

// creditKey is the bucket the open segment accrues to (see flush).
func (s *stats) creditKey() bucketKey {
	if s.isAway {
		return s.awayAt
	}
	return s.winKey
}

// kind is what the open segment counts as.
func (s *stats) kind() SegmentKind {
	switch {
	case s.isAway:
		return SegmentAway
	case s.winOff:
		return SegmentDrift
	case s.winKey == unavailableKey:
		return SegmentUnavailable
	}
	return SegmentOnTask
}
