package report

import (
	"fmt"
	"time"
)

// Span is the time a report covers, [Since, Until), and where the period
// before it starts: the previous period is [Prev, Since). Days start at
// DayStart after local midnight (the day_starts setting, for night owls:
// with 04:00, 01:30 on Tuesday still belongs to Monday).
type Span struct {
	Since, Until, Prev time.Time
	DayStart           time.Duration
}

// LastDays is the last n days, today included, in now's location.
func LastDays(now time.Time, n int, dayStart time.Duration) Span {
	today := dateOf(now, dayStart)
	return Span{
		Since:    startOf(today.AddDate(0, 0, 1-n), dayStart),
		Until:    startOf(today.AddDate(0, 0, 1), dayStart),
		Prev:     startOf(today.AddDate(0, 0, 1-2*n), dayStart),
		DayStart: dayStart,
	}
}

// Dates is the days from since through until (YYYY-MM-DD, both included);
// an empty until is today.
func Dates(since, until string, now time.Time, dayStart time.Duration) (Span, error) {
	loc := now.Location()
	first, err := time.ParseInLocation(time.DateOnly, since, loc)
	if err != nil {
		return Span{}, fmt.Errorf("--since %q is not a date like 2026-11-23", since)
	}
	last := dateOf(now, dayStart)
	if until != "" {
		if last, err = time.ParseInLocation(time.DateOnly, until, loc); err != nil {
			return Span{}, fmt.Errorf("--until %q is not a date like 2026-11-29", until)
		}
	}
	if last.Before(first) {
		return Span{}, fmt.Errorf("--until %s is before --since %s", last.Format(time.DateOnly), since)
	}
	n := daysBetween(first, last) + 1
	return Span{
		Since:    startOf(first, dayStart),
		Until:    startOf(last.AddDate(0, 0, 1), dayStart),
		Prev:     startOf(first.AddDate(0, 0, -n), dayStart),
		DayStart: dayStart,
	}, nil
}

// Between is [since, until) as given (a D-Bus caller's range), the previous
// period being as long.
func Between(since, until time.Time, dayStart time.Duration) Span {
	return Span{Since: since, Until: until, Prev: since.Add(-until.Sub(since)), DayStart: dayStart}
}

// day is the local date t belongs to, as a midnight.
func (s Span) day(t time.Time) time.Time {
	return dateOf(t.In(s.Since.Location()), s.DayStart)
}

// dateOf is the date t belongs to when days start at dayStart, as the
// midnight of that date in t's location.
func dateOf(t time.Time, dayStart time.Duration) time.Time {
	y, m, d := t.Add(-dayStart).Date()
	return time.Date(y, m, d, 0, 0, 0, 0, t.Location())
}

// startOf is when the day of date (a midnight) starts: dayStart after it,
// read on the wall clock.
func startOf(date time.Time, dayStart time.Duration) time.Time {
	y, m, d := date.Date()
	return time.Date(y, m, d, int(dayStart/time.Hour), int(dayStart%time.Hour/time.Minute), 0, 0, date.Location())
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
