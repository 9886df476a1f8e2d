package service

import (
	"testing"
	"time"
)

func TestShortLeft(t *testing.T) {
	for _, tc := range []struct {
		d    time.Duration
		want string
	}{
		{-time.Second, "0s"}, {0, "0s"}, {300 * time.Millisecond, "1s"}, {20 * time.Second, "20s"},
		{59500 * time.Millisecond, "60s"}, {time.Minute, "60s"}, {time.Minute + time.Millisecond, "2m"},
		{12 * time.Minute, "12m"}, {65 * time.Minute, "1h05m"},
	} {
		if got := ShortLeft(tc.d); got != tc.want {
			t.Errorf("ShortLeft(%v) = %q, want %q", tc.d, got, tc.want)
		}
	}
}

// NextLeftChange lands exactly where ShortLeft changes: a moment before,
// the text is the old one; at it, a new one.
func TestNextLeftChangeIsWhenTheTextChanges(t *testing.T) {
	for _, d := range []time.Duration{20*time.Second + 300*time.Millisecond, time.Minute, 90 * time.Second, 2 * time.Minute,
		12*time.Minute + 5*time.Second, 65 * time.Minute} {
		next := NextLeftChange(d)
		if next <= 0 {
			t.Fatalf("NextLeftChange(%v): got %v, want more than 0", d, next)
		}
		before, at := ShortLeft(d-next+time.Millisecond), ShortLeft(d-next)
		if before != ShortLeft(d) || at == before {
			t.Errorf("d %v, NextLeftChange %v: got %q just before the change and %q at it, want %q before and another text at it", d, next, before, at, ShortLeft(d))
		}
	}
	if NextLeftChange(0) != 0 {
		t.Errorf("NextLeftChange(0): got %v, want 0 (a countdown at zero never changes again)", NextLeftChange(0))
	}
}
