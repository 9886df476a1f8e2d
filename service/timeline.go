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

// Timeline replays a session's raw log (each streams its events, as
// Store.EachEvent does) through the accounting the live session used, and
// returns the stretches its time was credited in, in order, neighbours in
// the same bucket and kind merged. So the timeline a report draws adds up
// to exactly the summary's drift and away time.
func Timeline(each func(fn func(FocusEvent)) error) ([]Segment, error) {
	st := newStats()
	var out []Segment
	st.credited = func(from, to time.Time, k bucketKey, kind SegmentKind) {
		if n := len(out); n > 0 && out[n-1].To.Equal(from) && out[n-1].Kind == kind &&
			out[n-1].Class == k.class && out[n-1].Title == k.title {
			out[n-1].To = to
			return
		}
		out = append(out, Segment{From: from, To: to, Class: k.class, Title: k.title, Kind: kind})
	}
	err := each(st.apply)
	return out, err
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
