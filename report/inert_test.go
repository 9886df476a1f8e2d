package report

import (
	"bytes"
	"encoding/json"
	"regexp"
	"strings"
	"testing"
	"time"

	"github.com/antidrift/antidrift/internal/inert"
	"github.com/antidrift/antidrift/internal/testsupport/hostile"
)

// hostileReport is a report whose every text from outside is text: a
// next action, a window's class and title, the chain's problem.
func hostileReport(text string) *Report {
	start := fixtureNow.Add(-2 * time.Hour).Unix()
	top := []Bucket{{Class: text, Title: text, Seconds: 600}, {Class: "Editor", Title: text, Seconds: 60}}
	return &Report{
		Period:   Period{FirstDay: "2026-11-29", LastDay: "2026-11-29", Days: 1},
		Chain:    Chain{OK: false, Problem: text},
		Problems: []string{text},
		Totals:   Totals{Sessions: 2},
		Sessions: []Session{
			{Seq: 1, Device: text, StartedUnix: start, EndedUnix: start + 1500, NextAction: text, Outcome: text, Enforcement: text, ActiveSeconds: 1500, Top: top},
			{Seq: 2, StartedUnix: start + 1600, EndedUnix: start + 3100, NextAction: text, Outcome: "completed", Enforcement: "warn", ActiveSeconds: 1500,
				Timeline: []Stretch{{FromUnixMillis: 0, ToUnixMillis: 1000, Kind: "on_task", Class: text}}},
		},
		Windows: []WindowTime{{Class: text, OnTaskSeconds: 600, Titles: top}},
		Sites:   []SiteTime{{Host: text, OnTaskSeconds: 60}},
		Devices: []DeviceTotals{{DeviceID: "d1", Name: text, OK: true, Form: "chain"}, {DeviceID: "d2", Name: "desk", ThisDevice: true, OK: true, Form: "state"}},
	}
}

// antidrift report's text in a terminal: every hostile text is shown, as
// its escapes, and nothing in the report is something a terminal acts on
// but the report's own colours.
func TestTextReportIsInert(t *testing.T) {
	ours := regexp.MustCompile(`\x1b\[(1|2|31|32|33|34)m|\x1b\[0m`)
	for _, h := range hostile.Texts {
		for _, colour := range []bool{false, true} {
			var b bytes.Buffer
			if err := Text(&b, hostileReport(h.Text), time.UTC, colour); err != nil {
				t.Fatal(err)
			}
			out := ours.ReplaceAllString(b.String(), "")
			if err := hostile.CheckTerminal(out); err != nil {
				t.Errorf("%s (colour %v): got\n%s\nwant it inert: %v", h.Name, colour, out, err)
			}
			// The next actions (2), the tops' buckets (2), the window's
			// class and its titles (3), the chain's problem and the
			// other problem (2); "Problem" lines are wrapped, so the
			// start of the text is what is counted.
			shown := inert.Terminal(h.Text)
			if n := strings.Count(out, string([]rune(shown)[:min(8, len([]rune(shown)))])); n < 9 {
				t.Errorf("%s (colour %v): the text shown: got %d times, want 9:\n%s", h.Name, colour, n, out)
			}
		}
	}
}

// antidrift report --json, read in a terminal, holds nothing the terminal
// acts on, and a script decodes every text exactly.
func TestJSONReportIsInertAndExact(t *testing.T) {
	for _, h := range hostile.Texts {
		var b bytes.Buffer
		if err := JSON(&b, hostileReport(h.Text)); err != nil {
			t.Fatal(err)
		}
		if err := hostile.CheckTerminal(b.String()); err != nil {
			t.Errorf("%s: --json: got %q, want it inert: %v", h.Name, b.String(), err)
		}
		var back struct {
			Sessions []struct {
				NextAction string `json:"next_action"`
			}
		}
		if err := json.Unmarshal(b.Bytes(), &back); err != nil || len(back.Sessions) == 0 || back.Sessions[0].NextAction != h.Text {
			t.Errorf("%s: decoded: got %+v (%v), want the next action %q", h.Name, back, err, h.Text)
		}
	}
}
