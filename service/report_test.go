package service

import (
	"errors"
	"strings"
	"testing"
	"time"
)

// Report hands the range to the reporter and its document back unchanged;
// a reporter that fails is a Storage error that names the failure, and a
// daemon without one says reports are unavailable rather than answering
// an empty document a panel would show as "0 sessions".
func TestReportPassesTheRangeAndNamesFailures(t *testing.T) {
	h := newHarness(t)
	since, until := time.Date(2026, 11, 30, 0, 0, 0, 0, time.UTC), time.Date(2026, 12, 1, 0, 0, 0, 0, time.UTC)
	doc, err := h.Report(since.Unix(), until.Unix())
	if err != nil || doc != `{"schema":1}` || !h.reporter.since.Equal(since) || !h.reporter.until.Equal(until) {
		t.Fatalf("Report: %q, %v; reporter asked for %v–%v", doc, err, h.reporter.since, h.reporter.until)
	}
	h.reporter.err = errors.New("audit.jsonl: permission denied")
	var e *Error
	if _, err := h.Report(since.Unix(), until.Unix()); !errors.As(err, &e) || e.Kind != Storage || !strings.Contains(e.Msg, "permission denied") {
		t.Errorf("failing reporter: %v, want a Storage error naming the cause", err)
	}
	bare := New(Options{Store: newFakeStore(), Clock: newFakeClock(), Logger: quiet})
	if _, err := bare.Report(since.Unix(), until.Unix()); !errors.As(err, &e) || e.Kind != Storage || !strings.Contains(e.Msg, "not available") {
		t.Errorf("no reporter: %v, want a Storage error saying reports are unavailable", err)
	}
}
