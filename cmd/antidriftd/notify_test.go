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
