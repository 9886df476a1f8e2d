package main

import (
	"encoding/json"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/antidrift/antidrift/internal/testsupport/statefixture"
	"github.com/antidrift/antidrift/persist"
)

// noBus is an environment with no session bus at all, in UTC: a report
// must never need the daemon.
func noBus(extra ...string) []string {
	env := []string{"PATH=" + os.Getenv("PATH"), "HOME=" + os.Getenv("HOME"), "TZ=UTC",
		"DBUS_SESSION_BUS_ADDRESS=unix:path=/nonexistent", "XDG_CONFIG_HOME=/nonexistent"}
	return append(env, extra...)
}

// A state directory of two weeks of sessions, written relative to the
// real now (the CLI reads the clock).
func reportFixture(t *testing.T) string {
	t.Helper()
	dir := filepath.Join(t.TempDir(), "state")
	today := time.Now().UTC().Truncate(24 * time.Hour)
	if _, err := statefixture.Write(dir, statefixture.Spec{
		Seed: 3, Sessions: 28, First: today.AddDate(0, 0, -14), Slots: []time.Duration{0, 12 * time.Hour},
		EventsPerSession: 20, KeepRawLogs: 24,
	}); err != nil {
		t.Fatal(err)
	}
	return dir
}

// The periods, as a script reads them: --week is the default, --today one
// day, --since/--until the days asked for, and the JSON schema's figures
// add up.
func TestReportPeriodsWithoutADaemon(t *testing.T) {
	dir := reportFixture(t)
	type doc struct {
		Period struct {
			FirstDay string `json:"first_day"`
			Days     int    `json:"days"`
		} `json:"period"`
		Chain struct {
			OK      bool   `json:"ok"`
			Entries uint32 `json:"entries"`
		} `json:"chain"`
		Totals struct {
			Sessions int `json:"sessions"`
		} `json:"totals"`
		Sessions []map[string]any `json:"sessions"`
	}
	get := func(args ...string) doc {
		t.Helper()
		r := cli(t, noBus(), append([]string{"report", "--state-dir", dir, "--json"}, args...)...)
		if r.code != 0 {
			t.Fatalf("got %v, want exit 0", r)
		}
		var d doc
		if err := json.Unmarshal([]byte(r.stdout), &d); err != nil {
			t.Fatalf("report --json: got\n%s\nwant JSON: %v", r.stdout, err)
		}
		return d
	}
	week := get()
	if week.Period.Days != 7 || !week.Chain.OK || week.Chain.Entries != 28 || week.Totals.Sessions != 12 {
		t.Errorf("default report: got %+v; want the last 7 days with the 12 sessions of the 6 days before today, chain of 28 OK", week)
	}
	if d := get("--today"); d.Period.Days != 1 || d.Totals.Sessions != 0 {
		t.Errorf("--today: got %+v; want one day with no session (the fixture ends yesterday)", d)
	}
	first := time.Now().UTC().AddDate(0, 0, -14).Format(time.DateOnly)
	last := time.Now().UTC().AddDate(0, 0, -13).Format(time.DateOnly)
	d := get("--since", first, "--until", last)
	if d.Period.FirstDay != first || d.Period.Days != 2 || d.Totals.Sessions != 4 || len(d.Sessions) != 4 {
		t.Errorf("--since %s --until %s: got %+v; want 2 days from %s, 4 sessions", first, last, d, first)
	}
	if d.Sessions[0]["timeline"] != nil || get("--week").Sessions[11]["timeline"] == nil {
		t.Errorf("timelines: got %v for a pruned raw log and %v where the raw log is kept; want none and one", d.Sessions[0]["timeline"], get("--week").Sessions[11]["timeline"])
	}
}

// Text by default (no colour into a pipe), HTML to stdout or a private
// file, and usage errors for contradictions.
func TestReportOutputsAndUsage(t *testing.T) {
	dir := reportFixture(t)
	text := cli(t, noBus(), "report", "--state-dir", dir)
	if text.code != 0 || !strings.Contains(text.stdout, "Per day") || strings.Contains(text.stdout, "\x1b[") {
		t.Errorf("text report: got %v, want exit 0, the day chart and no colour in a pipe", text)
	}
	page := cli(t, noBus(), "report", "--state-dir", dir, "--html", "-")
	if page.code != 0 || !strings.HasPrefix(page.stdout, "<!DOCTYPE html>") {
		t.Errorf("--html -: got %v, want exit 0 and a page starting <!DOCTYPE html>", page)
	}
	file := filepath.Join(t.TempDir(), "week.html")
	if r := cli(t, noBus(), "report", "--state-dir", dir, "--html", file); r.code != 0 {
		t.Errorf("--html FILE: got %v, want exit 0", r)
	}
	if info, err := os.Stat(file); err != nil || info.Mode().Perm() != 0o600 {
		t.Errorf("the page's mode: got %v (%v), want 0600: it holds window titles", info.Mode(), err)
	}
	for _, args := range [][]string{
		{"--today", "--week"}, {"--since", "yesterday"}, {"--until", "2026-01-01"},
		{"--since", "2026-02-01", "--until", "2026-01-01"}, {"--open"}, {"--json", "--html", file},
	} {
		r := cli(t, noBus(), append([]string{"report", "--state-dir", dir}, args...)...)
		if r.code != exitUsage || !strings.Contains(r.stderr, "usage: antidrift report") {
			t.Errorf("report %v: got %v, want a usage error (exit 2)", args, r)
		}
	}
}

// The daemon holds its state directory's lock while it runs; the report
// reads it anyway and sees the session that just ended.
func TestReportWhileTheDaemonRuns(t *testing.T) {
	s := startDaemon(t, "")
	s.ok(t, "start", "write the report", "--done-when", "it prints", "--for", "10m")
	s.ok(t, "complete")
	s.ok(t, "end")
	out := s.ok(t, "report", "--today", "--state-dir", s.d.StateDir)
	for _, want := range []string{"write the report", "completed", "sessions                           1"} {
		if !strings.Contains(out, want) {
			t.Errorf("report --today while the daemon runs: got\n%s\nwant %q", out, want)
		}
	}
}

// A state directory that is not there is said, not reported as an empty
// week: a typo in --state-dir is a usage error, a missing default a
// refusal naming the directory.
func TestReportOfAMissingStateDirSaysSo(t *testing.T) {
	typo := filepath.Join(t.TempDir(), "typo")
	r := cli(t, noBus(), "report", "--state-dir", typo)
	if r.code != exitUsage || r.stdout != "" {
		t.Errorf("--state-dir of a missing directory: got %v, want exit 2 and no report", r)
	}
	contains(t, "stderr", r.stderr, "--state-dir "+typo+" does not exist")

	home := t.TempDir()
	r = cli(t, noBus("XDG_STATE_HOME="+home), "report")
	if r.code != exitRefused || r.stdout != "" {
		t.Errorf("no state directory yet: got %v, want exit 1 and no report", r)
	}
	contains(t, "stderr", r.stderr, filepath.Join(home, "antidrift")+" does not exist", "no session")
}

// When a later version of antidrift wrote the state directory, antidriftd
// will not start, and the CLI that cannot reach it says why instead of
// how to start it (which would not help); it changes nothing there.
func TestUnreachableSaysALaterVersionWroteTheState(t *testing.T) {
	home := t.TempDir()
	dir := filepath.Join(home, "antidrift")
	if err := os.Mkdir(dir, 0o700); err != nil {
		t.Fatal(err)
	}
	later := fmt.Sprintf(`{"version": %d, "state": "locked"}`, persist.StateFileVersion+1)
	if err := os.WriteFile(filepath.Join(dir, "state.json"), []byte(later), 0o600); err != nil {
		t.Fatal(err)
	}
	r := cli(t, noBus("XDG_STATE_HOME="+home), "status")
	want := "antidriftd will not start on " + dir + ": state.json has format version"
	if r.code != 3 || !strings.Contains(r.stderr, want) || strings.Contains(r.stderr, "Start it with") {
		t.Errorf("got %s\nwant exit 3 saying %q, and not how to start it", r, want)
	}
	if got, _ := os.ReadFile(filepath.Join(dir, "state.json")); string(got) != later {
		t.Errorf("state.json after the CLI: got %q, want it as it was", got)
	}
}
