package report

import (
	"fmt"
	"time"

	"github.com/antidrift/antidrift/apps"
	"github.com/antidrift/antidrift/service"
)

// Formatting shared by the text and HTML reports, so both say a figure the
// same way.

// Duration is secs as the report says a duration ("2h 05m", "25m",
// "40s"), for another command that shows the same figure (`history`).
func Duration(secs uint64) string { return dur(secs) }

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

// minRateSeconds is the least time at the desk (active, less away) a
// rate of context switches is shown for: under it, two switches in twenty
// seconds would read as "360 an hour". Ten minutes: one switch is then at
// most 6 an hour.
const minRateSeconds = 600

// deskSeconds is the time at the desk that switches per hour is of.
func deskSeconds(t Totals) uint64 { return sub(t.ActiveSeconds, t.AwaySeconds) }

// rateMeans says whether t has time enough at the desk for its switches
// per hour to mean something.
func rateMeans(t Totals) bool { return deskSeconds(t) >= minRateSeconds }

// switchCount is "1 context switch", "2 context switches".
func switchCount(n uint64) string {
	if n == 1 {
		return "1 context switch"
	}
	return fmt.Sprintf("%d context switches", n)
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

// bucketName is how a bucket reads: its window (windowName) and title, or
// a reserved title.
func bucketName(b Bucket) string {
	w := windowName(b.Class, b.App)
	switch {
	case b.Class == "":
		return b.Title
	case b.Title == "":
		return w
	case b.Title == service.OtherTitlesTitle: // a class's remainder, not a title
		return w + " " + b.Title
	}
	return w + " “" + b.Title + "”"
}

// windowName is how a window class reads: its app's name, the class in
// parentheses only when it says more (apps.Label), or the class alone
// when no desktop entry is known.
func windowName(class string, a App) string { return apps.Label(class, a.Name) }

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

// deviceRow is a machine's line in the Devices table of the text and the
// HTML page, its record said in words.
type deviceRow struct {
	Name, Active, OnTask, Record string
	Sessions                     int
	This                         bool
}

func deviceRows(r *Report) []deviceRow {
	out := make([]deviceRow, 0, len(r.Devices))
	for _, d := range r.Devices {
		out = append(out, deviceRow{Name: d.Name, Active: dur(d.Totals.ActiveSeconds), OnTask: dur(d.Totals.OnTaskSeconds),
			Record: recordWords(d), Sessions: d.Totals.Sessions, This: d.ThisDevice})
	}
	return out
}

// recordWords says what a machine's figures were read from and how much
// of it verified: "its shared copy, titles included: 12 sealed sessions
// verified".
func recordWords(d DeviceTotals) string {
	if !d.OK && d.Entries == 0 {
		return "its record does not verify: left out of every figure"
	}
	from := map[string]string{
		StateForm: "this machine's own record",
		"chain":   "its shared copy, titles included",
		"totals":  "its shared totals (titles stay on that machine)",
	}[d.Form]
	if from == "" {
		from = "its record"
	}
	if !d.OK {
		first := "the first sealed session"
		if d.Entries > 1 {
			first = fmt.Sprintf("the first %d sealed sessions", d.Entries)
		}
		return fmt.Sprintf("%s: %s verified, the rest left out", from, first)
	}
	return fmt.Sprintf("%s: %s verified", from, plural(int(d.Entries), "sealed session"))
}

// partsSeconds is the time the parts (on task, drift, away, no evidence)
// split: each machine's active time, so over many machines the time
// active plus the overlap it counts once. Shares of "active time" are of
// this, so they add up to 100%.
func (t Totals) partsSeconds() uint64 { return t.ActiveSeconds + t.OverlapSeconds }

// overlapNote says, beside time active, how much of it ran on two or more
// machines at once and is counted once.
func overlapNote(t Totals) string {
	if t.OverlapSeconds == 0 {
		return ""
	}
	return " · " + dur(t.OverlapSeconds) + " on 2+ machines at once, counted once"
}
