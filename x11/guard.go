package x11

import (
	"context"
	"errors"
	"fmt"
	"log/slog"
	"time"

	"github.com/jezek/xgb/xproto"

	"github.com/antidrift/antidrift/service"
)

const (
	iconicState     = 3 // ICCCM WM_STATE IconicState
	sourcePager     = 2 // EWMH source indication: pager or other tool
	availableWithin = 2 * time.Second
)

var (
	errNoDisplay   = errors.New("x11: " + reasonNoDisplay)
	errGuardClosed = errors.New("x11: guard is closed")
)

// Guard is the hands: it iconifies or activates windows through the window
// manager. It implements service.Guard. It keeps one X connection of its own,
// made on first use and remade after it breaks; calls are serialized on it.
type Guard struct {
	display string
	log     *slog.Logger

	sem    chan struct{} // one slot: whoever holds it owns c and closed
	c      *conn         // nil until connected
	closed bool
}

var _ service.Guard = (*Guard)(nil)

// NewGuard prepares a guard for display. It does not connect until used.
func NewGuard(display string, logger *slog.Logger) *Guard {
	if logger == nil {
		logger = slog.New(slog.DiscardHandler)
	}
	return &Guard{display: display, log: logger, sem: make(chan struct{}, 1)}
}

// MinimizeWindow iconifies window id if it is still the active window. It
// returns service.ErrNotActive, and does nothing, when it is not.
func (g *Guard) MinimizeWindow(ctx context.Context, h string) error {
	id, err := parseHandle(h)
	if err != nil {
		return err
	}
	return g.do(ctx, func(c *conn) error {
		active, ok, err := c.activeWindow()
		if err != nil {
			return err
		}
		if !ok {
			return errors.New("x11: " + reasonNoEWMH)
		}
		if active != id {
			return service.ErrNotActive
		}
		// ICCCM 4.1.4: ask the window manager to iconify.
		return c.sendToRoot(active, c.wmChangeState, [5]uint32{iconicState})
	})
}

// ActivateWindow asks the window manager to give window id focus, raising
// and de-iconifying it, if the window still exists.
func (g *Guard) ActivateWindow(ctx context.Context, h string) error {
	w, err := parseHandle(h)
	if err != nil {
		return err
	}
	return g.do(ctx, func(c *conn) error {
		if _, err := xproto.GetWindowAttributes(c.x, w).Reply(); err != nil {
			if isBadWindow(err) {
				return fmt.Errorf("x11: window %s no longer exists", h)
			}
			return err
		}
		// EWMH _NET_ACTIVE_WINDOW: source, timestamp (CurrentTime), our
		// active window (none).
		return c.sendToRoot(w, c.netActiveWindow, [5]uint32{sourcePager, 0, 0})
	})
}

// Available reports whether the display can be reached now. It may connect,
// and waits at most a couple of seconds.
func (g *Guard) Available() bool {
	ctx, cancel := context.WithTimeout(context.Background(), availableWithin)
	defer cancel()
	err := g.do(ctx, func(c *conn) error {
		_, err := xproto.GetInputFocus(c.x).Reply()
		return err
	})
	return err == nil
}

// Close drops the connection. Calls after Close fail.
func (g *Guard) Close() error {
	g.sem <- struct{}{}
	defer func() { <-g.sem }()
	g.closed = true
	if g.c != nil {
		g.c.x.Close()
		g.c = nil
	}
	return nil
}

// do runs op on the guard's connection, connecting first if needed, bounded
// by ctx. X round trips run in their own goroutine: when ctx ends first, the
// call returns ctx.Err() and the connection is abandoned (closed once the
// round trip comes back), so a wedged server cannot wedge the next call.
func (g *Guard) do(ctx context.Context, op func(*conn) error) error {
	if err := ctx.Err(); err != nil {
		return err
	}
	if g.display == "" {
		return errNoDisplay
	}
	select {
	case g.sem <- struct{}{}:
	case <-ctx.Done():
		return ctx.Err()
	}
	defer func() { <-g.sem }()
	if g.closed {
		return errGuardClosed
	}

	type result struct {
		c   *conn
		err error
	}
	done := make(chan result, 1)
	go func(c *conn) {
		c, err := g.run(c, op)
		done <- result{c, err}
	}(g.c)

	select {
	case r := <-done:
		g.c = r.c
		return r.err
	case <-ctx.Done():
		g.c = nil
		go func() {
			if r := <-done; r.c != nil {
				r.c.x.Close()
			}
		}()
		g.log.Debug("x11: guard call timed out; dropping the connection", "display", g.display)
		return ctx.Err()
	}
}

// run executes op on c, dialing when c is nil. If an existing connection
// turns out to be dead (the X server restarted since the last call), it
// redials once and retries. It returns the connection to keep (nil if none).
func (g *Guard) run(c *conn, op func(*conn) error) (keep *conn, err error) {
	defer func() {
		if r := recover(); r != nil { // a malformed reply must not take the daemon down
			if c != nil {
				c.x.Close()
			}
			keep, err = nil, fmt.Errorf("x11: internal error: %v", r)
		}
	}()
	fresh := false
	for {
		if c == nil {
			if c, err = dial(g.display); err != nil {
				return nil, fmt.Errorf("x11: cannot connect to the X display %s: %w", g.display, err)
			}
			fresh = true
		}
		err = op(c)
		if !isConnLost(err) {
			return c, err
		}
		c.x.Close()
		if fresh {
			return nil, fmt.Errorf("x11: lost the X server at %s: %w", g.display, err)
		}
		g.log.Debug("x11: guard connection was dead; reconnecting", "display", g.display)
		c = nil
	}
}
