package testenv

import (
	"fmt"
	"runtime"
	"testing"
	"time"
)

// fatalRecorder is a testing.TB whose Fatalf records the message and ends
// the goroutine, as the real one does.
type fatalRecorder struct {
	testing.TB
	msg string
}

func (f *fatalRecorder) Helper() {}
func (f *fatalRecorder) Fatalf(format string, args ...any) {
	f.msg = fmt.Sprintf(format, args...)
	runtime.Goexit()
}
func (f *fatalRecorder) Fatal(args ...any) {
	f.msg = fmt.Sprint(args...)
	runtime.Goexit()
}

// failure runs wait against a recorder and returns what it failed with.
func failure(t *testing.T, wait func(tb testing.TB)) string {
	t.Helper()
	rec := &fatalRecorder{TB: t}
	done := make(chan struct{})
	go func() { defer close(done); wait(rec) }()
	<-done
	return rec.msg
}

// A wait that times out says what it waited for and the last value it saw.
func TestWaitForSaysWhatItLastSaw(t *testing.T) {
	seen := []string{"locked", "active", "on-task"}
	i := 0
	got := failure(t, func(tb testing.TB) {
		WaitForValue(tb, 100*time.Millisecond, "Drift", "away", func() string {
			v := seen[min(i, len(seen)-1)]
			i++
			return v
		})
	})
	if want := `timed out after 100ms waiting for Drift to be "away"; last saw "on-task"`; got != want {
		t.Errorf("got %q, want %q", got, want)
	}
	got = failure(t, func(tb testing.TB) {
		WaitFor(tb, 50*time.Millisecond, "two windows", func() int { return 1 }, func(n int) bool { return n == 2 })
	})
	if want := "timed out after 50ms waiting for two windows; last saw 1"; got != want {
		t.Errorf("got %q, want %q", got, want)
	}
}

// A wait that succeeds returns the value it accepted and does not fail.
func TestWaitForReturnsTheValueItAccepted(t *testing.T) {
	n := 0
	if got := WaitFor(t, time.Second, "a count of 3", func() int { n++; return n }, func(v int) bool { return v >= 3 }); got != 3 {
		t.Errorf("got %d, want 3", got)
	}
}
