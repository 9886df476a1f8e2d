package presence

import (
	"context"
	"errors"
	"fmt"
	"log/slog"
	"os"
	"slices"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/godbus/dbus/v5"
	"github.com/godbus/dbus/v5/prop"

	"github.com/antidrift/antidrift/internal/busname"
	"github.com/antidrift/antidrift/internal/testsupport/testenv"
)

// presenceWait bounds every wait for something the watcher should do. It is
// generous on purpose: it only matters when a test is failing.
const presenceWait = 20 * time.Second

// The screen saver services as the tests see them.
var (
	freedesktopScreenSaver = fakeScreenSaverDef{"org.freedesktop.ScreenSaver", []dbus.ObjectPath{"/org/freedesktop/ScreenSaver", "/ScreenSaver"}}
	gnomeScreenSaver       = fakeScreenSaverDef{"org.gnome.ScreenSaver", []dbus.ObjectPath{"/org/gnome/ScreenSaver"}}
	screenSaverDefs        = []fakeScreenSaverDef{freedesktopScreenSaver, gnomeScreenSaver}
)

func locked(away bool) Event {
	return Event{Reason: ReasonLocked, Away: away, Source: SourceScreenSaver}
}

func logindEvent(reason string, away bool) Event {
	return Event{Reason: reason, Away: away, Source: SourceLogind}
}

func TestScreenSaverActiveChanged(t *testing.T) {
	for _, def := range screenSaverDefs {
		t.Run(def.name, func(t *testing.T) {
			t.Parallel()
			bus := testenv.StartBus(t)
			ss := startFakeScreenSaver(t, bus, def, false)
			h := watchScreenSaverOn(t, bus)
			h.heardAnswers(t, ss.conn.Names()[0], 1) // GetActive

			for _, path := range def.paths {
				ss.setActive(t, path, true)
				h.rec.expect(t, locked(true))
				ss.setActive(t, path, false)
				h.rec.expect(t, locked(false))
			}

			// The same state twice (as KDE does, once per path) is one report.
			for _, path := range append(def.paths, def.paths...) {
				ss.setActive(t, path, true)
			}
			h.fence(t, ss.conn)
			h.rec.expect(t, locked(true))
			h.rec.none(t)
			ss.setActive(t, def.paths[0], false)
			ss.setActive(t, def.paths[0], false)
			h.fence(t, ss.conn)
			h.rec.expect(t, locked(false))
			h.rec.none(t)
		})
	}
}

func TestScreenSaverGetActiveAtStart(t *testing.T) {
	for _, def := range screenSaverDefs {
		t.Run(def.name, func(t *testing.T) {
			t.Parallel()
			bus := testenv.StartBus(t)
			ss := startFakeScreenSaver(t, bus, def, true)
			h := watchScreenSaverOn(t, bus)
			h.rec.expect(t, locked(true))
			if ss.asked.Load() == 0 {
				t.Error("the initial report came without a GetActive call")
			}
			ss.setActive(t, def.paths[0], false)
			h.rec.expect(t, locked(false))
		})
	}

	// Not locked at start: nothing to say until it is.
	t.Run("inactive", func(t *testing.T) {
		t.Parallel()
		bus := testenv.StartBus(t)
		ss := startFakeScreenSaver(t, bus, freedesktopScreenSaver, false)
		h := watchScreenSaverOn(t, bus)
		testenv.WaitFor(t, presenceWait, "GetActive to be asked (times asked to be at least 1)", ss.asked.Load, func(n int32) bool { return n > 0 })
		h.fence(t, ss.conn)
		h.rec.none(t)
	})
}

func TestScreenSaverIgnoresForeignAndMalformedSignals(t *testing.T) {
	for _, def := range screenSaverDefs {
		t.Run(def.name, func(t *testing.T) {
			t.Parallel()
			bus := testenv.StartBus(t)
			ss := startFakeScreenSaver(t, bus, def, true)
			h := watchScreenSaverOn(t, bus)
			h.rec.expect(t, locked(true))
			me := h.conn.Names()[0]
			owner := ss.conn.Names()[0]
			activeChanged := def.name + ".ActiveChanged"

			// Another client says the screen was unlocked: broadcast (the
			// bus does not pass it on, the rule names the sender) and
			// straight to us (the bus does), then claims the name with a
			// NameOwnerChanged of its own and says it again.
			forger := presenceConnect(t, bus)
			if err := forger.Emit(def.paths[0], activeChanged, false); err != nil {
				t.Fatal(err)
			}
			testenv.SendSignalTo(t, forger, me, def.paths[0], activeChanged, false)
			testenv.SendSignalTo(t, forger, me, busname.BusPath, "org.freedesktop.DBus.NameOwnerChanged", def.name, owner, forger.Names()[0])
			testenv.SendSignalTo(t, forger, me, def.paths[0], activeChanged, false)
			h.logs.waitCount(t, 3, busname.LogForeignSignal, forger.Names()[0])

			// The owner itself, with the wrong arguments.
			for _, args := range [][]any{{"no"}, {}, {false, false}, {uint32(0)}} {
				ss.emit(t, def.paths[0], args...)
			}
			h.logs.waitCount(t, 4, logMalformedSignal, owner)
			h.rec.none(t)

			// Still locked, still trusting the owner.
			ss.setActive(t, def.paths[0], false)
			h.rec.expect(t, locked(false))
		})
	}
}

// When the screen saver leaves the bus, what it said goes with it; a new
// owner is asked, and only it is listened to.
func TestScreenSaverFollowsOwnerChanges(t *testing.T) {
	t.Parallel()
	bus := testenv.StartBus(t)
	first := startFakeScreenSaver(t, bus, freedesktopScreenSaver, true)
	h := watchScreenSaverOn(t, bus)
	h.rec.expect(t, locked(true))

	first.release(t)
	h.rec.expect(t, locked(false))

	// The old owner, still connected, is no one now.
	first.setActive(t, freedesktopScreenSaver.paths[0], true)
	testenv.SendSignalTo(t, first.conn, h.conn.Names()[0], freedesktopScreenSaver.paths[0], freedesktopScreenSaver.name+".ActiveChanged", true)
	h.logs.waitCount(t, 1, busname.LogForeignSignal, first.conn.Names()[0])
	h.rec.none(t)

	second := startFakeScreenSaver(t, bus, freedesktopScreenSaver, true)
	h.rec.expect(t, locked(true))
	second.setActive(t, "/ScreenSaver", false)
	h.rec.expect(t, locked(false))
}

// With both screen savers running, the screen is locked while either says so.
func TestScreenSaverBothInterfaces(t *testing.T) {
	t.Parallel()
	bus := testenv.StartBus(t)
	fd := startFakeScreenSaver(t, bus, freedesktopScreenSaver, false)
	gnome := startFakeScreenSaver(t, bus, gnomeScreenSaver, false)
	h := watchScreenSaverOn(t, bus)
	h.heardAnswers(t, fd.conn.Names()[0], 1) // GetActive
	h.heardAnswers(t, gnome.conn.Names()[0], 1)

	fd.setActive(t, fd.paths[0], true)
	h.rec.expect(t, locked(true))
	gnome.setActive(t, gnome.paths[0], true)
	// The bus passes on what one connection sends in order, but not what
	// two send: have gnome's signal on its way before fd's.
	roundTrip(t, gnome.conn)
	fd.setActive(t, fd.paths[0], false)
	h.fence(t, fd.conn, gnome.conn)
	h.rec.none(t)
	gnome.setActive(t, gnome.paths[0], false)
	h.rec.expect(t, locked(false))
}

func TestPresenceStop(t *testing.T) {
	t.Parallel()
	bus := testenv.StartBus(t)
	ss := startFakeScreenSaver(t, bus, freedesktopScreenSaver, false)
	h := watchScreenSaverOn(t, bus)
	rules := matchRules(t, bus, h.conn)

	h.stopNow()
	h.stopNow() // idempotent
	// Two NameOwnerChanged rules, three ActiveChanged ones (one per path).
	if after := matchRules(t, bus, h.conn); rules >= 0 && (rules != 5 || after != 0) {
		t.Errorf("the watcher's connection had %d match rules, %d after stop; want 5, then 0", rules, after)
	}
	// The recorder fails the test if this is reported.
	ss.setActive(t, ss.paths[0], true)
	roundTrip(t, ss.conn)
	roundTrip(t, h.conn)
	h.rec.none(t)

	// A watcher whose connection goes away stops by itself; stop still works.
	h2 := watchScreenSaverOn(t, bus)
	h2.rec.expect(t, locked(true))
	h2.conn.Close()
	done := make(chan struct{})
	go func() { h2.stopNow(); close(done) }()
	select {
	case <-done:
	case <-time.After(presenceWait):
		t.Fatal("stop hung after the connection was closed")
	}
}

func TestLogindSleepAndLock(t *testing.T) {
	t.Parallel()
	system := testenv.StartBus(t)
	ld := startFakeLogind(t, system, fakeLogindOptions{})
	h := watchLogindOn(t, system)
	if pids := ld.pids(); !slices.Equal(pids, []uint32{uint32(os.Getpid())}) {
		t.Errorf("GetSessionByPID was asked for %v, want our pid %d", pids, os.Getpid())
	}
	h.heardAnswers(t, ld.conn.Names()[0], 3) // GetSessionByPID, LockedHint, PreparingForSleep

	ld.prepareForSleep(t, true)
	h.rec.expect(t, logindEvent(ReasonSleep, true))
	ld.prepareForSleep(t, false)
	h.rec.expect(t, logindEvent(ReasonSleep, false))

	ld.setLocked(true)
	h.rec.expect(t, logindEvent(ReasonLocked, true))
	ld.setLocked(false)
	h.rec.expect(t, logindEvent(ReasonLocked, false))

	// Each state once.
	ld.prepareForSleep(t, true)
	ld.prepareForSleep(t, true)
	ld.setLocked(true)
	ld.setLocked(true)
	h.fence(t, ld.conn)
	h.rec.expect(t, logindEvent(ReasonSleep, true), logindEvent(ReasonLocked, true))
	h.rec.none(t)
}

func TestLogindStateAtStart(t *testing.T) {
	t.Parallel()
	system := testenv.StartBus(t)
	startFakeLogind(t, system, fakeLogindOptions{locked: true, sleeping: true})
	h := watchLogindOn(t, system)
	got := []Event{h.rec.next(t), h.rec.next(t)}
	want := []Event{logindEvent(ReasonLocked, true), logindEvent(ReasonSleep, true)}
	if !slices.Contains(got, want[0]) || !slices.Contains(got, want[1]) {
		t.Fatalf("at start got %+v, want %+v in any order", got, want)
	}
}

// A daemon started as a systemd user service is in no session of its own:
// GetSession("auto") finds the user's.
func TestLogindSessionFallback(t *testing.T) {
	t.Parallel()
	system := testenv.StartBus(t)
	ld := startFakeLogind(t, system, fakeLogindOptions{noSessionForPID: true})
	h := watchLogindOn(t, system)
	if ids := ld.sessionIDs(); !slices.Equal(ids, []string{"auto"}) {
		t.Errorf("GetSession was asked for %q, want [auto]", ids)
	}
	h.heardAnswers(t, ld.conn.Names()[0], 4) // GetSessionByPID's error, GetSession, the two properties
	ld.setLocked(true)
	h.rec.expect(t, logindEvent(ReasonLocked, true))
}

func TestLogindIgnoresForeignAndMalformedSignals(t *testing.T) {
	t.Parallel()
	system := testenv.StartBus(t)
	ld := startFakeLogind(t, system, fakeLogindOptions{})
	h := watchLogindOn(t, system)
	me := h.conn.Names()[0]
	owner := ld.conn.Names()[0]

	forger := presenceConnect(t, system)
	testenv.SendSignalTo(t, forger, me, logindPath, prepareForSleep, true)
	testenv.SendSignalTo(t, forger, me, fakeSessionPath, propertiesChanged, logindSession,
		map[string]dbus.Variant{lockedHint: dbus.MakeVariant(true)}, []string{})
	testenv.SendSignalTo(t, forger, me, busname.BusPath, "org.freedesktop.DBus.NameOwnerChanged", logindName, owner, forger.Names()[0])
	testenv.SendSignalTo(t, forger, me, logindPath, prepareForSleep, true)
	h.logs.waitCount(t, 4, busname.LogForeignSignal, forger.Names()[0])

	h.heardAnswers(t, owner, 3) // GetSessionByPID, LockedHint, PreparingForSleep
	ld.emit(t, logindPath, prepareForSleep, "yes")
	ld.emit(t, logindPath, prepareForSleep)
	ld.emit(t, fakeSessionPath, propertiesChanged, logindSession, map[string]dbus.Variant{lockedHint: dbus.MakeVariant("yes")}, []string{})
	ld.emit(t, fakeSessionPath, propertiesChanged, logindSession, lockedHint, true)
	h.logs.waitCount(t, 4, logMalformedSignal, owner)
	h.rec.none(t)

	ld.prepareForSleep(t, true)
	h.rec.expect(t, logindEvent(ReasonSleep, true))
	ld.setLocked(true)
	h.rec.expect(t, logindEvent(ReasonLocked, true))
}

// When logind restarts, the new one is asked and listened to.
func TestLogindFollowsRestart(t *testing.T) {
	t.Parallel()
	system := testenv.StartBus(t)
	first := startFakeLogind(t, system, fakeLogindOptions{locked: true})
	h := watchLogindOn(t, system)
	h.rec.expect(t, logindEvent(ReasonLocked, true))

	first.conn.Close()
	h.rec.expect(t, logindEvent(ReasonLocked, false))

	second := startFakeLogind(t, system, fakeLogindOptions{locked: true})
	h.rec.expect(t, logindEvent(ReasonLocked, true))
	h.heardAnswers(t, second.conn.Names()[0], 2) // LockedHint, PreparingForSleep
	second.prepareForSleep(t, true)
	h.rec.expect(t, logindEvent(ReasonSleep, true))
}

func TestLogindUnreachable(t *testing.T) {
	t.Parallel()
	if _, err := WatchLogind(nil, nil, nil); !errors.Is(err, ErrNoLogind) {
		t.Errorf("WatchLogind(nil) = %v, want ErrNoLogind", err)
	}

	t.Run("no logind", func(t *testing.T) {
		t.Parallel()
		system := testenv.StartBus(t)
		h := newPresenceHarness(t, system, logindFence)
		stop, err := WatchLogind(h.conn, h.logs.logger(), h.rec.report)
		if !errors.Is(err, ErrNoLogind) || stop != nil {
			t.Fatalf("WatchLogind without logind = (stop set: %v, %v), want ErrNoLogind", stop != nil, err)
		}
		if errors.Is(err, context.DeadlineExceeded) {
			t.Fatalf("WatchLogind waited out its bound (%v); with nothing to start the bus answers at once", err)
		}
		t.Logf("the error the daemon logs: %v", err)
	})

	t.Run("logind does not answer", func(t *testing.T) {
		t.Parallel()
		system := testenv.StartBus(t)
		startHungLogind(t, system)
		h := newPresenceHarness(t, system, logindFence)
		// ErrNoLogind and our own deadline: the hung logind was not waited for
		// past busname.CallTimeout (the bus's default is 25 s).
		stop, err := WatchLogind(h.conn, h.logs.logger(), h.rec.report)
		if !errors.Is(err, ErrNoLogind) || !errors.Is(err, context.DeadlineExceeded) || stop != nil {
			t.Fatalf("WatchLogind with a hung logind = (stop set: %v, %v), want ErrNoLogind and a deadline", stop != nil, err)
		}
	})
}

// presenceHarness is a watcher under test on its own connection to a
// private bus, with what it reports and logs.
type presenceHarness struct {
	conn *dbus.Conn
	rec  *presenceRecorder
	logs *presenceLogs
	stop func()

	fencer *dbus.Conn // sends the fence signals
	forge  fenceSignal

	answersMu sync.Mutex
	answers   map[string]int // method replies and errors conn has read, by sender
}

// fenceSignal is a signal the watcher drops as not coming from the service.
type fenceSignal struct {
	path dbus.ObjectPath
	name string
	args []any
}

var (
	screenSaverFence = fenceSignal{freedesktopScreenSaver.paths[0], freedesktopScreenSaver.name + ".ActiveChanged", []any{true}}
	logindFence      = fenceSignal{logindPath, prepareForSleep, []any{true}}
)

func newPresenceHarness(t *testing.T, bus *testenv.Bus, forge fenceSignal) *presenceHarness {
	t.Helper()
	h := &presenceHarness{
		rec:     &presenceRecorder{t: t, events: make(chan Event, 64)},
		logs:    &presenceLogs{t: t, grew: make(chan struct{}, 1)},
		fencer:  presenceConnect(t, bus),
		forge:   forge,
		answers: map[string]int{},
	}
	h.conn = presenceConnect(t, bus, dbus.WithIncomingInterceptor(h.countAnswer))
	// Runs before the connections are closed (cleanups run last first).
	t.Cleanup(h.stopNow)
	return h
}

func watchScreenSaverOn(t *testing.T, bus *testenv.Bus) *presenceHarness {
	t.Helper()
	h := newPresenceHarness(t, bus, screenSaverFence)
	stop, err := WatchScreenSaver(h.conn, h.logs.logger(), h.rec.report)
	if err != nil {
		t.Fatalf("WatchScreenSaver: %v", err)
	}
	h.stop = stop
	return h
}

func watchLogindOn(t *testing.T, bus *testenv.Bus) *presenceHarness {
	t.Helper()
	h := newPresenceHarness(t, bus, logindFence)
	stop, err := WatchLogind(h.conn, h.logs.logger(), h.rec.report)
	if err != nil {
		t.Fatalf("WatchLogind: %v", err)
	}
	h.stop = stop
	return h
}

// countAnswer counts a reply or error conn reads. It runs in conn's
// reading goroutine, before the message gets its sequence number.
func (h *presenceHarness) countAnswer(msg *dbus.Message) {
	if msg.Type != dbus.TypeMethodReply && msg.Type != dbus.TypeError {
		return
	}
	sender, _ := msg.Headers[dbus.FieldSender].Value().(string)
	h.answersMu.Lock()
	h.answers[sender]++
	h.answersMu.Unlock()
}

// heardAnswers waits until the watcher's connection has read n answers
// from the connection owner, the unique name of a fake service. A fake
// answers on one of godbus's goroutines, so an answer it computed early can
// reach the watcher after signals it sent later, and rightly count as
// newer; a real service answers and signals from one thread, in order.
// Tests that change a fake's state right after the watcher starts wait
// here for the watcher's questions at start to be answered.
func (h *presenceHarness) heardAnswers(t *testing.T, owner string, n int) {
	t.Helper()
	testenv.WaitFor(t, presenceWait, fmt.Sprintf("the watcher to read %d answers from %s", n, owner), func() int {
		h.answersMu.Lock()
		defer h.answersMu.Unlock()
		return h.answers[owner]
	}, func(read int) bool { return read >= n })
}

// stopNow stops the watcher; from then on the recorder fails the test on
// any report.
func (h *presenceHarness) stopNow() {
	if h.stop != nil {
		h.stop()
	}
	h.rec.stopped.Store(true)
}

// fence returns once the watcher has handled every signal the emitters sent
// before: each emitter's round trip to the bus makes the bus pass on what it
// sent first, then one signal the watcher drops (and logs) follows them.
func (h *presenceHarness) fence(t *testing.T, emitters ...*dbus.Conn) {
	t.Helper()
	for _, c := range emitters {
		roundTrip(t, c)
	}
	fencer := h.fencer.Names()[0]
	n := h.logs.count(busname.LogForeignSignal, fencer)
	testenv.SendSignalTo(t, h.fencer, h.conn.Names()[0], h.forge.path, h.forge.name, h.forge.args...)
	h.logs.waitCount(t, n+1, busname.LogForeignSignal, fencer)
}

// presenceRecorder is the report callback. It fails the test if called
// concurrently or after stop has returned.
type presenceRecorder struct {
	t       *testing.T
	events  chan Event
	inside  atomic.Int32
	stopped atomic.Bool
}

func (r *presenceRecorder) report(ev Event) {
	if r.inside.Add(1) != 1 {
		r.t.Errorf("report(%+v): got a concurrent call, want one at a time", ev)
	}
	defer r.inside.Add(-1)
	if r.stopped.Load() {
		r.t.Errorf("report(%+v): got a call after stop returned, want none", ev)
	}
	select {
	case r.events <- ev:
	default:
		r.t.Errorf("report(%+v): got one report too many, want at most %d unread", ev, cap(r.events))
	}
}

func (r *presenceRecorder) next(t *testing.T) Event {
	t.Helper()
	select {
	case ev := <-r.events:
		return ev
	case <-time.After(presenceWait):
		t.Fatalf("report within %v: got none, want one", presenceWait)
		return Event{}
	}
}

// expect checks the next reports, in order.
func (r *presenceRecorder) expect(t *testing.T, want ...Event) {
	t.Helper()
	for _, w := range want {
		if got := r.next(t); got != w {
			t.Fatalf("reported %+v, want %+v", got, w)
		}
	}
}

// none checks that nothing more has been reported (after a fence, this is
// "nothing was reported for what came before it").
func (r *presenceRecorder) none(t *testing.T) {
	t.Helper()
	select {
	case ev := <-r.events:
		t.Fatalf("report: got %+v, want none", ev)
	default:
	}
}

// presenceLogs keeps the watcher's log records, so that a test can wait
// for the one saying a signal was dropped, and copies them to the test log.
type presenceLogs struct {
	t       *testing.T
	mu      sync.Mutex
	records []presenceLogRecord
	grew    chan struct{}
}

type presenceLogRecord struct {
	msg   string
	attrs map[string]string
}

func (l *presenceLogs) logger() *slog.Logger { return slog.New(presenceLogHandler{sink: l}) }

func (l *presenceLogs) count(msg, sender string) int {
	l.mu.Lock()
	defer l.mu.Unlock()
	n := 0
	for _, r := range l.records {
		if r.msg == msg && r.attrs["sender"] == sender {
			n++
		}
	}
	return n
}

// waitCount waits until msg has been logged at least n times for signals
// from sender.
func (l *presenceLogs) waitCount(t *testing.T, n int, msg, sender string) {
	t.Helper()
	deadline := time.After(presenceWait)
	for l.count(msg, sender) < n {
		select {
		case <-l.grew:
		case <-deadline:
			t.Fatalf("the watcher logged %q for %s %d times within %v, want %d", msg, sender, l.count(msg, sender), presenceWait, n)
		}
	}
}

type presenceLogHandler struct {
	sink  *presenceLogs
	attrs []slog.Attr
}

func (h presenceLogHandler) Enabled(context.Context, slog.Level) bool { return true }

func (h presenceLogHandler) Handle(_ context.Context, r slog.Record) error {
	rec := presenceLogRecord{msg: r.Message, attrs: map[string]string{}}
	var line strings.Builder
	fmt.Fprintf(&line, "%s %s", r.Level, r.Message)
	add := func(a slog.Attr) bool {
		rec.attrs[a.Key] = a.Value.String()
		fmt.Fprintf(&line, " %s=%q", a.Key, a.Value.String())
		return true
	}
	for _, a := range h.attrs {
		add(a)
	}
	r.Attrs(add)
	h.sink.t.Log(line.String())
	h.sink.mu.Lock()
	h.sink.records = append(h.sink.records, rec)
	h.sink.mu.Unlock()
	select {
	case h.sink.grew <- struct{}{}:
	default:
	}
	return nil
}

func (h presenceLogHandler) WithAttrs(attrs []slog.Attr) slog.Handler {
	return presenceLogHandler{sink: h.sink, attrs: append(slices.Clone(h.attrs), attrs...)}
}

func (h presenceLogHandler) WithGroup(string) slog.Handler { return h }

func presenceConnect(t *testing.T, bus *testenv.Bus, opts ...dbus.ConnOption) *dbus.Conn {
	t.Helper()
	conn, err := dbus.Connect(bus.Address, opts...)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { conn.Close() })
	return conn
}

// roundTrip returns once the bus has answered c, and so has passed on
// everything c sent before.
func roundTrip(t *testing.T, c *dbus.Conn) {
	t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), presenceWait)
	defer cancel()
	var id string
	if err := c.BusObject().CallWithContext(ctx, "org.freedesktop.DBus.GetId", 0).Store(&id); err != nil && !errors.Is(err, dbus.ErrClosed) {
		t.Fatalf("round trip to the bus: %v", err)
	}
}

// matchRules is how many match rules conn has on the bus, or -1 if this
// dbus-daemon was built without the Debug.Stats interface.
func matchRules(t *testing.T, bus *testenv.Bus, conn *dbus.Conn) int {
	t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), presenceWait)
	defer cancel()
	var stats map[string]dbus.Variant
	err := conn.Object(busname.Bus, busname.BusPath).CallWithContext(ctx, "org.freedesktop.DBus.Debug.Stats.GetConnectionStats", 0, conn.Names()[0]).Store(&stats)
	if err != nil {
		t.Logf("cannot count match rules: %v", err)
		return -1
	}
	n, ok := stats["MatchRules"].Value().(uint32)
	if !ok {
		t.Logf("cannot count match rules: %v", stats)
		return -1
	}
	return int(n)
}

// fakeScreenSaverDef is a screen saver service: its name (also its
// interface) and the paths it serves.
type fakeScreenSaverDef struct {
	name  string
	paths []dbus.ObjectPath
}

// fakeScreenSaver serves GetActive and sends ActiveChanged on a bus
// connection of its own: a real D-Bus peer.
type fakeScreenSaver struct {
	fakeScreenSaverDef
	conn   *dbus.Conn
	active atomic.Bool
	asked  atomic.Int32
}

func startFakeScreenSaver(t *testing.T, bus *testenv.Bus, def fakeScreenSaverDef, active bool) *fakeScreenSaver {
	t.Helper()
	f := &fakeScreenSaver{fakeScreenSaverDef: def, conn: presenceConnect(t, bus)}
	f.active.Store(active)
	for _, path := range def.paths {
		if err := f.conn.Export(fakeScreenSaverMethods{f}, path, def.name); err != nil {
			t.Fatal(err)
		}
	}
	reply, err := f.conn.RequestName(def.name, dbus.NameFlagDoNotQueue)
	if err != nil || reply != dbus.RequestNameReplyPrimaryOwner {
		t.Fatalf("RequestName(%s) = %v, %v", def.name, reply, err)
	}
	return f
}

// fakeScreenSaverMethods are what the fake exports on the bus.
type fakeScreenSaverMethods struct{ f *fakeScreenSaver }

func (m fakeScreenSaverMethods) GetActive() (bool, *dbus.Error) {
	m.f.asked.Add(1)
	return m.f.active.Load(), nil
}

func (f *fakeScreenSaver) setActive(t *testing.T, path dbus.ObjectPath, active bool) {
	t.Helper()
	f.active.Store(active)
	f.emit(t, path, active)
}

func (f *fakeScreenSaver) emit(t *testing.T, path dbus.ObjectPath, args ...any) {
	t.Helper()
	if err := f.conn.Emit(path, f.name+".ActiveChanged", args...); err != nil {
		t.Fatal(err)
	}
}

func (f *fakeScreenSaver) release(t *testing.T) {
	t.Helper()
	if reply, err := f.conn.ReleaseName(f.name); err != nil || reply != dbus.ReleaseNameReplyReleased {
		t.Fatalf("ReleaseName(%s) = %v, %v", f.name, reply, err)
	}
}

const fakeSessionPath = dbus.ObjectPath("/org/freedesktop/login1/session/_32")

type fakeLogindOptions struct {
	locked, sleeping bool // LockedHint and PreparingForSleep at start
	noSessionForPID  bool // GetSessionByPID fails, as for a systemd user service
}

// fakeLogind is org.freedesktop.login1 as far as the watcher uses it: the
// manager's GetSessionByPID, GetSession, PreparingForSleep and
// PrepareForSleep, and one session with LockedHint, whose changes are
// announced with PropertiesChanged as logind does.
type fakeLogind struct {
	conn    *dbus.Conn
	opts    fakeLogindOptions
	session *prop.Properties

	mu    sync.Mutex
	byPID []uint32
	byID  []string
}

func startFakeLogind(t *testing.T, system *testenv.Bus, opts fakeLogindOptions) *fakeLogind {
	t.Helper()
	f := &fakeLogind{conn: presenceConnect(t, system), opts: opts}
	if err := f.conn.Export(fakeLogindManager{f}, logindPath, logindManager); err != nil {
		t.Fatal(err)
	}
	_, err := prop.Export(f.conn, logindPath, prop.Map{logindManager: {
		preparingToSleep: {Value: opts.sleeping, Emit: prop.EmitFalse},
	}})
	if err != nil {
		t.Fatal(err)
	}
	f.session, err = prop.Export(f.conn, fakeSessionPath, prop.Map{logindSession: {
		"Id":       {Value: "32", Emit: prop.EmitConst},
		lockedHint: {Value: opts.locked, Emit: prop.EmitTrue},
	}})
	if err != nil {
		t.Fatal(err)
	}
	reply, err := f.conn.RequestName(logindName, dbus.NameFlagDoNotQueue)
	if err != nil || reply != dbus.RequestNameReplyPrimaryOwner {
		t.Fatalf("RequestName(%s) = %v, %v", logindName, reply, err)
	}
	return f
}

type fakeLogindManager struct{ f *fakeLogind }

func (m fakeLogindManager) GetSessionByPID(pid uint32) (dbus.ObjectPath, *dbus.Error) {
	m.f.mu.Lock()
	defer m.f.mu.Unlock()
	m.f.byPID = append(m.f.byPID, pid)
	if m.f.opts.noSessionForPID {
		return "", dbus.NewError("org.freedesktop.login1.NoSessionForPID", []any{fmt.Sprintf("PID %d does not belong to any known session", pid)})
	}
	return fakeSessionPath, nil
}

func (m fakeLogindManager) GetSession(id string) (dbus.ObjectPath, *dbus.Error) {
	m.f.mu.Lock()
	defer m.f.mu.Unlock()
	m.f.byID = append(m.f.byID, id)
	if id == "auto" || id == "32" {
		return fakeSessionPath, nil
	}
	return "", dbus.NewError("org.freedesktop.login1.NoSuchSession", []any{"No session '" + id + "' known"})
}

func (f *fakeLogind) pids() []uint32 {
	f.mu.Lock()
	defer f.mu.Unlock()
	return slices.Clone(f.byPID)
}

func (f *fakeLogind) sessionIDs() []string {
	f.mu.Lock()
	defer f.mu.Unlock()
	return slices.Clone(f.byID)
}

func (f *fakeLogind) setLocked(locked bool) {
	f.session.SetMust(logindSession, lockedHint, locked)
}

func (f *fakeLogind) prepareForSleep(t *testing.T, sleeping bool) {
	t.Helper()
	f.emit(t, logindPath, prepareForSleep, sleeping)
}

func (f *fakeLogind) emit(t *testing.T, path dbus.ObjectPath, name string, args ...any) {
	t.Helper()
	if err := f.conn.Emit(path, name, args...); err != nil {
		t.Fatal(err)
	}
}

// startHungLogind owns org.freedesktop.login1 but answers nothing until
// the test ends.
func startHungLogind(t *testing.T, system *testenv.Bus) {
	t.Helper()
	conn := presenceConnect(t, system)
	release := make(chan struct{})
	t.Cleanup(func() { close(release) }) // before conn is closed
	if err := conn.Export(hungLogindManager{release}, logindPath, logindManager); err != nil {
		t.Fatal(err)
	}
	reply, err := conn.RequestName(logindName, dbus.NameFlagDoNotQueue)
	if err != nil || reply != dbus.RequestNameReplyPrimaryOwner {
		t.Fatalf("RequestName(%s) = %v, %v", logindName, reply, err)
	}
}

type hungLogindManager struct{ release chan struct{} }

func (m hungLogindManager) GetSessionByPID(uint32) (dbus.ObjectPath, *dbus.Error) {
	<-m.release
	return fakeSessionPath, nil
}

func (m hungLogindManager) GetSession(string) (dbus.ObjectPath, *dbus.Error) {
	<-m.release
	return fakeSessionPath, nil
}
