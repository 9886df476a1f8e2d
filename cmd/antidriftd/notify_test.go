package main

import (
	"testing"
	"time"

	"github.com/antidrift/antidrift/service"
)

// systemctl status shows the time left as the CLI does: a session with
// 20 s left does not read "<1m" or "1m".
func TestStatusLineShowsSecondsInTheLastMinute(t *testing.T) {
	now := time.Unix(1_800_000_000, 0)
	for left, want := range map[time.Duration]string{
		20 * time.Second: "active: 20s left",
		12 * time.Minute: "active: 12m left",
		90 * time.Minute: "active: 1h30m left",
	} {
		v := service.View{State: service.StateActive, Deadline: now.Add(left).Unix()}
		if got := statusLine(v, now); got != want {
			t.Errorf("%v left: %q, want %q", left, got, want)
		}
	}
}

// A break the desktop asked for shows in systemctl status too.
func TestStatusLineSaysDriftingOrBreak(t *testing.T) {
	now := time.Unix(1_800_000_000, 0)
	for drift, want := range map[string]string{
		service.DriftOnTask:   "active: 12m left",
		service.DriftDrifting: "active: 12m left, drifting",
		service.DriftBreak:    "active: 12m left, on a break",
	} {
		v := service.View{State: service.StateActive, Deadline: now.Add(12 * time.Minute).Unix(), Drift: drift}
		if got := statusLine(v, now); got != want {
			t.Errorf("Drift %s: %q, want %q", drift, got, want)
		}
	}
}
