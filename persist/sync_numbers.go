package persist

import (
	"fmt"

	"github.com/antidrift/antidrift/service"
)

// Every number another machine's line carries is checked before it is
// counted: a machine gone bad (or a bug there) must not wrap a sum, or
// hide a session from the clock check, on this one.
const (
	// maxUnix is the last second of the year 9999: a session ending later
	// is no clock's.
	maxUnix = 253402300799
	// maxTimeboxSecs is the core's own bound on a timebox, extensions
	// included (service.MaxTimebox).
	maxTimeboxSecs = 24 * 60 * 60
	clockSlackSecs = 60
)

// NumbersProblem says what is impossible about a summary's figures, ""
// when nothing is: times within 1970..9999, the end not before the start,
// and every duration (drift, away, each bucket, each site, the buckets'
// sum) within the session's span, so no sum of them can overflow.
func NumbersProblem(s service.Summary) string {
	switch {
	case s.StartedUnix <= 0 || s.StartedUnix > maxUnix:
		return fmt.Sprintf("started_unix %d is not a time", s.StartedUnix)
	case s.EndedUnix <= 0 || s.EndedUnix > maxUnix:
		return fmt.Sprintf("ended_unix %d is not a time", s.EndedUnix)
	case s.EndedUnix < s.StartedUnix:
		return fmt.Sprintf("it ends (%d) before it starts (%d)", s.EndedUnix, s.StartedUnix)
	case s.TimeboxSecs > maxTimeboxSecs:
		return fmt.Sprintf("timebox_secs %d is more than a timebox can be (%d)", s.TimeboxSecs, maxTimeboxSecs)
	}
	// The buckets run on the boot clock, the times on the wall clock: a
	// minute apart is rounding and slewing, and a session whose wall clock
	// was set (clock_jumps) may hold up to its timebox.
	span := uint64(s.EndedUnix-s.StartedUnix) + clockSlackSecs
	if s.ClockJumps > 0 {
		span = max(span, s.TimeboxSecs+clockSlackSecs)
	}
	if s.DriftSeconds > span {
		return fmt.Sprintf("drift_seconds %d is more than the session's span (%d s)", s.DriftSeconds, span)
	}
	if s.AwaySeconds > span {
		return fmt.Sprintf("away_seconds %d is more than the session's span (%d s)", s.AwaySeconds, span)
	}
	var sum uint64
	for i, b := range s.Buckets {
		if b.Seconds > span {
			return fmt.Sprintf("bucket %d's seconds %d are more than the session's span (%d s)", i+1, b.Seconds, span)
		}
		if sum += b.Seconds; sum > span {
			return fmt.Sprintf("its buckets add up to more than the session's span (%d s)", span)
		}
	}
	for i, st := range s.Sites {
		if st.Seconds > span || st.DriftSeconds > st.Seconds {
			return fmt.Sprintf("site %d's seconds (%d, %d drifting) are more than the session's span (%d s)", i+1, st.Seconds, st.DriftSeconds, span)
		}
	}
	return ""
}
