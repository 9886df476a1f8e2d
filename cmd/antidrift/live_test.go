package main

import (
	"regexp"
	"testing"
	"time"
)

// During a session, status shows the current window's time growing with
// no focus change at all (the daemon here sees no X display: the whole
// session is one "(evidence unavailable)" window), and the buckets add up
// to the time the session has been active at the moment of reading.
func TestStatusNumbersAreLive(t *testing.T) {
	s := startDaemon(t, "")
	s.ok(t, "start", "write the intro", "--done-when", "intro is committed", "--for", "20s")

	// Under a minute left, the time is in seconds everywhere.
	secondsLeft := regexp.MustCompile(`time left +(1?[0-9]|20)s of 20s`)
	if line := s.ok(t, "status"); !secondsLeft.MatchString(line) {
		t.Errorf("status of a 20 s session: got %q, want it to match %s", line, secondsLeft)
	}
	polybar := regexp.MustCompile(`^(1?[0-9]|20)s · write the intro`)
	if line := s.ok(t, "status", "--format", "polybar"); !polybar.MatchString(line) {
		t.Errorf("polybar text: got %q, want it to match %s", line, polybar)
	}

	sum := func() (total float64, at time.Time) {
		st := s.status(t)
		at = time.Now()
		for _, b := range st["buckets"].([]any) {
			total += b.(map[string]any)["seconds"].(float64)
		}
		return total, at
	}
	first, _ := sum()
	time.Sleep(2500 * time.Millisecond)
	second, _ := sum()
	if second < first+2 {
		t.Fatalf("the buckets 2.5 s later, with no focus change: got %v s, want at least %v s (from %v s)", second, first+2, first)
	}
	current := regexp.MustCompile(`time spent \(up to now\)\n +\(evidence unavailable\) +\S+ +[1-9][0-9]*s\n`)
	if text := s.ok(t, "status"); !current.MatchString(text) {
		t.Errorf("status: got\n%s\nwant the current window's seconds (%s)", text, current)
	}
	st := s.status(t)
	elapsed := float64(time.Now().Unix() - int64(num(t, st, "started_at")))
	if total, _ := sum(); total < elapsed-2 || total > elapsed+2 {
		t.Errorf("the buckets' total: got %v s, want the %v s the session has been active (±2 s)", total, elapsed)
	}
}

// status --follow counts the last minute down by the second, with no
// signal from the daemon.
func TestFollowCountsTheLastMinuteDown(t *testing.T) {
	s := startDaemon(t, "")
	s.ok(t, "start", "write the intro", "--done-when", "intro is committed", "--for", "30s")
	f := startFollow(t, s.d.Bus.Env())
	left := regexp.MustCompile(` (\d+)s left `)
	seen := map[string]bool{}
	for len(seen) < 3 {
		line := f.next(t, "a line with the seconds left", func(line string) bool { return left.MatchString(line) })
		seen[left.FindStringSubmatch(line)[1]] = true
	}
}
