package service

import (
	"errors"
	"math"
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

// Number arguments are range-checked before any arithmetic: the far ends
// of int64 are refused naming the argument and the number as it was sent,
// never answered with an overflowed count of days.
func TestReportRefusesOutOfRangeTimesBeforeArithmetic(t *testing.T) {
	h := newHarness(t)
	for _, tc := range []struct {
		since, until int64
		says         string
	}{
		{0, math.MaxInt64, "until_unix must be a time from 1970 to the end of the year 9999 (0 to 253402300799); got 9223372036854775807"},
		{math.MinInt64, 0, "since_unix must be a time from 1970 to the end of the year 9999 (0 to 253402300799); got -9223372036854775808"},
		{-1, 10, "since_unix must be a time from 1970"},
		{math.MaxInt64 - 1, math.MaxInt64, "since_unix must be a time from 1970"},
		{0, MaxUnixTime, "the range may be at most 400 days; got 2932897 days"},
		{MaxUnixTime, 0, "until_unix must be after since_unix"},
	} {
		_, err := h.Report(tc.since, tc.until)
		var e *Error
		if !errors.As(err, &e) || e.Kind != InvalidArgument || !strings.Contains(e.Msg, tc.says) {
			t.Errorf("Report(%d, %d) = %v, want InvalidArgument saying %q", tc.since, tc.until, err, tc.says)
		}
		if !h.reporter.since.IsZero() {
			t.Errorf("Report(%d, %d) reached the reporter", tc.since, tc.until)
		}
	}
}
