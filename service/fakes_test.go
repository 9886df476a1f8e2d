package service

import (
	"context"
	"crypto/sha256"
	"encoding/hex"
	"errors"
	"fmt"
	"io"
	"log/slog"
	"regexp"
	"strings"
	"sync"
	"testing"
	"time"
)

// fakeClock is a manual clock. Advance moves wall and monotonic time and
// fires due timers synchronously, in order, from the caller's goroutine;
// Suspend moves only the wall clock, as a sleeping machine does.
type fakeClock struct {
	mu     sync.Mutex
	now    time.Time
	mono   time.Duration
	boot   time.Duration // mono plus the time suspended
	bootID string
	timers []*fakeTimer
}

type fakeTimer struct {
	c       *fakeClock
	at      time.Duration // on the monotonic clock
	f       func()
	stopped bool
}

func newFakeClock() *fakeClock {
	return &fakeClock{now: time.Date(2026, 11, 29, 9, 0, 0, 0, time.UTC), bootID: "boot-1"}
}

func (c *fakeClock) Boot() time.Duration {
	c.mu.Lock()
	defer c.mu.Unlock()
	return c.boot
}

func (c *fakeClock) BootID() string {
	c.mu.Lock()
	defer c.mu.Unlock()
	return c.bootID
}

// SetWall sets the date, as timedatectl set-time does: only the wall clock
// moves.
func (c *fakeClock) SetWall(d time.Duration) {
	c.mu.Lock()
	defer c.mu.Unlock()
	c.now = c.now.Add(d)
}

// Reboot starts a new boot: the boot clock starts again.
func (c *fakeClock) Reboot() {
	c.mu.Lock()
	defer c.mu.Unlock()
	c.boot, c.bootID = 0, c.bootID+"'"
}

func (c *fakeClock) Now() time.Time {
	c.mu.Lock()
	defer c.mu.Unlock()
	return c.now
}

func (c *fakeClock) Mono() time.Duration {
	c.mu.Lock()
	defer c.mu.Unlock()
	return c.mono
}

// Suspend puts the machine to sleep for d: wall and boot time pass,
// monotonic time and timers do not.
func (c *fakeClock) Suspend(d time.Duration) {
	c.mu.Lock()
	defer c.mu.Unlock()
	c.now = c.now.Add(d)
	c.boot += d
}

func (c *fakeClock) AfterFunc(d time.Duration, f func()) Timer {
	c.mu.Lock()
	defer c.mu.Unlock()
	t := &fakeTimer{c: c, at: c.mono + d, f: f}
	c.timers = append(c.timers, t)
	return t
}

func (t *fakeTimer) Stop() bool {
	t.c.mu.Lock()
	defer t.c.mu.Unlock()
	was := !t.stopped
	t.stopped = true
	return was
}

// armed counts timers that have neither fired nor been stopped.
func (c *fakeClock) armed() int {
	c.mu.Lock()
	defer c.mu.Unlock()
	n := 0
	for _, t := range c.timers {
		if !t.stopped {
			n++
		}
	}
	return n
}

func (c *fakeClock) Advance(d time.Duration) {
	c.mu.Lock()
	end := c.mono + d
	c.mu.Unlock()
	for {
		c.mu.Lock()
		var next *fakeTimer
		for _, t := range c.timers {
			if !t.stopped && t.at <= end && (next == nil || t.at < next.at) {
				next = t
			}
		}
		if next == nil {
			c.now = c.now.Add(end - c.mono)
			c.boot += end - c.mono
			c.mono = end
			c.mu.Unlock()
			return
		}
		next.stopped = true
		c.now = c.now.Add(next.at - c.mono)
		c.boot += next.at - c.mono
		c.mono = next.at
		c.mu.Unlock()
		next.f()
	}
}

// fakeStore keeps everything in memory and can be told to fail.
type fakeStore struct {
	mu        sync.Mutex
	snapshots []Snapshot
	events    map[string][]FocusEvent
	audit     []Summary
	failAudit bool
	failSave  bool
	broken    string // what VerifyAudit reports; "" = intact
}

func newFakeStore() *fakeStore { return &fakeStore{events: map[string][]FocusEvent{}} }

func (f *fakeStore) SaveSnapshot(s Snapshot) error {
	f.mu.Lock()
	defer f.mu.Unlock()
	if f.failSave {
		return errors.New("no space left on device")
	}
	f.snapshots = append(f.snapshots, s)
	return nil
}

func (f *fakeStore) CheckWritable() error {
	f.mu.Lock()
	defer f.mu.Unlock()
	if f.failSave {
		return errors.New("read-only file system")
	}
	return nil
}

func (f *fakeStore) last() Snapshot {
	f.mu.Lock()
	defer f.mu.Unlock()
	if len(f.snapshots) == 0 {
		return Snapshot{} // nothing was ever saved: a first start
	}
	return f.snapshots[len(f.snapshots)-1]
}

func (f *fakeStore) AppendEvent(id string, e FocusEvent) error {
	f.mu.Lock()
	defer f.mu.Unlock()
	f.events[id] = append(f.events[id], e)
	return nil
}

func (f *fakeStore) EachEvent(id string, fn func(FocusEvent)) error {
	f.mu.Lock()
	events := append([]FocusEvent(nil), f.events[id]...)
	f.mu.Unlock()
	for _, e := range events {
		fn(e)
	}
	return nil
}

func (f *fakeStore) CloseSession(string) error { return nil }

func (f *fakeStore) AppendAudit(s Summary) (Summary, error) {
	f.mu.Lock()
	defer f.mu.Unlock()
	if f.failAudit {
		return Summary{}, errors.New("read-only file system")
	}
	s.Seq = uint64(len(f.audit)) + 1
	s.PrevHash = f.head()
	sum := sha256.Sum256([]byte(fmt.Sprint(s)))
	s.Hash = hex.EncodeToString(sum[:])
	f.audit = append(f.audit, s)
	return s, nil
}

func (f *fakeStore) head() string {
	if len(f.audit) == 0 {
		return ""
	}
	return f.audit[len(f.audit)-1].Hash
}

func (f *fakeStore) AuditContains(id string) (bool, error) {
	f.mu.Lock()
	defer f.mu.Unlock()
	for _, s := range f.audit {
		if s.SessionID == id {
			return true, nil
		}
	}
	return false, nil
}

func (f *fakeStore) AuditHead() string {
	f.mu.Lock()
	defer f.mu.Unlock()
	return f.head()
}

func (f *fakeStore) VerifyAudit() AuditReport {
	f.mu.Lock()
	defer f.mu.Unlock()
	if f.broken != "" {
		return AuditReport{Entries: 1, Problem: f.broken}
	}
	return AuditReport{OK: true, Entries: uint32(len(f.audit))}
}

func (f *fakeStore) History(limit int) ([]Summary, error) {
	f.mu.Lock()
	defer f.mu.Unlock()
	var out []Summary
	for i := len(f.audit) - 1; i >= 0 && len(out) < limit; i-- {
		out = append(out, f.audit[i])
	}
	return out, nil
}

func (f *fakeStore) sealed() []Summary {
	f.mu.Lock()
	defer f.mu.Unlock()
	return append([]Summary(nil), f.audit...)
}

// recorder is a Listener that reads the view on every change, which would
// deadlock if the core told it while holding its lock.
type recorder struct {
	s      *Service
	mu     sync.Mutex
	views  []View
	ended  []string
	nudges []string
}

func (r *recorder) Changed() {
	v := r.s.View()
	r.mu.Lock()
	r.views = append(r.views, v)
	r.mu.Unlock()
}

func (r *recorder) SessionEnded(id string, o Outcome, hash string) {
	r.mu.Lock()
	r.ended = append(r.ended, fmt.Sprintf("%s %s %s", id, o, hash))
	r.mu.Unlock()
}

func (r *recorder) Nudged(class, reason string) {
	r.mu.Lock()
	r.nudges = append(r.nudges, class+": "+reason)
	r.mu.Unlock()
}

var quiet = slog.New(slog.NewTextHandler(io.Discard, nil))

type harness struct {
	*Service
	clock    *fakeClock
	store    *fakeStore
	rec      *recorder
	reporter *fakeReporter
	tasks    *fakeTasks
}

// fakeReporter stands in for the report package: it remembers the range
// it was asked for and answers with a fixed document, or with err.
type fakeReporter struct {
	since, until time.Time
	device       string
	err          error
}

func (f *fakeReporter) Report(since, until time.Time, device string) ([]byte, error) {
	f.since, f.until, f.device = since, until, device
	if f.err != nil {
		return nil, f.err
	}
	return []byte(`{"schema":1}`), nil
}

func newHarness(t *testing.T) *harness {
	t.Helper()
	h := &harness{clock: newFakeClock(), store: newFakeStore(), reporter: &fakeReporter{}, tasks: newFakeTasks("taskwarrior")}
	h.Service = New(Options{Store: h.store, Clock: h.clock, Version: "test", Logger: quiet, BreakGlassHold: 5 * time.Minute, Reporter: h.reporter, Tasks: []TaskSource{h.tasks}})
	h.rec = &recorder{s: h.Service}
	h.AddListener(h.rec)
	if err := h.Recover(Snapshot{}); err != nil {
		t.Fatal(err)
	}
	return h
}

// restart builds a new core on the same store and clock, as a daemon
// restart would, from the last snapshot.
func (h *harness) restart(t *testing.T) *harness {
	t.Helper()
	if h.tasks == nil {
		h.tasks = newFakeTasks("taskwarrior")
	}
	n := &harness{clock: h.clock, store: h.store, reporter: h.reporter, tasks: h.tasks}
	n.Service = New(Options{Store: h.store, Clock: h.clock, Version: "test", Logger: quiet, BreakGlassHold: 5 * time.Minute, Reporter: h.reporter, Tasks: []TaskSource{h.tasks}})
	n.rec = &recorder{s: n.Service}
	n.AddListener(n.rec)
	if err := n.Recover(h.store.last()); err != nil {
		t.Fatal(err)
	}
	return n
}

func (h *harness) start(t *testing.T, level Level, allowed ...string) string {
	t.Helper()
	id, err := h.Start("write the intro", "intro is committed", 25*60, string(level), allowed)
	if err != nil {
		t.Fatalf("Start: %v", err)
	}
	return id
}

func must(t *testing.T, err error) {
	t.Helper()
	if err != nil {
		t.Fatal(err)
	}
}

func win(class, title string) Window {
	return Window{ID: "1", Class: class, Instance: class, Title: title, Available: true}
}

// fakeGuard records what it was asked to do.
type fakeGuard struct {
	mu        sync.Mutex
	minimized []string
	activated []string
	err       error // returned by MinimizeWindow
}

func (g *fakeGuard) MinimizeWindow(_ context.Context, id string) error {
	g.mu.Lock()
	defer g.mu.Unlock()
	if g.err != nil {
		return g.err
	}
	g.minimized = append(g.minimized, id)
	return nil
}

func (g *fakeGuard) ActivateWindow(_ context.Context, id string) error {
	g.mu.Lock()
	defer g.mu.Unlock()
	g.activated = append(g.activated, id)
	return nil
}

func (g *fakeGuard) calls() (minimized, activated []string) {
	g.mu.Lock()
	defer g.mu.Unlock()
	return append([]string(nil), g.minimized...), append([]string(nil), g.activated...)
}

// fakeNotifier is a notification server that honours replaces_id.
type fakeNotifier struct {
	mu     sync.Mutex
	next   uint32
	shown  []Notification
	ids    []uint32
	open   map[uint32]Notification
	closed []uint32
}

func (n *fakeNotifier) Notify(_ context.Context, note Notification) (uint32, error) {
	n.mu.Lock()
	defer n.mu.Unlock()
	if n.open == nil {
		n.open = map[uint32]Notification{}
	}
	id := note.ReplacesID
	if id == 0 {
		n.next++
		id = n.next
	}
	n.shown = append(n.shown, note)
	n.ids = append(n.ids, id)
	n.open[id] = note
	return id, nil
}

func (n *fakeNotifier) Close(_ context.Context, id uint32) error {
	n.mu.Lock()
	defer n.mu.Unlock()
	delete(n.open, id)
	n.closed = append(n.closed, id)
	return nil
}

func (n *fakeNotifier) onScreen() []Notification {
	n.mu.Lock()
	defer n.mu.Unlock()
	var out []Notification
	for _, v := range n.open {
		out = append(out, v)
	}
	return out
}

func (n *fakeNotifier) history() ([]Notification, []uint32) {
	n.mu.Lock()
	defer n.mu.Unlock()
	return append([]Notification(nil), n.shown...), append([]uint32(nil), n.ids...)
}

// first is the first notification shown and its id, failing t (rather
// than panicking on an index) when none was.
func (n *fakeNotifier) first(t *testing.T) (Notification, uint32) {
	t.Helper()
	shown, ids := n.history()
	if len(shown) == 0 {
		t.Fatal("notifications shown: got none, want one")
	}
	return shown[0], ids[0]
}

// settle waits until queued notifications and enforcement have happened.
func (h *harness) settle() {
	h.background.Wait()
	if h.nudges != nil {
		done := make(chan struct{})
		h.nudges.enqueue(func(context.Context) { close(done) })
		<-done
	}
	h.background.Wait()
}

type driftOpts struct {
	grace        time.Duration
	noGuard      bool
	judge        Judge
	distractions []string
	private      []string
	redact       []*regexp.Regexp
	apps         AppDirectory
}

// newDriftHarness is a core with a fake guard and notifier.
func newDriftHarness(t *testing.T, o driftOpts) (*harness, *fakeGuard, *fakeNotifier) {
	t.Helper()
	g, n := &fakeGuard{}, &fakeNotifier{}
	h := &harness{clock: newFakeClock(), store: newFakeStore()}
	opts := Options{Store: h.store, Clock: h.clock, Logger: quiet, DriftGrace: o.grace, NudgeRepeat: 2 * time.Minute, Notifier: n, Judge: o.judge,
		Distractions: o.distractions, PrivateClasses: o.private, RedactTitles: o.redact, Apps: o.apps}
	if !o.noGuard {
		opts.Guard = g
	}
	h.Service = New(opts)
	h.rec = &recorder{s: h.Service}
	h.AddListener(h.rec)
	must(t, h.Recover(Snapshot{}))
	t.Cleanup(h.Shutdown)
	return h, g, n
}

func winID(id string, class string) Window {
	return Window{ID: id, Class: class, Instance: strings.ToLower(class), Title: class + " window", Available: true}
}

// fmtAll prints anything, for searching recorded data for secrets.
func fmtAll(v any) string { return fmt.Sprintf("%+v", v) }
