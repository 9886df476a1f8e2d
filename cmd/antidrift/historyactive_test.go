package main

import (
	"regexp"
	"testing"

	"github.com/godbus/dbus/v5"
)

// history shows a session's active time as report does: the summary's
// accounted seconds (active_seconds) in the report's words, not the time
// from start to end cut to the minute. An entry from a daemon without
// active_seconds falls back to start to end.
func TestHistoryShowsTheReportsActiveTime(t *testing.T) {
	v := dbus.MakeVariant
	row := func(e map[string]dbus.Variant) string {
		out := historyText([]map[string]dbus.Variant{e})
		m := regexp.MustCompile(`(?m)^1 +\S+ \S+ +(.+?) +completed +warn +2 +(.+?) +write`).FindStringSubmatch(out)
		if m == nil {
			t.Fatalf("history: got\n%s\nwant a row for seq 1", out)
		}
		return m[1] + " / " + m[2]
	}
	base := func() map[string]dbus.Variant {
		return map[string]dbus.Variant{"seq": v(uint32(1)), "started_unix": v(int64(1000)), "ended_unix": v(int64(1000 + 25*60 + 40)),
			"switch_count": v(uint32(2)), "drift_seconds": v(uint64(90)), "outcome": v("completed"), "enforcement": v("warn"), "next_action": v("write the intro")}
	}
	e := base()
	e["active_seconds"] = v(uint64(40))
	if got, want := row(e), "40s / 2m"; got != want {
		t.Errorf("history with active_seconds 40: got %q, want %q (the report's 40s and 2m)", got, want)
	}
	if got, want := row(base()), "26m / 2m"; got != want {
		t.Errorf("history of an older daemon, 25m40s from start to end: got %q, want %q (rounded as the report rounds)", got, want)
	}
}
