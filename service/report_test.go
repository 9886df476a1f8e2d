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
		t.Fatalf("Report: got %q, %v and the reporter asked for %v–%v, want %q, no error, %v–%v", doc, err, h.reporter.since, h.reporter.until, `{"schema":1}`, since, until)
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
			t.Errorf("Report(%d, %d): got the reporter asked for %v–%v, want it never reached", tc.since, tc.until, h.reporter.since, h.reporter.until)
		}
	}
}

// Every number a method takes is checked against its range before any
// arithmetic, at both ends of its type: the refusal names the argument and
// the number exactly as it was sent.
func TestNumberArgumentsAtTheEndsOfTheirTypes(t *testing.T) {
	h := newHarness(t)
	for _, c := range []struct {
		name string
		call func() error
		want string
	}{
		{"Start timebox 0", func() error { _, err := h.Start("a", "b", 0, "", nil); return err }, "timebox_secs must be between 1 second and 24 hours (86400 s); got 0 s"},
		{"Start timebox max", func() error { _, err := h.Start("a", "b", math.MaxUint64, "", nil); return err }, "got 18446744073709551615 s"},
		{"Start timebox 2^63", func() error { _, err := h.Start("a", "b", 1<<63, "", nil); return err }, "got 9223372036854775808 s"},
		{"History max", func() error { _, err := h.History(math.MaxUint32); return err }, "limit must be at most 1000; got 4294967295"},
		{"Report max", func() error { _, err := h.Report(math.MaxInt64, math.MaxInt64); return err }, "since_unix must be a time from 1970"},
	} {
		var e *Error
		if err := c.call(); !errors.As(err, &e) || e.Kind != InvalidArgument || !strings.Contains(e.Msg, c.want) {
			t.Errorf("%s: got %v, want InvalidArgument saying %q", c.name, err, c.want)
		}
	}
	h.start(t, LevelWarn)
	for secs, want := range map[uint64]string{
		0:                             "secs must be between 1 second and 24 hours (86400 s); got 0 s",
		math.MaxUint64:                "got 18446744073709551615 s",
		86400:                         "extending by 86400 s would make the timebox 24h25m0s",
		uint64(math.MaxInt64)/1e9 + 1: "got 9223372037 s",
	} {
		var e *Error
		if err := h.Extend(secs); !errors.As(err, &e) || e.Kind != InvalidArgument || !strings.Contains(e.Msg, want) {
			t.Errorf("Extend(%d): got %v, want InvalidArgument saying %q", secs, err, want)
		}
	}
	if v := h.View(); v.State != StateActive || v.TimeboxSeconds != 25*60 {
		t.Errorf("after refused Extends: got %s, timebox %d s, want %s, timebox %d s (unchanged)", v.State, v.TimeboxSeconds, StateActive, 25*60)
	}
}

// ReportDevice hands the machine's name to the reporter, trimmed; a name
// no machine has is an InvalidArgument that carries, as data, the name as
// sent and the machines there are, so a client can offer them.
func TestReportDeviceNamesTheMachinesThereAre(t *testing.T) {
	h := newHarness(t)
	if doc, err := h.ReportDevice(0, 3600, " laptop "); err != nil || doc != `{"schema":1}` || h.reporter.device != "laptop" {
		t.Fatalf("ReportDevice: got %q, %v and the reporter asked for device %q, want %q, no error, device %q", doc, err, h.reporter.device, `{"schema":1}`, "laptop")
	}
	if _, err := h.Report(0, 3600); err != nil || h.reporter.device != "" {
		t.Fatalf("Report: %v; reporter asked for device %q, want every machine", err, h.reporter.device)
	}
	h.reporter.err = &NoSuchDevice{Device: "lptop", Devices: []string{"desk", "laptop"}}
	_, err := h.ReportDevice(0, 3600, "lptop")
	var e *Error
	if !errors.As(err, &e) || e.Kind != InvalidArgument || e.Fault == nil || e.Fault.Rule != RuleDevice ||
		e.Fault.Got != "lptop" || strings.Join(e.Fault.Choices, ",") != "desk,laptop" {
		t.Fatalf("unknown device: %#v, want InvalidArgument rule device with the machines", err)
	}
	if want := `device: no machine is named "lptop" (the machines are "desk", "laptop")`; e.Msg != want {
		t.Errorf("message: got %q, want %q", e.Msg, want)
	}
	h.reporter.err = nil
	if _, err := h.ReportDevice(0, 3600, "a\nb"); !errors.As(err, &e) || e.Kind != InvalidArgument || e.Fault.Rule != RuleControl {
		t.Errorf("a device with a newline: %v, want InvalidArgument rule control", err)
	}
}
