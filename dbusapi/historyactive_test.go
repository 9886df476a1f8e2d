package dbusapi

import (
	"testing"

	"github.com/antidrift/antidrift/service"
)

// A History entry carries the session's active time, the sum of its
// buckets: the figure the report shows for it.
func TestHistoryEntryHasTheActiveTime(t *testing.T) {
	s := service.Summary{StartedUnix: 100, EndedUnix: 143, Buckets: []service.Bucket{{Class: "Editor", Seconds: 30}, {Title: service.AwayTitle, Seconds: 10}}}
	var got uint64
	if err := HistoryEntry(s)["active_seconds"].Store(&got); err != nil || got != 40 {
		t.Errorf("active_seconds: got %d (%v), want 40, the buckets' sum", got, err)
	}
}
