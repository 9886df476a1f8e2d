package report

import (
	"bytes"
	"html"
	"regexp"
	"strings"
	"testing"
	"time"

	"github.com/antidrift/antidrift/internal/inert"
	"github.com/antidrift/antidrift/internal/testsupport/hostile"
)

// The page shows a control character in an outside text as the text
// report does (ESC as \x1b), never as the character a browser draws as a
// box or not at all; and the page itself holds no control character.
func TestHTMLShowsControlsAsTheTextDoes(t *testing.T) {
	for _, h := range hostile.Texts {
		var page, text bytes.Buffer
		if err := HTML(&page, hostileReport(h.Text), time.UTC); err != nil {
			t.Fatal(err)
		}
		if err := Text(&text, hostileReport(h.Text), time.UTC, false); err != nil {
			t.Fatal(err)
		}
		if err := hostile.CheckTerminal(page.String()); err != nil {
			t.Errorf("%s: the page holds a control character: %v", h.Name, err)
		}
		shown := inert.Terminal(h.Text)
		if !strings.Contains(text.String(), shown) {
			t.Errorf("%s: the text: got\n%s\nwant %q in it", h.Name, text.String(), shown)
		}
		// What a browser shows of the page's text nodes is the HTML
		// unescaped: the same characters as the text report.
		if n := strings.Count(html.UnescapeString(page.String()), shown); n < 6 {
			t.Errorf("%s: the page shows %q %d times, want it as the text shows it at least 6 times (next actions, device, class, titles, host, problems)", h.Name, shown, n)
		}
	}
	var page bytes.Buffer
	if err := HTML(&page, hostileReport("before\x1bafter"), time.UTC); err != nil {
		t.Fatal(err)
	}
	if !strings.Contains(page.String(), `before\x1bafter`) {
		t.Errorf("a lone ESC on the page: got no %q in it, want the escape the text report shows", `before\x1bafter`)
	}
}

// The per-day chart's axis fits the longest day: two minutes fill most of
// the chart's height, not a sliver of an hour, and the grid lines fall on
// round figures.
func TestDayChartAxisFitsTheData(t *testing.T) {
	for _, c := range []struct {
		most       uint64
		axis, step uint64
		labels     []string
	}{
		{0, 3600, 3600, []string{"0", "1h"}},
		{20, 20, 10, []string{"0", "10s", "20s"}},
		{120, 120, 30, []string{"0", "30s", "1m", "1m 30s", "2m"}},
		{25 * 60, 25 * 60, 5 * 60, []string{"0", "5m", "10m", "15m", "20m", "25m"}},
		{3*3600 + 60, 4 * 3600, 3600, []string{"0", "1h", "2h", "3h", "4h"}},
		{5400, 5400, 1800, []string{"0", "30m", "1h", "1h 30m"}},
	} {
		axis, step := dayAxis(c.most)
		if axis != c.axis || step != c.step {
			t.Errorf("dayAxis(%d): got axis %d step %d, want axis %d step %d", c.most, axis, step, c.axis, c.step)
		}
		var labels []string
		for at := uint64(0); at <= axis; at += step {
			labels = append(labels, axisLabel(at))
		}
		if got, want := strings.Join(labels, " "), strings.Join(c.labels, " "); got != want {
			t.Errorf("the axis of %ds: got %q, want %q", c.most, got, want)
		}
	}
	r := &Report{Period: Period{FirstDay: "2026-11-29", LastDay: "2026-11-29", Days: 1}, Days: []Day{{Date: "2026-11-29", Sessions: 1, OnTaskSeconds: 120}}}
	ch := htmlView{r: r, loc: time.UTC}.Days()
	if len(ch.Rects) != 1 {
		t.Fatalf("the chart of one day: got %d columns, want 1", len(ch.Rects))
	}
	plot := ch.H - 22 - 36
	if h := ch.Rects[0].H; h < plot*0.9 {
		t.Errorf("a two-minute day's column: got %.1f of %.1f high, want it to fill the chart (the axis scaled to the data)", h, plot)
	}
	var labels []string
	for _, l := range ch.Labels {
		if l.Anchor == "end" {
			labels = append(labels, l.Text)
		}
	}
	if got, want := strings.Join(labels, " "), "0 30s 1m 1m 30s 2m"; got != want {
		t.Errorf("the axis of a two-minute day: got %q, want %q", got, want)
	}
}

// With no session before, the page says so once, not in every card.
func TestNothingBeforeIsSaidOnce(t *testing.T) {
	r := &Report{Period: Period{FirstDay: "2026-11-29", LastDay: "2026-11-29", Days: 1}}
	r.Totals.add(Session{Outcome: "completed", TimeboxSeconds: 1800, ActiveSeconds: 1500, OnTaskSeconds: 1500, Switches: 4})
	r.Totals.finish()
	var page bytes.Buffer
	if err := HTML(&page, r, time.UTC); err != nil {
		t.Fatal(err)
	}
	if n := strings.Count(page.String(), "to compare with"); n != 1 {
		t.Errorf("the page says \"to compare with\" %d times, want once:\n%s", n, page.String())
	}
	if !strings.Contains(page.String(), "no sessions in the day before to compare with") {
		t.Errorf("the page: got no \"no sessions in the day before to compare with\", want it in the totals' heading")
	}
}

// A rate of context switches is shown only for ten minutes or more at the
// desk: two switches in twenty seconds are not "360 an hour".
func TestNoSwitchRateForAShortSession(t *testing.T) {
	for _, c := range []struct {
		active, away uint64
		want         string
	}{{20, 0, "—"}, {900, 400, "—"}, {600, 0, "12.0"}} {
		r := &Report{Period: Period{FirstDay: "2026-11-29", LastDay: "2026-11-29", Days: 1}}
		r.Totals.add(Session{Outcome: "completed", TimeboxSeconds: 1800, ActiveSeconds: c.active, AwaySeconds: c.away, OnTaskSeconds: c.active - c.away, Switches: 2})
		r.Totals.finish()
		var text, page bytes.Buffer
		if err := Text(&text, r, time.UTC, false); err != nil {
			t.Fatal(err)
		}
		if err := HTML(&page, r, time.UTC); err != nil {
			t.Fatal(err)
		}
		line := regexp.MustCompile(`(?m)^  switches per hour +(\S+)`).FindStringSubmatch(text.String())
		if line == nil || line[1] != c.want {
			t.Errorf("%ds active, %ds away: the text's switches per hour: got %q, want %q:\n%s", c.active, c.away, line, c.want, text.String())
		}
		card := regexp.MustCompile(`switches per hour</div><div class="value">([^<]*)</div><div class="note">([^<]*)`).FindStringSubmatch(page.String())
		if card == nil || card[1] != c.want {
			t.Errorf("%ds active, %ds away: the page's card: got %q, want %q", c.active, c.away, card, c.want)
		}
		for _, l := range strings.Split(text.String(), "\n") {
			if n := len([]rune(l)); n > textWidth {
				t.Errorf("%ds active: a line's width: got %d columns, want at most %d: %q", c.active, n, textWidth, l)
			}
		}
		if c.want == "—" {
			flat := strings.Join(strings.Fields(text.String()), " ")
			for name, out := range map[string]string{"text": flat, "page": page.String()} {
				if !strings.Contains(out, "2 context switches in "+dur(c.active-c.away)+" at the desk") || !strings.Contains(out, "too short for a rate") {
					t.Errorf("%ds active: the %s: got no \"2 context switches in … at the desk … too short for a rate\", want why there is no rate", c.active, name)
				}
			}
		}
	}
}

// The devices table says in words what each machine's figures were read
// from and how much of it verified.
func TestDevicesRecordInWords(t *testing.T) {
	for _, c := range []struct {
		d    DeviceTotals
		want string
	}{
		{DeviceTotals{Form: StateForm, OK: true, Entries: 12}, "this machine's own record: 12 sealed sessions verified"},
		{DeviceTotals{Form: "chain", OK: true, Entries: 1}, "its shared copy, titles included: 1 sealed session verified"},
		{DeviceTotals{Form: "totals", OK: true, Entries: 3}, "its shared totals (titles stay on that machine): 3 sealed sessions verified"},
		{DeviceTotals{Form: "chain", OK: false, Entries: 4}, "its shared copy, titles included: the first 4 sealed sessions verified, the rest left out"},
		{DeviceTotals{Form: "totals", OK: false, Entries: 1}, "its shared totals (titles stay on that machine): the first sealed session verified, the rest left out"},
		{DeviceTotals{Form: "chain", OK: false}, "its record does not verify: left out of every figure"},
	} {
		if got := recordWords(c.d); got != c.want {
			t.Errorf("recordWords(%+v): got %q, want %q", c.d, got, c.want)
		}
	}
	var text, page bytes.Buffer
	r := hostileReport("laptop")
	r.Devices = append(r.Devices, DeviceTotals{DeviceID: "d3", Name: "tablet", Form: "totals", OK: false, Entries: 12})
	Text(&text, r, time.UTC, false)
	HTML(&page, r, time.UTC)
	for name, out := range map[string]string{"text": text.String(), "page": page.String()} {
		if !strings.Contains(out, "its shared copy, titles included: 0 sealed sessions verified") {
			t.Errorf("the %s: got\n%s\nwant the laptop's record said in words", name, out)
		}
	}
	flat := strings.Join(strings.Fields(text.String()), " ")
	if want := "its shared totals (titles stay on that machine): the first 12 sealed sessions verified, the rest left out"; !strings.Contains(flat, want) {
		t.Errorf("the text: got\n%s\nwant the tablet's record said whole: %q", text.String(), want)
	}
	for _, l := range strings.Split(text.String(), "\n") {
		if n := len([]rune(l)); n > textWidth {
			t.Errorf("a line's width: got %d columns, want at most %d: %q", n, textWidth, l)
		}
	}
	if strings.Contains(page.String(), "<th>chain</th>") || !strings.Contains(page.String(), "<th>read from</th>") {
		t.Errorf("the page's devices table: want the column \"read from\", not \"chain\"")
	}
}
