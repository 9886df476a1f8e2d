package report

import (
	"fmt"
	"io"
	"strings"
	"time"
	"unicode/utf8"

	"github.com/antidrift/antidrift/internal/inert"
)

// Text writes the report for a terminal: 80 columns, unicode bars, and
// ANSI colour only when colour is true (the caller decides: a tty, and no
// NO_COLOR). Every bar also differs by its character, so it reads without
// colour too. Every text from outside in it (next actions, classes, titles,
// the chain's problems) is made inert for the terminal (inert.Terminal).
func Text(w io.Writer, r *Report, loc *time.Location, colour bool) error {
	t := &textWriter{colour: colour, loc: loc}
	t.header(r)
	t.totals(r)
	t.devices(r)
	t.days(r)
	t.sessions(r)
	t.windows(r)
	t.sites(r)
	_, err := io.WriteString(w, t.b.String())
	return err
}

const (
	textWidth = 80
	dayBar    = 44
	stripLen  = 72
)

type textWriter struct {
	b      strings.Builder
	colour bool
	loc    *time.Location
}

func (t *textWriter) line(format string, a ...any) {
	t.b.WriteString(strings.TrimRight(fmt.Sprintf(format, a...), " "))
	t.b.WriteByte('\n')
}

// paint wraps s in an ANSI colour code when colour is on.
func (t *textWriter) paint(code, s string) string {
	if !t.colour || s == "" {
		return s
	}
	return "\x1b[" + code + "m" + s + "\x1b[0m"
}

var kindGlyph = map[string]string{"on_task": "█", "drift": "▒", "away": "░", "unavailable": "·", "": " "}
var kindColour = map[string]string{"on_task": "32", "drift": "31", "away": "34", "unavailable": "2"}

// cells draws kinds as glyphs, each run in its colour.
func (t *textWriter) cells(kinds []string) string {
	var b strings.Builder
	for i := 0; i < len(kinds); {
		j := i
		for j < len(kinds) && kinds[j] == kinds[i] {
			j++
		}
		b.WriteString(t.paint(kindColour[kinds[i]], strings.Repeat(kindGlyph[kinds[i]], j-i)))
		i = j
	}
	return b.String()
}

func (t *textWriter) legend() string {
	var parts []string
	for _, k := range kinds {
		parts = append(parts, t.paint(kindColour[k], kindGlyph[k])+" "+kindName(k))
	}
	return strings.Join(parts, "  ")
}

func (t *textWriter) header(r *Report) {
	t.line("%s", t.paint("1", "antidrift report: "+periodTitle(r.Period, t.loc)))
	for _, warn := range chainWarnings(r) {
		for i, l := range wrap(inert.Terminal(warn), textWidth-2) {
			mark := "  "
			if i == 0 {
				mark = t.paint("33", "!") + " "
			}
			t.line("%s%s", mark, l)
		}
	}
	t.line("")
}

func (t *textWriter) totals(r *Report) {
	c, p := r.Totals, r.Previous
	// Against a previous period without sessions every change would be
	// the whole figure: "▲ 25 pts" of nothing. Say there is nothing.
	none := p.Sessions == 0
	row := func(label, cur, prev string, d delta) {
		ch := ""
		if none {
			prev = "—"
		} else if d.text != "" || cur != "" {
			ch = d.String()
			if d.text != "" && d.up {
				ch = t.paint("1", ch)
			}
		}
		t.line("  %-22s%14s%14s  %s", label, cur, prev, ch)
	}
	t.line("%s", t.paint("1", fmt.Sprintf("%-24s%14s%14s  %s", "Totals", "this period", "previous", "change")))
	row("sessions", fmt.Sprint(c.Sessions), fmt.Sprint(p.Sessions), countDelta(uint64(c.Sessions), uint64(p.Sessions)))
	row("  completed", fmt.Sprint(c.Completed), fmt.Sprint(p.Completed), countDelta(uint64(c.Completed), uint64(p.Completed)))
	row("  expired", fmt.Sprint(c.Expired), fmt.Sprint(p.Expired), countDelta(uint64(c.Expired), uint64(p.Expired)))
	row("  abandoned", fmt.Sprint(c.Abandoned), fmt.Sprint(p.Abandoned), countDelta(uint64(c.Abandoned), uint64(p.Abandoned)))
	row("completion rate", pct(c.CompletionRate), pct(p.CompletionRate), pointsDelta(c.CompletionRate, p.CompletionRate))
	row("time committed", dur(c.CommittedSeconds), dur(p.CommittedSeconds), durDelta(c.CommittedSeconds, p.CommittedSeconds))
	row("time active", dur(c.ActiveSeconds), dur(p.ActiveSeconds), durDelta(c.ActiveSeconds, p.ActiveSeconds))
	if c.OverlapSeconds > 0 {
		t.line("  %-22s%14s", "  overlap counted once", dur(c.OverlapSeconds))
	}
	row("  on task", dur(c.OnTaskSeconds), dur(p.OnTaskSeconds), durDelta(c.OnTaskSeconds, p.OnTaskSeconds))
	row("  drift", dur(c.DriftSeconds), dur(p.DriftSeconds), durDelta(c.DriftSeconds, p.DriftSeconds))
	row("  away", dur(c.AwaySeconds), dur(p.AwaySeconds), durDelta(c.AwaySeconds, p.AwaySeconds))
	if c.UnavailableSeconds+p.UnavailableSeconds > 0 {
		row("  no evidence", dur(c.UnavailableSeconds), dur(p.UnavailableSeconds), durDelta(c.UnavailableSeconds, p.UnavailableSeconds))
	}
	rate := func(t Totals) string {
		if !rateMeans(t) {
			return "—"
		}
		return fmt.Sprintf("%.1f", t.SwitchesPerHour)
	}
	if rateMeans(c) && rateMeans(p) {
		row("switches per hour", rate(c), rate(p), rateDelta(c.SwitchesPerHour, p.SwitchesPerHour))
	} else {
		// A rate of a few minutes is noise, and no change is shown
		// against one.
		t.line("  %-22s%14s%14s", "switches per hour", rate(c), rate(p))
	}
	row("windows iconified", fmt.Sprint(c.Minimized), fmt.Sprint(p.Minimized), countDelta(c.Minimized, p.Minimized))
	row("break-glass uses", fmt.Sprint(c.BreakGlass), fmt.Sprint(p.BreakGlass), countDelta(uint64(c.BreakGlass), uint64(p.BreakGlass)))
	if none {
		t.line("  %s", t.paint("2", "no sessions in the previous period to compare with"))
	}
	if !rateMeans(c) && c.Sessions > 0 {
		for _, l := range wrap(fmt.Sprintf("switches per hour: %s in %s at the desk, too short for a rate (under ten minutes)",
			switchCount(c.Switches), dur(deskSeconds(c))), textWidth-2) {
			t.line("  %s", t.paint("2", l))
		}
	}
	t.line("")
}

func (t *textWriter) days(r *Report) {
	rows := dayRows(r.Days, t.loc)
	if len(rows) == 0 {
		return
	}
	title := "Per day"
	if len(rows) != len(r.Days) {
		title = "Per week"
	}
	t.line("%s  %s", t.paint("1", title), t.legend())
	var most uint64
	width := 0
	for _, d := range rows {
		most = max(most, d.total())
		width = max(width, len(d.label)+1)
	}
	for _, d := range rows {
		bar := make([]string, 0, dayBar)
		if most > 0 {
			for _, part := range []struct {
				kind string
				secs uint64
			}{{"on_task", d.OnTaskSeconds}, {"drift", d.DriftSeconds}, {"away", d.AwaySeconds}, {"unavailable", d.UnavailableSeconds}} {
				n := int((part.secs*dayBar + most/2) / most)
				for range n {
					bar = append(bar, part.kind)
				}
			}
		}
		bar = bar[:min(len(bar), dayBar)]
		for len(bar) < dayBar {
			bar = append(bar, "")
		}
		sessions := ""
		if d.Sessions > 0 {
			sessions = plural(d.Sessions, "session")
		}
		t.line("  %-*s%s %7s  %s", width, d.label, t.cells(bar), dur(d.total()), sessions)
	}
	t.line("")
}

func (t *textWriter) sessions(r *Report) {
	if len(r.Sessions) == 0 {
		t.line("%s", t.paint("1", "No sessions in this period."))
		t.line("")
		return
	}
	t.line("%s", t.paint("1", "Sessions"))
	for _, s := range r.Sessions {
		extra := ""
		if s.Pending {
			extra = "  pending"
		}
		if s.Device != "" {
			extra += "  " + clip(inert.Terminal(s.Device), 12)
		}
		t.line("  %-22s  %-9s  %-7s %7s  drift %s%s", sessionWhen(s, t.loc), inert.Terminal(s.Outcome), inert.Terminal(s.Enforcement), dur(s.ActiveSeconds), pct(s.DriftShare), extra)
		t.line("    %s", clip(inert.Terminal(s.NextAction), textWidth-4))
		if s.Timeline != nil {
			t.line("    %s", t.cells(strip(s.Timeline, stripLen)))
			continue
		}
		var top []string
		for _, b := range s.Top {
			top = append(top, inert.Terminal(bucketName(b))+" "+dur(b.Seconds))
		}
		if len(top) > 0 {
			t.line("    %s", clip("top: "+strings.Join(top, " · "), textWidth-4))
		}
	}
	t.line("")
}

func (t *textWriter) windows(r *Report) {
	if len(r.Windows) == 0 {
		return
	}
	unsplit := false
	for _, w := range r.Windows {
		unsplit = unsplit || w.UnsplitSeconds > 0
	}
	head := fmt.Sprintf("%-34s%12s%12s", "Top windows", "on task", "drift")
	if unsplit {
		head += fmt.Sprintf("%12s", "unsplit")
	}
	t.line("%s", t.paint("1", head))
	show := func(secs uint64) string {
		if secs == 0 {
			return "—"
		}
		return dur(secs)
	}
	for _, w := range r.Windows {
		l := fmt.Sprintf("  %-32s%12s%12s", clip(inert.Terminal(windowName(w.Class, w.App)), 32), show(w.OnTaskSeconds), show(w.DriftSeconds))
		if unsplit {
			l += fmt.Sprintf("%12s", show(w.UnsplitSeconds))
		}
		t.line("%s", l)
		var titles []string
		for _, b := range w.Titles {
			titles = append(titles, "“"+inert.Terminal(b.Title)+"” "+dur(b.Seconds))
		}
		if len(titles) > 0 {
			t.line("    %s", clip(strings.Join(titles, " · "), textWidth-4))
		}
	}
	if unsplit {
		t.line("")
		for _, l := range wrap("unsplit: from sessions whose raw log is pruned; their summary records a window's time but not whether it was drift.", textWidth-2) {
			t.line("  %s", l)
		}
	}
}

// dayRow is a bar of the per-day chart: a day, or a week when the period
// is too long for one line a day.
type dayRow struct {
	Day
	label string
}

func (d dayRow) total() uint64 {
	return d.OnTaskSeconds + d.DriftSeconds + d.AwaySeconds + d.UnavailableSeconds
}

// maxDayRows is the longest period drawn a day per line (and a day per bar
// in HTML); longer ones are drawn a week per line.
const maxDayRows = 31

func dayRows(days []Day, loc *time.Location) []dayRow {
	size := 1
	if len(days) > maxDayRows {
		size = 7
	}
	var rows []dayRow
	for i := 0; i < len(days); i += size {
		row := dayRow{Day: Day{Date: days[i].Date}, label: dayLabel(days[i].Date, loc)}
		if size > 1 {
			row.label = "wk " + row.label
		}
		for _, d := range days[i:min(i+size, len(days))] {
			row.Sessions += d.Sessions
			row.OnTaskSeconds += d.OnTaskSeconds
			row.DriftSeconds += d.DriftSeconds
			row.AwaySeconds += d.AwaySeconds
			row.UnavailableSeconds += d.UnavailableSeconds
		}
		rows = append(rows, row)
	}
	return rows
}

func plural(n int, word string) string {
	if n == 1 {
		return "1 " + word
	}
	return fmt.Sprintf("%d %ss", n, word)
}

// clip shortens s to n characters, with "…" when it cut.
func clip(s string, n int) string {
	if utf8.RuneCountInString(s) <= n {
		return s
	}
	r := []rune(s)
	return string(r[:n-1]) + "…"
}

// wrap breaks s into lines of at most n characters at spaces.
func wrap(s string, n int) []string {
	var lines []string
	cur := ""
	for _, word := range strings.Fields(s) {
		switch {
		case cur == "":
			cur = word
		case utf8.RuneCountInString(cur)+1+utf8.RuneCountInString(word) <= n:
			cur += " " + word
		default:
			lines = append(lines, cur)
			cur = word
		}
	}
	if cur != "" {
		lines = append(lines, cur)
	}
	return lines
}

// devices writes the Devices table, when the report covers many
// machines: each machine's figures, and on the line below them what they
// were read from.
func (t *textWriter) devices(r *Report) {
	if len(r.Devices) == 0 {
		return
	}
	t.line("%s", t.paint("1", fmt.Sprintf("%-28s%10s%10s%10s", "Devices", "sessions", "active", "on task")))
	for _, d := range deviceRows(r) {
		name := inert.Terminal(d.Name)
		if d.This {
			name += " (this machine)"
		}
		t.line("  %-26s%10d%10s%10s", clip(name, 26), d.Sessions, d.Active, d.OnTask)
		for _, l := range wrap(d.Record, textWidth-4) {
			t.line("    %s", l)
		}
	}
	if r.Totals.OverlapSeconds > 0 {
		t.line("  time active counts %s once: sessions ran on two machines at the same time", dur(r.Totals.OverlapSeconds))
	}
	for _, d := range r.Devices {
		if d.Pinned != "" {
			// The whole sentence is in the JSON's devices[].pinned.
			t.line("  %s", clip(inert.Terminal(d.Name)+": first seen, its key pinned: "+d.Key, textWidth-2))
		}
	}
	t.line("")
}

// sites is "Top sites", beside "Top windows": the hosts of the pages in
// front, as the sessions' summaries keep them.
func (t *textWriter) sites(r *Report) {
	if len(r.Sites) == 0 {
		return
	}
	t.line("")
	t.line("%s", t.paint("1", fmt.Sprintf("%-34s%12s%12s", "Top sites", "on task", "drift")))
	for _, s := range r.Sites {
		t.line("  %-32s%12s%12s", clip(inert.Terminal(s.Host), 32), showSecs(s.OnTaskSeconds), showSecs(s.DriftSeconds))
	}
}

// showSecs is a column's duration, "—" for none.
func showSecs(secs uint64) string {
	if secs == 0 {
		return "—"
	}
	return dur(secs)
}
