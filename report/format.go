package report

import (
	"fmt"
	"time"

	"github.com/antidrift/antidrift/service"
)

// Formatting shared by the text and HTML reports, so both say a figure the
// same way.

// dur is a duration as a person reads it: "2h 05m", "25m", "40s", "0s".
// Nothing is "0s", not "0m": beside a short session's "4s" a "0m" reads
// like a different unit, or a rounding.
func dur(secs uint64) string {
	switch {
	case secs >= 3600:
		return fmt.Sprintf("%dh %02dm", secs/3600, (secs%3600+30)/60%60)
	case secs >= 60:
		return fmt.Sprintf("%dm", (secs+30)/60)
	}
	return fmt.Sprintf("%ds", secs)
}

// pct is a share as a whole percentage.
func pct(share float64) string { return fmt.Sprintf("%.0f%%", share*100) }

// delta is the change from prev to cur, "" when there is none to show:
// "▲ 3", "▼ 1h 05m", "▲ 4 pts".
type delta struct {
	up   bool
	text string
}

func countDelta(cur, prev uint64) delta {
	if cur == prev {
		return delta{}
	}
	if cur > prev {
		return delta{up: true, text: fmt.Sprint(cur - prev)}
	}
	return delta{text: fmt.Sprint(prev - cur)}
}

func durDelta(cur, prev uint64) delta {
	d := countDelta(cur, prev)
	if d.text != "" {
		d.text = dur(max(cur, prev) - min(cur, prev))
	}
	if d.text == "0s" {
		return delta{}
	}
	return d
}

// pointsDelta is a change of a share in percentage points.
func pointsDelta(cur, prev float64) delta {
	return signedDelta(round(cur*100, 1)-round(prev*100, 1), "%.0f pts")
}

// rateDelta is a change of a rate, to a tenth.
func rateDelta(cur, prev float64) delta { return signedDelta(round(cur-prev, 10), "%.1f") }

// signedDelta says d's size with format and its sign with the arrow.
func signedDelta(d float64, format string) delta {
	switch {
	case d > 0:
		return delta{up: true, text: fmt.Sprintf(format, d)}
	case d < 0:
		return delta{text: fmt.Sprintf(format, -d)}
	}
	return delta{}
}

func (d delta) String() string {
	switch {
	case d.text == "":
		return "="
	case d.up:
		return "▲ " + d.text
	}
	return "▼ " + d.text
}

// periodTitle names the period by its days: "Mon 23 Nov – Sun 29 Nov 2026
// (7 days)".
func periodTitle(p Period, loc *time.Location) string {
	first, _ := time.ParseInLocation(time.DateOnly, p.FirstDay, loc)
	last, _ := time.ParseInLocation(time.DateOnly, p.LastDay, loc)
	days := "1 day"
	if p.Days != 1 {
		days = fmt.Sprintf("%d days", p.Days)
	}
	if p.Days == 1 {
		return fmt.Sprintf("%s (%s)", first.Format("Mon 2 Jan 2006"), days)
	}
	return fmt.Sprintf("%s – %s (%s)", first.Format("Mon 2 Jan"), last.Format("Mon 2 Jan 2006"), days)
}

// dayLabel is a day of the period: "Mon 23 Nov".
func dayLabel(date string, loc *time.Location) string {
	t, err := time.ParseInLocation(time.DateOnly, date, loc)
	if err != nil {
		return date
	}
	return t.Format("Mon 2 Jan")
}

// sessionWhen is when a session ran: "Mon 23 Nov 09:00–09:25".
func sessionWhen(s Session, loc *time.Location) string {
	from, to := time.Unix(s.StartedUnix, 0).In(loc), time.Unix(s.EndedUnix, 0).In(loc)
	return from.Format("Mon 2 Jan 15:04") + "–" + to.Format("15:04")
}

// bucketName is how a bucket reads: class and title, or a reserved title.
func bucketName(b Bucket) string {
	switch {
	case b.Class == "":
		return b.Title
	case b.Title == "":
		return b.Class
	case b.Title == service.OtherTitlesTitle: // a class's remainder, not a title
		return b.Class + " " + b.Title
	}
	return b.Class + " “" + b.Title + "”"
}

// chainWarnings are the sentences a report opens with when its record is
// not whole, in the order the text and HTML show them.
func chainWarnings(r *Report) []string {
	var out []string
	if !r.Chain.OK {
		out = append(out, "The audit chain is broken: "+r.Chain.Problem+". Figures include lines that could not be verified.")
	}
	switch r.Pending {
	case 0:
	case 1:
		out = append(out, "1 ended session is pending: not yet sealed into the audit chain.")
	default:
		out = append(out, fmt.Sprintf("%d ended sessions are pending: not yet sealed into the audit chain.", r.Pending))
	}
	return append(out, r.Problems...)
}
