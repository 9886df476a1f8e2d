package service

import (
	"context"
	"errors"
	"fmt"
	"strings"
	"time"
)

// Store is the durable memory of the core: the state snapshot, the raw
// per-session focus log and the hash-chained audit log. persist implements
// it on files under $XDG_STATE_HOME/antidrift.
//
// Every method may block on disk. The core never calls them while holding
// its state lock; it calls them in order under a separate write lock, so the
// files see changes in the order the core made them.
type Store interface {
	// SaveSnapshot replaces state.json atomically.
	SaveSnapshot(Snapshot) error
	// CheckWritable says whether the state directory takes writes now,
	// without changing anything in it.
	CheckWritable() error
	// AppendEvent appends one line to sessions/<sessionID>.jsonl and makes it
	// durable before returning.
	AppendEvent(sessionID string, e FocusEvent) error
	// EachEvent calls fn with each event of a session's raw log, in order,
	// streaming (a long session's log need not fit in memory). A torn last
	// line is skipped.
	EachEvent(sessionID string, fn func(FocusEvent)) error
	// CloseSession releases whatever the store keeps open for a session's
	// raw log. Appending again reopens it.
	CloseSession(sessionID string) error
	// AppendAudit seals a summary into the audit chain, assigning Seq,
	// PrevHash and Hash, and returns the summary as written.
	AppendAudit(Summary) (Summary, error)
	// AuditContains reports whether a session id is already sealed, so a
	// pending summary whose append succeeded just before a crash is not
	// sealed twice.
	AuditContains(sessionID string) (bool, error)
	// AuditHead is the hash of the last sealed summary ("" when none).
	AuditHead() string
	// VerifyAudit walks the whole chain.
	VerifyAudit() AuditReport
	// History returns up to limit sealed summaries, newest first.
	History(limit int) ([]Summary, error)
}

// Clock is the core's sense of time. Tests drive a fake one.
type Clock interface {
	// Now is the wall clock: the deadline and every recorded or shown time
	// are in wall time (how long the timebox has run is the boot clock's).
	Now() time.Time
	// Mono is a monotonic reading that stops while the machine sleeps.
	// Boot time running ahead of it between two events is a suspend.
	Mono() time.Duration
	// Boot is a monotonic reading that counts suspend (CLOCK_BOOTTIME) and
	// that setting the date does not move: the timebox and the break-glass
	// hold elapse on it. Wall time running ahead of it, or behind, between
	// two events is the clock being set.
	Boot() time.Duration
	// BootID names this boot: Boot readings from another boot cannot be
	// compared with this one's.
	BootID() string
	// AfterFunc calls f in its own goroutine once d has elapsed on the
	// monotonic clock (so a timer fires late after a suspend).
	AfterFunc(d time.Duration, f func()) Timer
}

// Reporter builds the JSON report of the sessions that started in
// [since, until) from the state directory (the report package does it; the
// daemon wires it in), of every machine sharing sync_dir or, with device
// set, of that one; a device no machine is named answers *NoSuchDevice.
// It only reads.
type Reporter interface {
	Report(since, until time.Time, device string) ([]byte, error)
}

// NoSuchDevice is a Reporter's answer to a device no machine is named:
// Devices are the names the machines have.
type NoSuchDevice struct {
	Device  string
	Devices []string
}

func (e *NoSuchDevice) Error() string {
	names := make([]string, len(e.Devices))
	for i, n := range e.Devices {
		names[i] = Quote(n)
	}
	return fmt.Sprintf("no machine is named %s (the machines are %s)", Quote(e.Device), strings.Join(names, ", "))
}

// Timer is a pending AfterFunc.
type Timer interface {
	// Stop prevents the call if it has not started; it reports whether it
	// did so.
	Stop() bool
}

// Listener hears what the core did, always after the core has released its
// lock, so a listener may call back into the core. dbusapi turns these into
// PropertiesChanged and signals.
type Listener interface {
	// Changed says the View may differ from the last one the listener saw.
	// Calls may be coalesced: the listener diffs View() itself.
	Changed()
	// SessionEnded says a session was sealed (auditHash is empty when the
	// append is still pending).
	SessionEnded(sessionID string, outcome Outcome, auditHash string)
	// Nudged says the person was nudged about drift.
	Nudged(windowClass, reason string)
}

// AppDirectory names windows the way the desktop does: it finds a
// window's desktop entry (apps.Index, behind an adapter the daemon wires).
// Lookup is an in-memory read that never blocks: the core calls it where a
// window enters, before it takes its lock, and under the lock for a class
// it no longer has the window of (Buckets after a restart).
type AppDirectory interface {
	// Lookup matches a window's WM_CLASS class and instance (or Wayland
	// app id as the class) and, when known, its sandboxed or GTK app id.
	Lookup(class, instance, appID string) (App, bool)
}

// SystemClock is the real clock.
type SystemClock struct{}

func (SystemClock) Now() time.Time { return time.Now() }

// processStart anchors Mono. Go's monotonic clock is CLOCK_MONOTONIC on
// Linux, which does not advance during suspend.
var processStart = time.Now()

func (SystemClock) Mono() time.Duration { return time.Since(processStart) }

func (SystemClock) AfterFunc(d time.Duration, f func()) Timer { return time.AfterFunc(d, f) }

// Guard is the hands: it acts on windows at the OS level. It is a dumb
// primitive; whether and when to act is decided here in the core. Both
// calls are best-effort and bounded by ctx; their errors are for the log.
type Guard interface {
	// MinimizeWindow iconifies window id, but only if it is still the active
	// window. It returns nil only when it did iconify; ErrNotActive when the
	// window is no longer active (the person moved on between the verdict and
	// action), and another error when it could not act.
	MinimizeWindow(ctx context.Context, id string) error
	// ActivateWindow asks the window manager to give window id focus, if it
	// still exists.
	ActivateWindow(ctx context.Context, id string) error
}

// ErrNotActive is the Guard's answer when the window it was asked to
// minimize no longer has focus, so it was left alone.
var ErrNotActive = errors.New("window is no longer the active window")

// Notifier shows desktop notifications (org.freedesktop.Notifications).
// The core decides what to say and when; the notifier only delivers, and
// reports the person's choice of action back through Service.NotificationAction.
// Calls may block on the bus, so the core makes them from its own worker
// goroutine, never under its lock.
type Notifier interface {
	// Notify shows n, replacing notification n.ReplacesID when it is not 0,
	// and returns the id the server gave it.
	Notify(ctx context.Context, n Notification) (uint32, error)
	// Close withdraws a notification.
	Close(ctx context.Context, id uint32) error
}

// Notification is one desktop notification.
type Notification struct {
	ReplacesID uint32
	Summary    string
	Body       string
	Category   string // e.g. "antidrift.drift"
	Urgency    byte   // 0 low, 1 normal, 2 critical
	Actions    []Action
	// NoActionsHint is appended to the body by a notifier whose server
	// cannot show actions, so the person still knows what to do.
	NoActionsHint string
}

// Action is a button on a notification.
type Action struct {
	Key   string // refocus, allow, complete, extend
	Label string // "Back to work"
}

// Judge is the judge: a model (llmjudge) that decides whether a window is
// on task when none of the session's rules does (allowed entries,
// distractions, "not a distraction"); without a Judge such a window is off
// task. "Judge" in the core means this and nothing else. A judge that can
// answer at once returns ok; a slower one returns ok == false and delivers
// its verdict later through deliver, from any goroutine, possibly more than
// once (an Unknown "unreachable" first, a real verdict after a retry). The
// core applies a late verdict only if that window is still the current
// one. Judge is called under the core's lock, so it must not block.
type Judge interface {
	Judge(q Question, deliver func(Verdict)) (v Verdict, ok bool)
}

// Question is everything a judge is told about a window: the commitment
// and the window's class and title as antidrift records them. Nothing
// else: no window handle, no instance, no raw title.
type Question struct {
	NextAction       string
	SuccessCondition string
	Class            string // the class, or the instance when it has none
	// Title is scrubbed (FoldTitle) and redacted (redact_titles); it is
	// empty for a private class, whose title is never recorded.
	Title string
	// Site is the page in front of a browser window whose tab report fits
	// it: its host, with the path only when the person opted in
	// (judge_site_paths); "" when no page is known. Never a query.
	Site string
}

// Verdict is a judge's answer for one window.
type Verdict struct {
	Task   Task
	Reason string // a sentence for DriftReason
}

// Task is on task, off task, or unknown.
type Task int

const (
	TaskUnknown Task = iota
	TaskOn
	TaskOff
)
