package service

import (
	"context"
	"log/slog"
	"sync"
	"time"
)

// notifyTimeout bounds one notification call, so a wedged notification
// server delays nudges but never piles them up.
const notifyTimeout = 5 * time.Second

// nudger owns the conversation with the notification server. The core
// decides what to show under its lock and hands the nudger small ops; the
// nudger performs them in order on its own goroutine, so no bus call ever
// runs under the core's lock and a "close" never overtakes its "show".
//
// It remembers which notification ids are ours, so an ActionInvoked for
// someone else's notification is ignored.
type nudger struct {
	n   Notifier
	log *slog.Logger
	ops chan func(context.Context)

	mu         sync.Mutex
	stopped    bool       // ops is closed; late ops are dropped
	driftID    uint32     // the drift nudge on screen, 0 when none
	driftAbout nudgeAbout // the window it is about, for its actions
	deadlineID uint32     // the "Time's up" notification, 0 when none
}

// nudgeQueue bounds pending ops. Nudges are human-rate; if the server is
// so slow the queue fills, newer ops are dropped and logged rather than
// blocking the core.
const nudgeQueue = 32

func newNudger(n Notifier, log *slog.Logger) *nudger {
	g := &nudger{n: n, log: log, ops: make(chan func(context.Context), nudgeQueue)}
	go g.run()
	return g
}

func (g *nudger) run() {
	for op := range g.ops {
		ctx, cancel := context.WithTimeout(context.Background(), notifyTimeout)
		op(ctx)
		cancel()
	}
}

// stop ends the worker after the queued ops. A timer that fires during
// shutdown may still try to nudge; that op is dropped.
func (g *nudger) stop() {
	g.mu.Lock()
	defer g.mu.Unlock()
	if !g.stopped {
		g.stopped = true
		close(g.ops)
	}
}

func (g *nudger) enqueue(op func(context.Context)) {
	g.mu.Lock()
	defer g.mu.Unlock()
	if g.stopped {
		return
	}
	select {
	case g.ops <- op:
	default:
		g.log.Warn("notification queue full; dropping a notification update")
	}
}

// nudgeAbout is the window a drift nudge is about: its class (for "Allow")
// and its scrubbed title (for "Not a distraction").
type nudgeAbout struct{ class, title string }

// showDrift shows (or replaces) the drift nudge about a window.
func (g *nudger) showDrift(about nudgeAbout, n Notification) {
	g.show(&g.driftID, n, func() { g.driftAbout = about })
}

func (g *nudger) closeDrift() {
	g.enqueue(func(ctx context.Context) { g.close(ctx, &g.driftID) })
}

func (g *nudger) showDeadline(n Notification) {
	g.show(&g.deadlineID, n, func() {})
}

// show puts n on screen in the slot *id, replacing what the slot holds;
// shown runs under g.mu once the server has accepted it.
func (g *nudger) show(id *uint32, n Notification, shown func()) {
	g.enqueue(func(ctx context.Context) {
		g.mu.Lock()
		n.ReplacesID = *id
		g.mu.Unlock()
		got, err := g.n.Notify(ctx, n)
		if err != nil {
			g.log.Warn("showing a notification failed; the next one will try again", "category", n.Category, "err", err)
			return
		}
		g.mu.Lock()
		*id = got
		shown()
		g.mu.Unlock()
	})
}

func (g *nudger) closeDeadline() {
	g.enqueue(func(ctx context.Context) { g.close(ctx, &g.deadlineID) })
}

// close withdraws the notification *id points at, if any.
func (g *nudger) close(ctx context.Context, id *uint32) {
	g.mu.Lock()
	was := *id
	*id = 0
	g.mu.Unlock()
	if was == 0 {
		return
	}
	if err := g.n.Close(ctx, was); err != nil {
		g.log.Debug("closing a notification failed", "id", was, "err", err)
	}
}

// whose says which of our notifications id is: "drift" (with the window
// it is about), "deadline", or "" when it is not ours.
func (g *nudger) whose(id uint32) (kind string, about nudgeAbout) {
	g.mu.Lock()
	defer g.mu.Unlock()
	switch {
	case id == 0:
		return "", nudgeAbout{}
	case id == g.driftID:
		return "drift", g.driftAbout
	case id == g.deadlineID:
		return "deadline", nudgeAbout{}
	}
	return "", nudgeAbout{}
}
