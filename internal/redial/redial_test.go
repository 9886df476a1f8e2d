package redial

import (
	"context"
	"errors"
	"log/slog"
	"strings"
	"sync/atomic"
	"testing"
	"time"
)

// A session that panics ends like a lost connection, the next connection
// comes after the first backoff step, and a dial that fails is reported
// with whether a connection had worked before.
func TestPanicIsALostConnectionAndRedials(t *testing.T) {
	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	var dials, closes atomic.Int32
	lost := make(chan error, 4)
	failed := make(chan bool, 4)
	r := &Redialer[int]{
		Dial: func(context.Context) (int, error) {
			if n := dials.Add(1); n > 1 {
				return 0, errors.New("refused")
			}
			return 7, nil
		},
		Close:        func(int) { closes.Add(1) },
		Log:          slog.New(slog.DiscardHandler),
		Prefix:       "test",
		Peer:         "the server",
		SlowDial:     time.Hour,
		OnLost:       func(err error) { lost <- err },
		OnDialFailed: func(_ error, wasLost bool) { failed <- wasLost },
	}
	done := make(chan struct{})
	go func() {
		defer close(done)
		r.Run(ctx, func(context.Context, int) error { panic("garbage") })
	}()
	select {
	case err := <-lost:
		if err == nil || !strings.Contains(err.Error(), "internal error: garbage") {
			t.Errorf("OnLost(%v), want the panic as an error", err)
		}
	case <-time.After(10 * time.Second):
		t.Fatal("a panicking session: got it not reported lost within 10 s, want it reported")
	}
	select {
	case wasLost := <-failed:
		if !wasLost {
			t.Error("OnDialFailed after a connection had worked: got lost=false, want lost=true")
		}
	case <-time.After(10 * time.Second):
		t.Fatal("a redial after the lost connection: got none within 10 s, want one")
	}
	cancel()
	<-done
	if closes.Load() < 1 {
		t.Error("the connection of the panicking session: got it left open, want it closed")
	}
}

// A dial that has not answered when ctx ends is abandoned, and its
// connection closed when it arrives.
func TestDialAbandonedOnCancel(t *testing.T) {
	ctx, cancel := context.WithCancel(context.Background())
	release := make(chan struct{})
	closed := make(chan int, 1)
	r := &Redialer[int]{
		Dial:     func(context.Context) (int, error) { <-release; return 9, nil },
		Close:    func(c int) { closed <- c },
		Log:      slog.New(slog.DiscardHandler),
		SlowDial: time.Hour,
	}
	done := make(chan struct{})
	go func() {
		defer close(done)
		r.Run(ctx, func(context.Context, int) error {
			t.Error("a session on an abandoned dial: got one, want none")
			return nil
		})
	}()
	cancel()
	<-done
	close(release)
	select {
	case c := <-closed:
		if c != 9 {
			t.Errorf("closed: got %d, want 9", c)
		}
	case <-time.After(10 * time.Second):
		t.Fatal("the late connection: got it left open after 10 s, want it closed")
	}
}
