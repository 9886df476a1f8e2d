package bench

import (
	"io"
	"path/filepath"
	"slices"
	"testing"
	"time"

	"github.com/antidrift/antidrift/internal/testsupport/statefixture"
	"github.com/antidrift/antidrift/persist"
	"github.com/antidrift/antidrift/report"
)

// reportRuns is how many reports each case times; the figure is their
// median, so one run slowed by a neighbour on the machine does not decide.
const reportRuns = 9

// BenchmarkReport is `antidrift report` as the CLI runs it — verify the
// chain, read the summaries and pending ones, replay retained raw logs,
// render the text — on two state directories (in the page cache):
//
//   - year: 2,000 sealed summaries over a year, raw logs pruned, reported
//     as one period (goal ≤ 200 ms);
//   - week: a week of 21 sessions whose raw logs hold 100k focus events in
//     all, every one replayed for its timeline (goal ≤ 1 s).
func BenchmarkReport(b *testing.B) {
	now := time.Now()
	today := time.Date(now.Year(), now.Month(), now.Day(), 0, 0, 0, 0, time.Local)
	for _, c := range []struct {
		name string
		spec statefixture.Spec
		span report.Span
	}{
		{"year", statefixture.Spec{Seed: 1, Sessions: 2000, First: today.AddDate(0, 0, -334), EventsPerSession: 8,
			Slots:       []time.Duration{8 * time.Hour, 10 * time.Hour, 12 * time.Hour, 14 * time.Hour, 16 * time.Hour, 18 * time.Hour},
			KeepRawLogs: 2000}, report.LastDays(now, 366, 0)},
		{"week", statefixture.Spec{Seed: 2, Sessions: 21, First: today.AddDate(0, 0, -6), EventsPerSession: 100000 / 21,
			Slots: []time.Duration{9 * time.Hour, 13 * time.Hour, 16 * time.Hour}}, report.LastDays(now, 7, 0)},
	} {
		b.Run(c.name, func(b *testing.B) {
			dir := filepath.Join(b.TempDir(), "state")
			if _, err := statefixture.Write(dir, c.spec); err != nil {
				b.Fatal(err)
			}
			var times []float64
			var r *report.Report
			for b.Loop() {
				times = times[:0]
				for range reportRuns {
					start := time.Now()
					var err error
					if r, err = report.Build(persist.NewReader(dir), c.span, report.Options{}); err != nil {
						b.Fatal(err)
					}
					if err := report.Text(io.Discard, r, time.Local, false); err != nil {
						b.Fatal(err)
					}
					times = append(times, time.Since(start).Seconds()*1000)
				}
			}
			if r.Totals.Sessions != c.spec.Sessions {
				b.Fatalf("the report has %d sessions, want %d", r.Totals.Sessions, c.spec.Sessions)
			}
			events := 0
			for _, s := range r.Sessions {
				events += len(s.Timeline)
			}
			slices.Sort(times)
			b.ReportMetric(times[len(times)/2], "p50_ms")
			b.ReportMetric(times[len(times)-1], "max_ms")
			b.ReportMetric(float64(r.Totals.Sessions), "sessions")
			b.ReportMetric(float64(events), "timeline_stretches")
		})
	}
}
