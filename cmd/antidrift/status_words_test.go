package main

import (
	"strings"
	"testing"
	"time"

	"github.com/antidrift/antidrift/service"
)

func activeStatus(now time.Time) *status {
	return &status{State: string(service.StateActive), NextAction: "write", SuccessCondition: "done",
		TimeboxSeconds: 1500, Deadline: now.Add(20 * time.Minute).Unix(), EvidenceAvailable: true,
		CurrentClass: "NbBrowser", Drift: service.DriftOnTask}
}

// What status says of drift, as a person reads it: away said once, the
// grace as what it is (leaving the task, not on task), and no row for a
// bucket that holds no time.
func TestStatusSaysDriftAsItIs(t *testing.T) {
	now := time.Unix(1_800_000_000, 0)

	idle := activeStatus(now)
	idle.Drift, idle.DriftReason = service.DriftAway, "away: no input for 3m0s"
	if got := statusText(idle, now, textOpts{}); !strings.Contains(got, "drift        away: no input for 3m0s\n") || strings.Contains(got, "away: away") {
		t.Errorf("idle: got\n%s\nwant the drift row to say %q once", got, "away: no input for 3m0s")
	}

	grace := activeStatus(now)
	grace.DriftReason = "NbBrowser is not in this session's allowlist; it becomes drift after 5s unless you go back"
	grace.GraceEnds = now.Add(4 * time.Second).Unix()
	if got, want := statusText(grace, now, textOpts{}), "drift        leaving the task: "+grace.DriftReason+"\n"; !strings.Contains(got, want) {
		t.Errorf("in the grace: got\n%s\nwant the row %q", got, want)
	}
	if got, want := textLine(grace, now), "leaving the task: drift in 4s"; !strings.Contains(got, want) || strings.Contains(got, "on task") {
		t.Errorf("in the grace, one line (--follow): got %q, want it to say %q and not on task", got, want)
	}
	grace.GraceEnds = 0 // back on task: the grace is over
	if got := textLine(grace, now); !strings.Contains(got, " · on task · ") {
		t.Errorf("on task: got %q, want it to say on task", got)
	}

	empty := activeStatus(now)
	empty.Buckets = []bucket{{Class: "Editor", Title: "main.go", Seconds: 90}, {Title: "(evidence unavailable)"}, {Class: "NbBrowser", Title: "news"}}
	if got := statusText(empty, now, textOpts{}); strings.Contains(got, "evidence unavailable") || !strings.Contains(got, "main.go") || !strings.Contains(got, "news") {
		t.Errorf("buckets of 0 s: got\n%s\nwant the rows of main.go and of the window in front (news), none of (evidence unavailable)", got)
	}

	empty.Buckets = []bucket{{Class: "NbBrowser", Title: "news"}} // only the window in front, no second yet
	if got := statusText(empty, now, textOpts{}); strings.Contains(got, "time spent") {
		t.Errorf("only a bucket of 0 s: got\n%s\nwant no chart yet", got)
	}
}
