package report

import (
	"fmt"
	"time"
)

// Span is the time a report covers, [Since, Until), and where the period
// before it starts: the previous period is [Prev, Since).
type Span struct {
	Since, Until, Prev time.Time
}

// LastDays is the last n local days, today included: days start at
// midnight in now's location.
func LastDays(now time.Time, n int) Span {
	y, m, d := now.Date()
	tomorrow := time.Date(y, m, d+1, 0, 0, 0, 0, now.Location())
	return Span{Since: tomorrow.AddDate(0, 0, -n), Until: tomorrow, Prev: tomorrow.AddDate(0, 0, -2*n)}
}

// Dates is the local days from since through until (YYYY-MM-DD, both
// included); an empty until is now's day.
func Dates(since, until string, now time.Time) (Span, error) {
	loc := now.Location()
	first, err := time.ParseInLocation(time.DateOnly, since, loc)
	if err != nil {
		return Span{}, fmt.Errorf("--since %q is not a date like 2026-11-23", since)
	}
	last := time.Date(now.Year(), now.Month(), now.Day(), 0, 0, 0, 0, loc)
	if until != "" {
		if last, err = time.ParseInLocation(time.DateOnly, until, loc); err != nil {
			return Span{}, fmt.Errorf("--until %q is not a date like 2026-11-29", until)
		}
	}
	if last.Before(first) {
		return Span{}, fmt.Errorf("--until %s is before --since %s", last.Format(time.DateOnly), since)
	}
	n := daysBetween(first, last) + 1
	return Span{Since: first, Until: last.AddDate(0, 0, 1), Prev: first.AddDate(0, 0, -n)}, nil
}

// Between is [since, until) as given (a D-Bus caller's range), the previous
// period being as long.
func Between(since, until time.Time) Span {
	return Span{Since: since, Until: until, Prev: since.Add(-until.Sub(since))}
}

// daysBetween counts calendar days from a to b (both midnights in one
// location), right across daylight-saving changes.
func daysBetween(a, b time.Time) int {
	ay, am, ad := a.Date()
	by, bm, bd := b.Date()
	ua := time.Date(ay, am, ad, 0, 0, 0, 0, time.UTC)
	ub := time.Date(by, bm, bd, 0, 0, 0, 0, time.UTC)
	return int(ub.Sub(ua) / (24 * time.Hour))
}

// midnight is the start of t's local day.
func midnight(t time.Time) time.Time {
	y, m, d := t.Date()
	return time.Date(y, m, d, 0, 0, 0, 0, t.Location())
}
