package report

import (
	_ "embed"
	"encoding/base64"
	"fmt"
	"html/template"
	"io"
	"strings"
	"time"

	"github.com/antidrift/antidrift/apps"
	"github.com/antidrift/antidrift/internal/inert"
)

// HTML writes the report as one self-contained page: inline CSS and SVG,
// no script, no font, image or link that would make a request, readable in
// light and dark mode and on paper.
//
// Every text from outside (next actions, classes, titles, hosts, device
// names, the chain's problems) is shown as the text report shows it:
// inert.Terminal writes a control character as its escape (\x1b), which
// a browser would otherwise draw as a box or not at all; html/template
// then escapes it for the page.
//
// An app's icon (App.Icon, looked up with apps.IconData) is embedded in
// the page as a data: URI, a PNG or an SVG as an <img>, in which no
// script of the SVG runs and nothing is fetched; the page's
// Content-Security-Policy allows images from data: alone.
func HTML(w io.Writer, r *Report, loc *time.Location) error {
	return page.Execute(w, htmlView{r: r, loc: loc, icons: map[string]template.URL{}})
}

// iconSize is the size in pixels an icon is looked up for: shown at 20
// CSS pixels, sharp on a screen of scale 1.5.
const iconSize = 32

// icon is the data: URI of an app's icon, "" when it has none that can
// be read; each icon is read once per page.
func (v htmlView) icon(a App) template.URL {
	if a.Icon == "" {
		return ""
	}
	if u, ok := v.icons[a.Icon]; ok {
		return u
	}
	var u template.URL
	if data, mime, ok := apps.IconData(a.Icon, iconSize); ok {
		// A data: URI this code writes from the file's bytes and a media
		// type it chose: nothing of the file's name or text reaches the
		// attribute but base64.
		u = template.URL("data:" + mime + ";base64," + base64.StdEncoding.EncodeToString(data))
	}
	v.icons[a.Icon] = u
	return u
}

//go:embed page.html.tmpl
var pageTemplate string

var page = template.Must(template.New("page").Parse(pageTemplate))

// htmlView is what the template reads: the report's figures already said
// as a person reads them, and the charts' geometry.
type htmlView struct {
	r     *Report
	loc   *time.Location
	icons map[string]template.URL // by App.Icon
}

func (v htmlView) Title() string  { return "antidrift report: " + v.Period() }
func (v htmlView) Period() string { return periodTitle(v.r.Period, v.loc) }
func (v htmlView) Warnings() []string {
	out := chainWarnings(v.r)
	for i := range out {
		out[i] = inert.Terminal(out[i])
	}
	return out
}
func (v htmlView) PreviousName() string {
	if v.r.Period.Days == 1 {
		return "the day before"
	}
	return fmt.Sprintf("the previous %d days", v.r.Period.Days)
}

// card is one figure of the totals. Good and Bad colour its change: for
// drift, away, switches and iconified windows less is better.
type card struct {
	Label, Value, Note string
	Delta              string
	Good, Bad          bool
}

func newCard(label, value, note string, d delta, lessIsBetter bool) card {
	c := card{Label: label, Value: value, Note: note, Delta: "= same"}
	if d.text != "" {
		c.Delta = d.String()
		c.Good = d.up != lessIsBetter
		c.Bad = !c.Good
	}
	return c
}

func (v htmlView) Cards() []card {
	c, p := v.r.Totals, v.r.Previous
	cards := []card{
		newCard("sessions", fmt.Sprint(c.Sessions), fmt.Sprintf("%d completed · %d expired · %d abandoned", c.Completed, c.Expired, c.Abandoned),
			countDelta(uint64(c.Sessions), uint64(p.Sessions)), false),
		newCard("completion rate", pct(c.CompletionRate), "completed of all sessions", pointsDelta(c.CompletionRate, p.CompletionRate), false),
		newCard("on task", dur(c.OnTaskSeconds), pct(share(c.OnTaskSeconds, c.partsSeconds()))+" of active time", durDelta(c.OnTaskSeconds, p.OnTaskSeconds), false),
		newCard("drift", dur(c.DriftSeconds), pct(share(c.DriftSeconds, c.partsSeconds()))+" of active time", durDelta(c.DriftSeconds, p.DriftSeconds), true),
		newCard("away", dur(c.AwaySeconds), pct(share(c.AwaySeconds, c.partsSeconds()))+" of active time", durDelta(c.AwaySeconds, p.AwaySeconds), true),
		newCard("time active", dur(c.ActiveSeconds), "of "+dur(c.CommittedSeconds)+" committed"+overlapNote(c), durDelta(c.ActiveSeconds, p.ActiveSeconds), false),
		switchesCard(c, p),
		newCard("windows iconified", fmt.Sprint(c.Minimized), "by block and locked", countDelta(c.Minimized, p.Minimized), true),
		// Neither good nor bad: the way out is the person's to take.
		{Label: "break-glass uses", Value: fmt.Sprint(c.BreakGlass), Note: "sessions abandoned through the hold", Delta: neutral(countDelta(uint64(c.BreakGlass), uint64(p.BreakGlass)))},
	}
	if p.Sessions == 0 {
		// Every change would be the whole figure: "▲ 25 pts" of nothing.
		// The heading says so once (NothingBefore).
		for i := range cards {
			cards[i].Delta, cards[i].Good, cards[i].Bad = "", false, false
		}
	}
	return cards
}

// NothingBefore says the previous period has no session, so the cards
// show no change: said once, in the heading, not in every card.
func (v htmlView) NothingBefore() bool { return v.r.Previous.Sessions == 0 }

// switchesCard is the rate of context switches, or, for too little time
// at the desk to make a rate of, the count and why there is no rate.
func switchesCard(c, p Totals) card {
	if !rateMeans(c) {
		return card{Label: "switches per hour", Value: "—",
			Note: fmt.Sprintf("%s in %s at the desk: too short for a rate (under ten minutes)", switchCount(c.Switches), dur(deskSeconds(c)))}
	}
	d := rateDelta(c.SwitchesPerHour, p.SwitchesPerHour)
	if !rateMeans(p) {
		d = delta{} // nothing to compare with
	}
	cd := newCard("switches per hour", fmt.Sprintf("%.1f", c.SwitchesPerHour), switchCount(c.Switches), d, true)
	if !rateMeans(p) {
		cd.Delta = "no rate before to compare with"
	}
	return cd
}

func neutral(d delta) string {
	if d.text == "" {
		return "= same"
	}
	return d.String()
}

// rect is one SVG rectangle of a chart, with the tooltip it shows.
type rect struct {
	X, Y, W, H float64
	Class, Tip string
}

// label is one SVG text of a chart.
type label struct {
	X, Y   float64
	Anchor string
	Text   string
}

// chart is one SVG drawing.
type chart struct {
	W, H   float64
	Rects  []rect
	Labels []label
	Lines  []rect // grid lines, as 1-high rects
}

// Split is the period's active time as one 100% bar.
func (v htmlView) Split() chart {
	c := v.r.Totals
	ch := chart{W: pageWidth, H: 18}
	x := 0.0
	for _, p := range []struct {
		kind string
		secs uint64
	}{{"on_task", c.OnTaskSeconds}, {"drift", c.DriftSeconds}, {"away", c.AwaySeconds}, {"unavailable", c.UnavailableSeconds}} {
		if c.partsSeconds() == 0 || p.secs == 0 {
			continue
		}
		w := float64(p.secs) / float64(c.partsSeconds()) * ch.W
		ch.Rects = append(ch.Rects, rect{X: x, W: w, H: ch.H, Class: p.kind,
			Tip: fmt.Sprintf("%s: %s (%s)", kindName(p.kind), dur(p.secs), pct(share(p.secs, c.partsSeconds())))})
		x += w
	}
	return ch
}

// Legend lists the kinds with their names.
func (v htmlView) Legend() [][2]string {
	out := make([][2]string, len(kinds))
	for i, k := range kinds {
		out[i] = [2]string{k, kindName(k)}
	}
	return out
}

// DaysTitle heads the chart of days, which long periods draw by weeks.
func (v htmlView) DaysTitle() string {
	if len(v.r.Days) > maxDayRows {
		return "Per week"
	}
	return "Per day"
}

// Days is the per-day chart: a stacked column a day (a week for long
// periods), grid lines scaled to the longest column, and the total above
// each column.
func (v htmlView) Days() chart {
	rows := dayRows(v.r.Days, v.loc)
	ch := chart{W: pageWidth, H: 240}
	const top, bottom, left = 22.0, 36.0, 34.0
	plot := ch.H - top - bottom
	var most uint64
	for _, d := range rows {
		most = max(most, d.total())
	}
	axis, step := dayAxis(most)
	scale := plot / float64(axis)
	for at := uint64(0); at <= axis; at += step {
		y := top + plot - float64(at)*scale
		ch.Lines = append(ch.Lines, rect{X: left, Y: y, W: ch.W - left, H: 1, Class: "grid"})
		ch.Labels = append(ch.Labels, label{X: left - 6, Y: y + 4, Anchor: "end", Text: axisLabel(at)})
	}
	if len(rows) == 0 {
		return ch
	}
	slot := (ch.W - left) / float64(len(rows))
	bar := min(slot*0.64, 56)
	for i, d := range rows {
		x := left + slot*float64(i) + (slot-bar)/2
		y := top + plot
		for _, p := range []struct {
			kind string
			secs uint64
		}{{"on_task", d.OnTaskSeconds}, {"drift", d.DriftSeconds}, {"away", d.AwaySeconds}, {"unavailable", d.UnavailableSeconds}} {
			if p.secs == 0 {
				continue
			}
			h := float64(p.secs) * scale
			y -= h
			ch.Rects = append(ch.Rects, rect{X: x, Y: y, W: bar, H: h, Class: p.kind,
				Tip: fmt.Sprintf("%s — %s: %s", d.label, kindName(p.kind), dur(p.secs))})
		}
		cx := x + bar/2
		if d.total() > 0 {
			ch.Labels = append(ch.Labels, label{X: cx, Y: y - 6, Anchor: "middle", Text: dur(d.total())})
		}
		parts := strings.SplitN(d.label, " ", 2)
		ch.Labels = append(ch.Labels, label{X: cx, Y: ch.H - bottom + 16, Anchor: "middle", Text: parts[0]})
		if len(parts) == 2 {
			ch.Labels = append(ch.Labels, label{X: cx, Y: ch.H - bottom + 30, Anchor: "middle", Text: parts[1]})
		}
	}
	return ch
}

// axisSteps are the grid steps the per-day chart may use, in seconds:
// round figures a person reads off a clock.
var axisSteps = []uint64{10, 15, 30, 60, 2 * 60, 5 * 60, 10 * 60, 15 * 60, 30 * 60,
	3600, 2 * 3600, 3 * 3600, 4 * 3600, 6 * 3600, 12 * 3600, 24 * 3600}

// dayAxis is the per-day chart's axis for a longest column of most
// seconds: the smallest step that needs at most 5 lines above zero, and
// the top as a whole number of steps. Two minutes get an axis of two
// minutes, not a sliver of an hour; nothing gets one hour.
func dayAxis(most uint64) (axis, step uint64) {
	if most == 0 {
		return 3600, 3600
	}
	for _, step = range axisSteps {
		if (most+step-1)/step <= 5 {
			break
		}
	}
	return max(1, (most+step-1)/step) * step, step
}

// axisLabel is a grid line's time: "0", "30s", "1m 30s", "15m", "2h", "1h 30m".
func axisLabel(secs uint64) string {
	switch {
	case secs == 0:
		return "0"
	case secs < 60:
		return fmt.Sprintf("%ds", secs)
	case secs < 3600 && secs%60 != 0:
		return fmt.Sprintf("%dm %02ds", secs/60, secs%60)
	case secs < 3600:
		return fmt.Sprintf("%dm", secs/60)
	case secs%3600 == 0:
		return fmt.Sprintf("%dh", secs/3600)
	}
	return fmt.Sprintf("%dh %02dm", secs/3600, secs%3600/60)
}

// htmlSession is a session's row.
type htmlSession struct {
	When, Device, NextAction, Outcome, Level, Active, Drift string
	Pending                                                 bool
	Strip                                                   *chart
	Top                                                     string
}

const htmlStripCells = 240

// pageWidth is the width of the page's content, which the wide charts fill.
const pageWidth = 752

func (v htmlView) Sessions() []htmlSession {
	out := make([]htmlSession, len(v.r.Sessions))
	for i, s := range v.r.Sessions {
		h := htmlSession{When: sessionWhen(s, v.loc), Device: inert.Terminal(s.Device), NextAction: inert.Terminal(s.NextAction),
			Outcome: inert.Terminal(s.Outcome), Level: inert.Terminal(s.Enforcement),
			Active: dur(s.ActiveSeconds), Drift: pct(s.DriftShare), Pending: s.Pending}
		if s.Timeline != nil {
			h.Strip = stripChart(s, v.loc)
		} else {
			var top []string
			for _, b := range s.Top {
				top = append(top, inert.Terminal(bucketName(b))+" "+dur(b.Seconds))
			}
			h.Top = strings.Join(top, " · ")
		}
		out[i] = h
	}
	return out
}

// stripChart draws a session's timeline from the same cells as the text
// strip, one rectangle per run of a kind.
func stripChart(s Session, loc *time.Location) *chart {
	cells := strip(s.Timeline, htmlStripCells)
	ch := &chart{W: 240, H: 14}
	t0, t1 := s.Timeline[0].FromUnixMillis, s.Timeline[len(s.Timeline)-1].ToUnixMillis
	at := func(i int) string {
		return time.UnixMilli(t0 + (t1-t0)*int64(i)/int64(len(cells))).In(loc).Format("15:04")
	}
	for i := 0; i < len(cells); {
		j := i
		for j < len(cells) && cells[j] == cells[i] {
			j++
		}
		if cells[i] != "" {
			ch.Rects = append(ch.Rects, rect{X: float64(i), W: float64(j - i), H: ch.H, Class: cells[i],
				Tip: fmt.Sprintf("%s–%s %s", at(i), at(j), kindName(cells[i]))})
		}
		i = j
	}
	return ch
}

// htmlWindow is a row of the top windows.
type htmlWindow struct {
	Name, Class, OnTask, Drift, Unsplit string
	Icon                                template.URL
	Bar                                 chart
	Titles                              string
}

func (v htmlView) AnyUnsplit() bool {
	for _, w := range v.r.Windows {
		if w.UnsplitSeconds > 0 {
			return true
		}
	}
	return false
}

// AnyIcon says whether a top window has an icon: the names of those
// without one are then indented to line up.
func (v htmlView) AnyIcon() bool {
	for _, w := range v.r.Windows {
		if v.icon(w.App) != "" {
			return true
		}
	}
	return false
}

func (v htmlView) Windows() []htmlWindow {
	var most uint64
	for _, w := range v.r.Windows {
		most = max(most, w.OnTaskSeconds+w.DriftSeconds+w.UnsplitSeconds)
	}
	show := func(secs uint64) string {
		if secs == 0 {
			return "—"
		}
		return dur(secs)
	}
	out := make([]htmlWindow, len(v.r.Windows))
	for i, w := range v.r.Windows {
		h := htmlWindow{Name: inert.Terminal(windowName(w.Class, w.App)), Class: inert.Terminal(w.Class), Icon: v.icon(w.App), OnTask: show(w.OnTaskSeconds), Drift: show(w.DriftSeconds), Unsplit: show(w.UnsplitSeconds),
			Bar: chart{W: 200, H: 12}}
		x := 0.0
		for _, p := range []struct {
			kind string
			secs uint64
		}{{"on_task", w.OnTaskSeconds}, {"drift", w.DriftSeconds}, {"unsplit", w.UnsplitSeconds}} {
			if p.secs == 0 || most == 0 {
				continue
			}
			bw := float64(p.secs) / float64(most) * h.Bar.W
			h.Bar.Rects = append(h.Bar.Rects, rect{X: x, W: bw, H: h.Bar.H, Class: p.kind, Tip: p.kind + ": " + dur(p.secs)})
			x += bw
		}
		var titles []string
		for _, b := range w.Titles {
			titles = append(titles, "“"+inert.Terminal(b.Title)+"” "+dur(b.Seconds))
		}
		h.Titles = strings.Join(titles, " · ")
		out[i] = h
	}
	return out
}

// ManyDevices and Devices feed the page's device column and table.
func (v htmlView) ManyDevices() bool { return len(v.r.Devices) > 0 }

func (v htmlView) Devices() []deviceRow {
	rows := deviceRows(v.r)
	for i := range rows {
		rows[i].Name = inert.Terminal(rows[i].Name)
	}
	return rows
}

// htmlSite is a row of the top sites.
type htmlSite struct{ Host, OnTask, Drift string }

// Sites is "Top sites", beside "Top windows".
func (v htmlView) Sites() []htmlSite {
	out := make([]htmlSite, len(v.r.Sites))
	for i, s := range v.r.Sites {
		out[i] = htmlSite{Host: inert.Terminal(s.Host), OnTask: showSecs(s.OnTaskSeconds), Drift: showSecs(s.DriftSeconds)}
	}
	return out
}
