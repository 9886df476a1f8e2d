package report

import (
	"bytes"
	"os"
	"path/filepath"
	"testing"
	"time"

	"github.com/antidrift/antidrift/internal/testsupport/statefixture"
	"github.com/antidrift/antidrift/internal/testsupport/testenv"
)

// TestDocsScreenshot rewrites docs/report-week.png, the README's picture
// of the HTML report, under -update: a clean week (an intact chain,
// nothing pending) of generated sessions in an editor, a terminal and a
// browser, every one with its raw log so each has its timeline, rendered
// by headless Chromium as TestHTMLInHeadlessChromium renders the golden
// week. Look at it before committing it.
func TestDocsScreenshot(t *testing.T) {
	if !*update {
		t.Skip("rewrites ../docs/report-week.png only with -update")
	}
	dir := filepath.Join(t.TempDir(), "state")
	if _, err := statefixture.Write(dir, statefixture.Spec{
		Seed: 21, Sessions: 26, First: time.Date(2026, 11, 17, 0, 0, 0, 0, time.UTC),
		Slots:            []time.Duration{9 * time.Hour, 14*time.Hour + 30*time.Minute},
		EventsPerSession: 40, KeepRawLogs: 12,
	}); err != nil {
		t.Fatal(err)
	}
	r := build(t, dir, LastDays(fixtureNow, 7, 0))
	if !r.Chain.OK || r.Pending != 0 || r.Totals.Sessions == 0 {
		t.Fatalf("the week: got chain %+v, %d pending, %d sessions; want a clean week (chain OK, none pending, some sessions)", r.Chain, r.Pending, r.Totals.Sessions)
	}
	var page bytes.Buffer
	if err := HTML(&page, r, time.UTC); err != nil {
		t.Fatal(err)
	}
	file := filepath.Join(t.TempDir(), "week.html")
	if err := os.WriteFile(file, page.Bytes(), 0o600); err != nil {
		t.Fatal(err)
	}
	shot := filepath.Join("..", "docs", "report-week.png")
	got := testenv.RenderPage(t, file, shot, 900, 2200, false)
	if got.DOM == "" {
		t.Fatal("Chromium's DOM: got nothing, want the rendered page")
	}
	t.Logf("wrote %s: look at it", shot)
}
