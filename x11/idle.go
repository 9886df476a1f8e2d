package x11

import (
	"context"
	"errors"
	"fmt"
	"log/slog"
	"slices"
	"time"

	"github.com/jezek/xgb/screensaver"
	"github.com/jezek/xgb/xproto"

	"github.com/antidrift/antidrift/internal/redial"
)

const (
	// minIdleAfter is the shortest idle threshold the watcher accepts.
	minIdleAfter = time.Second
	// awayPoll is how often the MIT-SCREEN-SAVER fallback asks whether input
	// has resumed while the user is away.
	awayPoll = time.Second
	// minPollDelay keeps the fallback from spinning when the threshold is
	// a hair away.
	minPollDelay = 10 * time.Millisecond
)

// Idle sources, as passed to IdleWatcher.onSource.
const (
	idleSourceSync        = "SYNC IDLETIME alarms"
	idleSourceScreenSaver = "MIT-SCREEN-SAVER queries"
	idleSourceNone        = "none"
)

const screenSaverExtName = "MIT-SCREEN-SAVER"

var (
	errNoSync        = errors.New("SYNC IDLETIME is not usable")
	errNoIdleTime    = errors.New("the X server has no IDLETIME system counter")
	errNoScreenSaver = errors.New("the X server has no MIT-SCREEN-SAVER extension")
)

// IdleWatcher tells when the user stops and resumes using the keyboard and
// mouse of an X display.
//
// It waits for the X server to tell it: it puts two alarms on the SYNC
// extension's IDLETIME counter (milliseconds since the last input), one for
// "idle for the threshold" and, once that has fired, one for "input again".
// On a server without SYNC or IDLETIME it asks MIT-SCREEN-SAVER how long the
// user has been idle, at the first moment the threshold could be reached and
// then once a second while the user is away; never on a fixed beat while the
// user is active.
type IdleWatcher struct {
	display  string
	after    time.Duration
	log      *slog.Logger
	slowDial time.Duration

	// For tests.
	noSync   bool                // behave as if the server had no SYNC
	onSource func(source string) // called on every connection with the idle source in use
}

// NewIdleWatcher watches input idleness on display (normally
// os.Getenv("DISPLAY")); after is the idle threshold (config idle_after),
// at least a second. An empty display means there is nothing to watch.
func NewIdleWatcher(display string, after time.Duration, logger *slog.Logger) *IdleWatcher {
	if logger == nil {
		logger = slog.New(slog.DiscardHandler)
	}
	return &IdleWatcher{
		display:  display,
		after:    max(after, minIdleAfter),
		log:      logger,
		slowDial: redial.SlowDial,
	}
}

// Run calls report(true) when the user has been idle for the threshold and
// report(false) when input resumes, alternating, starting from "active" (the
// first report is true). report is called from Run's goroutine only, never
// concurrently, and not after Run returns. Run returns once ctx is done.
//
// When the X server goes away the last report stands; Run reconnects with
// backoff (1 s doubling to 30 s) and carries on from the new server's idle
// time, so a report(false) follows at once if the user was reported idle and
// the new server has seen input since. With no display it never reports.
func (w *IdleWatcher) Run(ctx context.Context, report func(idle bool)) {
	if w.display == "" {
		w.log.Warn("x11: idle detection is off", "reason", reasonNoDisplay)
		<-ctx.Done()
		return
	}
	states := make(chan bool)
	watch := func() {
		t := &idleTracker{log: w.log, post: redial.Sender(ctx, states)}
		r := &redialer{display: w.display, log: w.log, what: "idle detection", slowDial: w.slowDial}
		r.run(ctx, func(ctx context.Context, c *conn) error { return w.session(ctx, c, t) })
	}
	redial.Watch(ctx, states, watch, report, func() {
		w.log.Warn("x11: the X connection did not close in time; leaving it behind", "display", w.display, "for", "idle detection")
	})
}

// idleTracker is the watcher's state across connections.
type idleTracker struct {
	idle bool
	post func(bool) // blocks until Run takes the state, or ctx is done
	log  *slog.Logger
}

// set records a new state and posts it if it changed.
func (t *idleTracker) set(idle bool, idleFor time.Duration) {
	if idle == t.idle {
		return
	}
	t.idle = idle
	t.log.Debug("x11: idle state", "idle", idle, "idle_for", idleFor)
	t.post(idle)
}

// session watches idleness on one connection until it fails or ctx is done,
// with the best source the server offers.
func (w *IdleWatcher) session(ctx context.Context, c *conn, t *idleTracker) error {
	if !w.noSync {
		err := w.followSync(c, t)
		if !errors.Is(err, errNoSync) {
			return err
		}
		w.log.Info("x11: idle detection falls back to "+idleSourceScreenSaver, "display", w.display, "reason", err)
	}
	err := w.pollScreenSaver(ctx, c, t)
	if !errors.Is(err, errNoScreenSaver) {
		return err
	}
	w.source(idleSourceNone)
	w.log.Warn("x11: idle detection is off: the X server has neither SYNC IDLETIME nor MIT-SCREEN-SAVER", "display", w.display)
	return waitClosed(c)
}

func (w *IdleWatcher) source(s string) {
	w.log.Debug("x11: idle detection", "display", w.display, "source", s, "after", w.after)
	if w.onSource != nil {
		w.onSource(s)
	}
}

// waitClosed waits until the connection closes, discarding events.
func waitClosed(c *conn) error {
	for {
		if ev, xerr := c.x.WaitForEvent(); ev == nil && xerr == nil {
			return errConnClosed
		}
	}
}

// Which of the two SYNC alarms.
const (
	alarmIdle   = iota // IDLETIME >= after: the user went idle
	alarmResume        // IDLETIME < after: input again (only armed while idle)
)

// idleAlarms are the two alarms on IDLETIME. Both are comparisons with delta
// 0, so an alarm fires once, goes Inactive, and stays so until it is armed
// again; only one of the two is ever armed. A comparison (unlike a
// transition) fires at once if it already holds when armed, so nothing that
// happens between an alarm firing and the next being armed is missed.
type idleAlarms struct {
	c       *conn
	counter syncCounter
	id      [2]syncAlarm
	created [2]bool
}

// arm sets alarm which to fire when IDLETIME compares (test) to value ms,
// creating it on first use. An X error (BadMatch, BadValue, ...) is returned
// wrapped in errNoSync.
func (a *idleAlarms) arm(which int, test uint32, value int64) error {
	attrs := syncAlarmAttrs{
		Mask:      syncCAValueType | syncCAValue | syncCATestType | syncCADelta | syncCAEvents,
		ValueType: syncAbsolute,
		Value:     value,
		TestType:  test,
		Delta:     0,
		Events:    true,
	}
	var err error
	if a.created[which] {
		err = syncChangeAlarmChecked(a.c.x, a.id[which], attrs).Check()
	} else {
		attrs.Mask |= syncCACounter
		attrs.Counter = a.counter
		err = syncCreateAlarmChecked(a.c.x, a.id[which], attrs).Check()
		a.created[which] = err == nil
	}
	if err != nil && !isConnLost(err) {
		err = fmt.Errorf("%w: arming an alarm: %v", errNoSync, err)
	}
	return err
}

// destroy destroys the alarms that exist.
func (a *idleAlarms) destroy() {
	for i, ok := range a.created {
		if ok {
			syncDestroyAlarm(a.c.x, a.id[i])
			a.created[i] = false
		}
	}
}

// followSync watches IDLETIME through SYNC alarms until the connection fails.
// It returns an error wrapping errNoSync, with the connection still usable,
// when the server has no SYNC or no IDLETIME, or refuses the alarms.
func (w *IdleWatcher) followSync(c *conn, t *idleTracker) error {
	ext, err := syncInit(c.x)
	if err != nil {
		return noSync(err)
	}
	counters, err := syncListSystemCounters(c.x).Reply()
	if err == nil && counters == nil {
		err = errConnClosed
	}
	if err != nil {
		return noSync(err)
	}
	k := slices.IndexFunc(counters, func(sc syncSystemCounter) bool { return sc.Name == "IDLETIME" })
	if k < 0 {
		return noSync(errNoIdleTime)
	}
	a := &idleAlarms{c: c, counter: counters[k].Counter}
	for i := range a.id {
		id, err := c.x.NewId()
		if err != nil {
			return noSync(err)
		}
		a.id[i] = syncAlarm(id)
	}

	afterMs := w.after.Milliseconds()
	armIdle := func() error { return a.arm(alarmIdle, syncPositiveComparison, afterMs) }
	// NegativeComparison is "<=": fire once IDLETIME is below the threshold,
	// which only input can make it.
	armResume := func() error { return a.arm(alarmResume, syncNegativeComparison, afterMs-1) }

	// Carry on from the tracker's state: a fresh watcher, or one whose server
	// went away while the user was active, waits for idleness; one that last
	// reported idle waits for input (which fires at once on a new server that
	// has seen input since).
	arm := armIdle
	if t.idle {
		arm = armResume
	}
	if err := arm(); err != nil {
		a.destroy()
		return err
	}
	w.source(idleSourceSync)

	for {
		ev, xerr := c.x.WaitForEvent()
		if ev == nil && xerr == nil {
			return errConnClosed
		}
		if xerr != nil {
			w.log.Debug("x11: X error", "err", xerr, "for", "idle detection")
			continue
		}
		e, ok := ext.alarmNotify(ev)
		if !ok || e.State == syncAlarmDestroyed {
			continue
		}
		idleFor := time.Duration(e.CounterValue) * time.Millisecond
		var (
			next func() error
			idle bool
		)
		switch {
		case e.Alarm == a.id[alarmIdle] && !t.idle:
			next, idle = armResume, true
		case e.Alarm == a.id[alarmResume] && t.idle:
			next, idle = armIdle, false
		default:
			continue
		}
		// Arm first, then report: input that comes while report runs fires
		// the new alarm and is not lost.
		if err := next(); err != nil {
			a.destroy()
			return err
		}
		t.set(idle, idleFor)
	}
}

func noSync(err error) error {
	if isConnLost(err) || errors.Is(err, errConnClosed) {
		return err
	}
	return fmt.Errorf("%w: %v", errNoSync, err)
}

// pollScreenSaver watches idleness with MIT-SCREEN-SAVER QueryInfo until the
// connection fails or ctx is done. It returns errNoScreenSaver, with the
// connection still usable, when the server lacks the extension.
func (w *IdleWatcher) pollScreenSaver(ctx context.Context, c *conn, t *idleTracker) error {
	if err := screenSaverInit(c); err != nil {
		return err
	}
	w.source(idleSourceScreenSaver)

	// Nothing else reads this connection's events: notice here when it closes.
	gone := make(chan error, 1)
	go func() { gone <- waitClosed(c) }()

	var prev time.Duration // idle time at the previous query
	timer := time.NewTimer(0)
	defer timer.Stop()
	for {
		select {
		case err := <-gone:
			return err
		case <-ctx.Done():
			return ctx.Err()
		case <-timer.C:
		}
		r, err := screensaver.QueryInfo(c.x, xproto.Drawable(c.root)).Reply()
		if err == nil && r == nil {
			err = errConnClosed
		}
		if err != nil {
			return err
		}
		since := time.Duration(r.MsSinceUserInput) * time.Millisecond
		switch {
		case !t.idle && since >= w.after:
			t.set(true, since)
		case t.idle && (since < w.after || since < prev):
			t.set(false, since)
		}
		prev = since
		timer.Reset(pollDelay(t.idle, since, w.after))
	}
}

// screenSaverInit makes MIT-SCREEN-SAVER requests usable on c, or returns
// errNoScreenSaver. It does what screensaver.Init does minus registering the
// extension's event constructor in xgb's global map (see sync_linux.go):
// QueryInfo only needs the opcode, and we select no screen saver events.
func screenSaverInit(c *conn) error {
	q, err := xproto.QueryExtension(c.x, uint16(len(screenSaverExtName)), screenSaverExtName).Reply()
	if err == nil && q == nil {
		err = errConnClosed
	}
	if err != nil {
		return err
	}
	if !q.Present {
		return errNoScreenSaver
	}
	c.x.ExtLock.Lock()
	c.x.Extensions[screenSaverExtName] = q.MajorOpcode
	c.x.ExtLock.Unlock()
	return nil
}

// pollDelay is how long the MIT-SCREEN-SAVER fallback waits before its next
// query: while the user is away, awayPoll; while active, until the threshold
// could first be reached, given that the user has been idle for since.
func pollDelay(idle bool, since, after time.Duration) time.Duration {
	if idle {
		return awayPoll
	}
	return max(after-since, minPollDelay)
}
