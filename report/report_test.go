package report

import (
	"bytes"
	"flag"
	"fmt"
	"os"
	"path/filepath"
	"regexp"
	"strings"
	"testing"
	"time"
	"unicode/utf8"

	"github.com/antidrift/antidrift/internal/testsupport/statefixture"
	"github.com/antidrift/antidrift/internal/testsupport/testenv"
	"github.com/antidrift/antidrift/persist"
)

var update = flag.Bool("update", false, "rewrite the golden files in testdata")

// fixtureNow is the fixed "now" of the golden reports: a Sunday evening.
var fixtureNow = time.Date(2026, 11, 29, 20, 0, 0, 0, time.UTC)

// fixtureOptions are the privacy settings of the golden reports: one
// private class and one redaction, both of which the fixture's titles hit.
var fixtureOptions = Options{
	PrivateClasses: []string{"keepassxc"},
	RedactTitles:   []*regexp.Regexp{regexp.MustCompile(`\S+@\S+`)},
}

// fixture writes the golden state directory: 30 sessions over two weeks,
// the last 8 with their raw log, the last one pending, and line 20 of the
// chain altered by hand.
func fixture(t testing.TB) string {
	t.Helper()
	dir := filepath.Join(t.TempDir(), "state")
	if _, err := statefixture.Write(dir, statefixture.Spec{
		Seed: 14, Sessions: 30, First: time.Date(2026, 11, 15, 0, 0, 0, 0, time.UTC),
		Slots:            []time.Duration{9 * time.Hour, 14*time.Hour + 30*time.Minute},
		EventsPerSession: 40, KeepRawLogs: 22, Pending: 1,
	}); err != nil {
		t.Fatal(err)
	}
	path := filepath.Join(dir, "audit.jsonl")
	data, err := os.ReadFile(path)
	if err != nil {
		t.Fatal(err)
	}
	lines := bytes.Split(data, []byte("\n"))
	lines[19] = regexp.MustCompile(`"next_action":"[^"]*"`).ReplaceAll(lines[19], []byte(`"next_action":"rewritten afterwards"`))
	if err := os.WriteFile(path, bytes.Join(lines, []byte("\n")), 0o600); err != nil {
		t.Fatal(err)
	}
	return dir
}

func build(t testing.TB, dir string, span Span) *Report {
	t.Helper()
	r, err := Build(persist.NewReader(dir), span, fixtureOptions)
	if err != nil {
		t.Fatal(err)
	}
	return r
}

// golden compares got with testdata/name, or rewrites it under -update.
func golden(t *testing.T, name string, got []byte) {
	t.Helper()
	path := filepath.Join("testdata", name)
	if *update {
		if err := os.WriteFile(path, got, 0o644); err != nil {
			t.Fatal(err)
		}
		return
	}
	want, err := os.ReadFile(path)
	if err != nil {
		t.Fatalf("%v (run go test ./report -update to create it)", err)
	}
	if !bytes.Equal(got, want) {
		line, g, w := testenv.FirstDifference(string(got), string(want))
		t.Errorf("%s, line %d: got %q, want %q (the golden file); all of what it got:\n%s", name, line, g, w, got)
	}
}

func TestGoldenWeek(t *testing.T) {
	r := build(t, fixture(t), LastDays(fixtureNow, 7, 0))
	var text, js bytes.Buffer
	if err := Text(&text, r, time.UTC, false); err != nil {
		t.Fatal(err)
	}
	if err := JSON(&js, r); err != nil {
		t.Fatal(err)
	}
	golden(t, "week.txt", text.Bytes())
	golden(t, "week.json", js.Bytes())
}

// The text fits an 80-column terminal, and colour appears only when asked
// for: a pipe or NO_COLOR gets none.
func TestTextFits80ColumnsAndColoursOnlyWhenAsked(t *testing.T) {
	r := build(t, fixture(t), LastDays(fixtureNow, 30, 0))
	var plain, coloured bytes.Buffer
	if err := Text(&plain, r, time.UTC, false); err != nil {
		t.Fatal(err)
	}
	if err := Text(&coloured, r, time.UTC, true); err != nil {
		t.Fatal(err)
	}
	for i, l := range strings.Split(plain.String(), "\n") {
		if n := utf8.RuneCountInString(l); n > 80 {
			t.Errorf("line %d's width: got %d columns, want at most 80: %q", i+1, n, l)
		}
	}
	if bytes.Contains(plain.Bytes(), []byte("\x1b[")) {
		t.Errorf("the report without colour: got\n%q\nwant no escape sequence", plain.String())
	}
	if !bytes.Contains(coloured.Bytes(), []byte("\x1b[32m█")) {
		t.Errorf("the coloured report: got\n%q\nwant a green on-task bar (ESC [32m█)", coloured.String())
	}
	if got := regexp.MustCompile("\x1b\\[[0-9;]*m").ReplaceAllString(coloured.String(), ""); got != plain.String() {
		line, g, w := testenv.FirstDifference(got, plain.String())
		t.Errorf("the coloured report without its colours, line %d: got %q, want %q, as in the plain one", line, g, w)
	}
}

// An empty state directory (first day of use) reports zeros and says so,
// rather than failing.
func TestEmptyStateDirectory(t *testing.T) {
	r := build(t, filepath.Join(t.TempDir(), "nothing-here"), LastDays(fixtureNow, 1, 0))
	var text bytes.Buffer
	if err := Text(&text, r, time.UTC, false); err != nil {
		t.Fatal(err)
	}
	golden(t, "empty.txt", text.Bytes())
	if !r.Chain.OK || r.Totals.Sessions != 0 || len(r.Days) != 1 {
		t.Errorf("empty report: got chain %+v, %d sessions, %d days; want a chain OK, 0 sessions, 1 day", r.Chain, r.Totals.Sessions, len(r.Days))
	}
}

// With day_starts = "04:00" a session at half past one in the night counts
// on the day before, and the period's days start at 04:00; without it, at
// midnight.
func TestDayStarts(t *testing.T) {
	dir := filepath.Join(t.TempDir(), "state")
	tuesday := time.Date(2026, 11, 24, 0, 0, 0, 0, time.UTC)
	if _, err := statefixture.Write(dir, statefixture.Spec{Seed: 1, Sessions: 1, First: tuesday,
		Slots: []time.Duration{90 * time.Minute}, EventsPerSession: 5}); err != nil {
		t.Fatal(err)
	}
	noon := tuesday.Add(12 * time.Hour)
	for _, c := range []struct {
		dayStart time.Duration
		since    time.Time
		day      string
	}{
		{0, tuesday.AddDate(0, 0, -1), "2026-11-24"},
		{4 * time.Hour, tuesday.AddDate(0, 0, -1).Add(4 * time.Hour), "2026-11-23"},
	} {
		span := LastDays(noon, 2, c.dayStart)
		r := build(t, dir, span)
		if !span.Since.Equal(c.since) || r.Period.FirstDay != "2026-11-23" || r.Period.LastDay != "2026-11-24" {
			t.Errorf("day start %v: got period %+v from %v, want Mon 23–Tue 24 from %v", c.dayStart, r.Period, span.Since, c.since)
		}
		for _, d := range r.Days {
			if (d.Sessions == 1) != (d.Date == c.day) {
				t.Errorf("day start %v: sessions on %s: got %d, want the 01:30 session on %s only", c.dayStart, d.Date, d.Sessions, c.day)
			}
		}
	}
}

// Damage never stops a report: a state.json that is not JSON, garbage in
// a raw log and a line of the chain that is not JSON are named or skipped,
// and every session that can be read is still shown.
func TestDamagedStateDirectoryStillReports(t *testing.T) {
	dir := fixture(t)
	intact := build(t, dir, LastDays(fixtureNow, 7, 0))
	if err := os.WriteFile(filepath.Join(dir, "state.json"), []byte("{"), 0o600); err != nil {
		t.Fatal(err)
	}
	f, err := os.OpenFile(filepath.Join(dir, "audit.jsonl"), os.O_APPEND|os.O_WRONLY, 0)
	if err != nil {
		t.Fatal(err)
	}
	f.WriteString("\x00not json at all\n{\"seq\":\"x\"}\n")
	f.Close()
	logs, _ := filepath.Glob(filepath.Join(dir, "sessions", "*.jsonl"))
	if len(logs) == 0 {
		t.Fatal("raw logs of the fixture: got none, want at least one")
	}
	raw, _ := os.ReadFile(logs[0])
	os.WriteFile(logs[0], append([]byte("garbage\n{\"at_unix_millis\":\"soon\"}\n"), raw...), 0o600)

	r := build(t, dir, LastDays(fixtureNow, 7, 0))
	if len(r.Problems) != 1 || !strings.Contains(r.Problems[0], "state.json is not valid JSON") {
		t.Errorf("problems: got %q, want the damaged state.json named, alone", r.Problems)
	}
	if r.Totals.Sessions != intact.Totals.Sessions-1 || r.Pending != 0 {
		t.Errorf("got %d sessions, %d pending; want the %d sealed ones of the intact report, 0 pending", r.Totals.Sessions, r.Pending, intact.Totals.Sessions-1)
	}
	var text bytes.Buffer
	if err := Text(&text, r, time.UTC, false); err != nil || !strings.Contains(text.String(), "state.json is not valid JSON") {
		t.Errorf("the text report: got (%v)\n%s\nwant it to say state.json is not valid JSON", err, text.String())
	}
	for _, s := range r.Sessions {
		if s.Timeline == nil && s.StartedUnix > fixtureNow.AddDate(0, 0, -4).Unix() {
			t.Errorf("session %s: got no timeline, want the one its raw log holds despite a garbage line", s.SessionID)
		}
	}
}

// A break-glass hold that was never used up (the session was completed, or
// ran out) is not a use; an abandon through it is.
func TestBreakGlassUsesAreAbandonsThroughTheHold(t *testing.T) {
	var tot Totals
	tot.add(Session{Outcome: "completed", BreakGlass: true})
	tot.add(Session{Outcome: "expired", BreakGlass: true})
	tot.add(Session{Outcome: "abandoned", BreakGlass: true})
	tot.add(Session{Outcome: "abandoned"})
	if tot.BreakGlass != 1 {
		t.Errorf("break-glass uses: got %d, want 1 (the one abandon through a hold)", tot.BreakGlass)
	}
}

// Against a previous period with no sessions there is nothing to compare:
// no arrows, no "▲ 25 pts", in the text or on the page; and a short
// session's times are all in seconds.
func TestNothingToCompareWithSaysSo(t *testing.T) {
	r := &Report{Period: Period{FirstDay: "2026-11-29", Days: 1}}
	r.Totals.add(Session{Outcome: "completed", TimeboxSeconds: 20, ActiveSeconds: 4, OnTaskSeconds: 4})
	r.Totals.finish()
	var text, page bytes.Buffer
	if err := Text(&text, r, time.UTC, false); err != nil {
		t.Fatal(err)
	}
	if err := HTML(&page, r, time.UTC); err != nil {
		t.Fatal(err)
	}
	for name, out := range map[string]string{"text": text.String(), "html": page.String()} {
		if strings.ContainsAny(out, "▲▼") || strings.Contains(out, "pts") {
			t.Errorf("the %s report: got\n%s\nwant no comparison (▲, ▼, pts) with an empty period", name, out)
		}
		if strings.Contains(out, "0m") {
			t.Errorf("the %s report: got\n%s\nwant no 0m beside seconds", name, out)
		}
	}
	if !strings.Contains(text.String(), "no sessions in the previous period") {
		t.Errorf("the text: got\n%s\nwant \"no sessions in the previous period\"", text.String())
	}
}

// A chain line a later version of antidrift wrote is read as far as this
// build can, and the report says first that the directory holds a later
// version, naming the line, and that the report may leave out what that
// version added; nothing is written.
func TestALaterVersionsLineIsNamed(t *testing.T) {
	dir := fixture(t)
	intact := build(t, dir, LastDays(fixtureNow, 7, 0))
	audit := filepath.Join(dir, "audit.jsonl")
	raw, err := os.ReadFile(audit)
	if err != nil {
		t.Fatal(err)
	}
	lines := strings.SplitAfter(string(raw), "\n")
	later := persist.AuditLineVersion + 1
	lines[1] = strings.Replace(lines[1], "{", fmt.Sprintf(`{"version":%d,`, later), 1)
	changed := strings.Join(lines, "")
	if err := os.WriteFile(audit, []byte(changed), 0o600); err != nil {
		t.Fatal(err)
	}
	r := build(t, dir, LastDays(fixtureNow, 7, 0))
	if len(r.Problems) == 0 || !containsAll(r.Problems[0], fmt.Sprintf("line 2 of audit.jsonl has format version %d", later), "later version of antidrift", "may leave out") {
		t.Errorf("problems: got %q, want the later version's line named first", r.Problems)
	}
	if r.Totals.Sessions != intact.Totals.Sessions {
		t.Errorf("sessions: got %d, want the %d of the report before", r.Totals.Sessions, intact.Totals.Sessions)
	}
	if after, _ := os.ReadFile(audit); string(after) != changed {
		t.Errorf("audit.jsonl after the report: got it changed, want it as it was")
	}
}

func containsAll(s string, parts ...string) bool {
	for _, p := range parts {
		if !strings.Contains(s, p) {
			return false
		}
	}
	return true
}
