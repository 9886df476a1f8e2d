package report

import (
	"bytes"
	"encoding/json"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/antidrift/antidrift/persist"
	"github.com/antidrift/antidrift/service"
)

// Every report format has "Top sites" beside "Top windows": the hosts the
// sessions' summaries sealed, on task and drift, longest first.
func TestEveryFormatShowsTopSites(t *testing.T) {
	dir := filepath.Join(t.TempDir(), "state")
	store, _, err := persist.Open(dir)
	if err != nil {
		t.Fatal(err)
	}
	start := fixtureNow.Add(-3 * time.Hour)
	for i, sites := range [][]service.SiteTime{
		{{Host: "github.com", Seconds: 1200}, {Host: "www.youtube.com", Seconds: 300, DriftSeconds: 300}},
		{{Host: "github.com", Seconds: 600, DriftSeconds: 60}, {Host: service.OtherSites, Seconds: 30}},
	} {
		at := start.Add(time.Duration(i) * time.Hour)
		sum := service.Summary{SessionID: "s" + string(rune('1'+i)), NextAction: "review", SuccessCondition: "done",
			Outcome: service.OutcomeCompleted, Enforcement: service.LevelBlock, StartedUnix: at.Unix(), EndedUnix: at.Add(30 * time.Minute).Unix(),
			TimeboxSecs: 1800, Buckets: []service.Bucket{{Class: "firefox", Title: "t", Seconds: 1800}}, Sites: sites}
		if _, err := store.AppendAudit(sum); err != nil {
			t.Fatal(err)
		}
	}
	store.Close()
	r := build(t, dir, LastDays(fixtureNow, 1, 0))
	want := []SiteTime{{Host: "github.com", OnTaskSeconds: 1740, DriftSeconds: 60}, {Host: "www.youtube.com", DriftSeconds: 300}}
	if len(r.Sites) != 2 || r.Sites[0] != want[0] || r.Sites[1] != want[1] {
		t.Fatalf("Sites: got %+v, want %+v", r.Sites, want)
	}
	var text, page, js bytes.Buffer
	if err := Text(&text, r, time.UTC, false); err != nil {
		t.Fatal(err)
	}
	if err := HTML(&page, r, time.UTC); err != nil {
		t.Fatal(err)
	}
	if err := JSON(&js, r); err != nil {
		t.Fatal(err)
	}
	if !strings.Contains(text.String(), "Top sites") || !strings.Contains(text.String(), "  www.youtube.com                            —          5m") {
		t.Errorf("the text report: got\n%s\nwant Top sites with www.youtube.com's 5m of drift", text.String())
	}
	if i, j := strings.Index(page.String(), "Top windows"), strings.Index(page.String(), "Top sites"); i < 0 || j < i || !strings.Contains(page.String(), ">www.youtube.com<") {
		t.Errorf("the HTML report: got Top windows at %d, Top sites at %d; want Top sites after Top windows, naming www.youtube.com", i, j)
	}
	var doc struct {
		Sites []SiteTime `json:"sites"`
	}
	if err := json.Unmarshal(js.Bytes(), &doc); err != nil || len(doc.Sites) != 2 || doc.Sites[0].Host != "github.com" {
		t.Errorf("the JSON report's sites: got %+v (%v), want 2, github.com first", doc.Sites, err)
	}
}
