package presence

import (
	"sync/atomic"
	"testing"

	"github.com/godbus/dbus/v5"
	"github.com/godbus/dbus/v5/prop"

	"github.com/antidrift/antidrift/internal/busname"
	"github.com/antidrift/antidrift/internal/testsupport/testenv"
)

// These tests run the watcher against a stand-in for GNOME Shell's
// org.gnome.Shell.ScreenTime on a private dbus-daemon: a godbus peer that
// owns org.gnome.Shell and exports State and LastBreakEndTime on
// /org/gnome/Shell/ScreenTime, announcing changes with PropertiesChanged as
// the Shell does. Real GNOME Shell with short break reminders is in the
// desktop tests (cmd/antidriftd: TestGnomeBreakReminderIsABreak for
// IN_BREAK, TestGnomeBreakDue for BREAK_DUE): the Shell's break manager
// waits on real idle time, so the states' edges are tested here.

func inBreak(away bool) Event {
	return Event{Reason: ReasonBreak, Away: away, Source: SourceScreenTime}
}

// breakDue stands for a call of the due callback in the recorder, so that
// one recorder checks both callbacks are never concurrent nor late.
func breakDue(due bool) Event {
	return Event{Reason: "due", Away: due, Source: SourceScreenTime}
}

// screenTimeFence is PropertiesChanged from someone who is not the Shell.
var screenTimeFence = fenceSignal{screenTimePath, propertiesChanged, []any{screenTimeIface, map[string]dbus.Variant{screenTimeState: dbus.MakeVariant(BreakInBreak)}, []string{}}}

func watchScreenTimeOn(t *testing.T, bus *testenv.Bus) *presenceHarness {
	t.Helper()
	h := newPresenceHarness(t, bus, screenTimeFence)
	stop, err := WatchScreenTime(h.conn, h.logs.logger(), h.rec.report, func(due bool) { h.rec.report(breakDue(due)) })
	if err != nil {
		t.Fatalf("WatchScreenTime: %v", err)
	}
	h.stop = stop
	return h
}

// fakeShell owns org.gnome.Shell and, unless it plays a Shell older than
// 48, exports org.gnome.Shell.ScreenTime.
type fakeShell struct {
	conn  *dbus.Conn
	props *prop.Properties
	asked atomic.Int32
}

func startFakeShell(t *testing.T, bus *testenv.Bus, state uint32, withScreenTime bool) *fakeShell {
	t.Helper()
	f := &fakeShell{conn: presenceConnect(t, bus)}
	if withScreenTime {
		var err error
		f.props, err = prop.Export(f.conn, screenTimePath, prop.Map{screenTimeIface: {
			screenTimeState:    {Value: state, Emit: prop.EmitTrue},
			"LastBreakEndTime": {Value: uint64(0), Emit: prop.EmitTrue},
		}})
		if err != nil {
			t.Fatal(err)
		}
	}
	reply, err := f.conn.RequestName(screenTimeName, dbus.NameFlagDoNotQueue)
	if err != nil || reply != dbus.RequestNameReplyPrimaryOwner {
		t.Fatalf("RequestName(%s) = %v, %v", screenTimeName, reply, err)
	}
	return f
}

func (f *fakeShell) setState(state uint32) {
	f.props.SetMust(screenTimeIface, screenTimeState, state)
}

func (f *fakeShell) emit(t *testing.T, args ...any) {
	t.Helper()
	if err := f.conn.Emit(screenTimePath, propertiesChanged, args...); err != nil {
		t.Fatal(err)
	}
}

func TestScreenTimeInBreakIsAway(t *testing.T) {
	t.Parallel()
	bus := testenv.StartBus(t)
	shell := startFakeShell(t, bus, BreakActive, true)
	h := watchScreenTimeOn(t, bus)
	h.heardAnswers(t, shell.conn.Names()[0], 1) // Get State

	shell.setState(BreakInBreak)
	h.rec.expect(t, inBreak(true))
	// The break is over but the person is still idle: no longer a break.
	shell.setState(BreakIdle)
	h.rec.expect(t, inBreak(false))
	shell.setState(BreakInBreak)
	h.rec.expect(t, inBreak(true))
	shell.setState(BreakActive)
	h.rec.expect(t, inBreak(false))

	shell.setState(BreakDue)
	h.rec.expect(t, breakDue(true))
	shell.setState(BreakDue) // the same again: nothing new
	// The person takes the due break: no longer due, and away.
	shell.setState(BreakInBreak)
	h.rec.expect(t, inBreak(true), breakDue(false))
	shell.setState(BreakActive)
	h.rec.expect(t, inBreak(false))

	// Break reminders turned off, and states the watcher does not know:
	// neither away nor due.
	for _, s := range []uint32{BreakDisabled, BreakIdle, 5, 42} {
		shell.setState(s)
	}
	h.fence(t, shell.conn)
	h.rec.none(t)
}

func TestScreenTimeStateAtStart(t *testing.T) {
	for _, c := range []struct {
		name  string
		state uint32
		want  Event
	}{
		{"in break", BreakInBreak, inBreak(true)},
		{"break due", BreakDue, breakDue(true)},
	} {
		t.Run(c.name, func(t *testing.T) {
			t.Parallel()
			bus := testenv.StartBus(t)
			shell := startFakeShell(t, bus, c.state, true)
			h := watchScreenTimeOn(t, bus)
			h.rec.expect(t, c.want)
			shell.setState(BreakActive)
			h.rec.expect(t, Event{Reason: c.want.Reason, Away: false, Source: SourceScreenTime})
		})
	}
}

// Where there is no break manager — no Shell at all, or a Shell older than
// 48 without the ScreenTime object — nothing is reported, and a Shell that
// comes later is followed.
func TestScreenTimeWithoutBreakManager(t *testing.T) {
	t.Parallel()
	bus := testenv.StartBus(t)
	h := watchScreenTimeOn(t, bus)
	old := startFakeShell(t, bus, 0, false)
	h.heardAnswers(t, old.conn.Names()[0], 1) // Get State: UnknownObject
	h.fence(t, old.conn)
	h.rec.none(t)

	old.conn.Close()
	shell := startFakeShell(t, bus, BreakInBreak, true)
	h.rec.expect(t, inBreak(true))
	shell.setState(BreakActive)
	h.rec.expect(t, inBreak(false))
}

// A forged break changes nothing: not a PropertiesChanged from another
// client, not one after a forged NameOwnerChanged, not a malformed one
// from the Shell itself.
func TestScreenTimeIgnoresForeignAndMalformedSignals(t *testing.T) {
	t.Parallel()
	bus := testenv.StartBus(t)
	shell := startFakeShell(t, bus, BreakActive, true)
	h := watchScreenTimeOn(t, bus)
	me := h.conn.Names()[0]
	owner := shell.conn.Names()[0]
	h.heardAnswers(t, owner, 1)

	forger := presenceConnect(t, bus)
	inBreakChange := map[string]dbus.Variant{screenTimeState: dbus.MakeVariant(BreakInBreak)}
	if err := forger.Emit(screenTimePath, propertiesChanged, screenTimeIface, inBreakChange, []string{}); err != nil {
		t.Fatal(err)
	}
	testenv.SendSignalTo(t, forger, me, screenTimePath, propertiesChanged, screenTimeIface, inBreakChange, []string{})
	testenv.SendSignalTo(t, forger, me, busname.BusPath, "org.freedesktop.DBus.NameOwnerChanged", screenTimeName, owner, forger.Names()[0])
	testenv.SendSignalTo(t, forger, me, screenTimePath, propertiesChanged, screenTimeIface, inBreakChange, []string{})
	h.logs.waitCount(t, 3, busname.LogForeignSignal, forger.Names()[0])

	// The Shell itself, malformed: State of the wrong type, the wrong
	// arguments; and a change of another interface is none of ours.
	shell.emit(t, screenTimeIface, map[string]dbus.Variant{screenTimeState: dbus.MakeVariant(int32(BreakInBreak))}, []string{})
	shell.emit(t, screenTimeIface, map[string]dbus.Variant{screenTimeState: dbus.MakeVariant("IN_BREAK")}, []string{})
	shell.emit(t, screenTimeIface, screenTimeState, BreakInBreak)
	shell.emit(t, "org.gnome.Shell.Other", inBreakChange, []string{})
	h.logs.waitCount(t, 3, logMalformedSignal, owner)
	h.fence(t, shell.conn)
	h.rec.none(t)

	// Still trusting the Shell.
	shell.setState(BreakInBreak)
	h.rec.expect(t, inBreak(true))
}

// A restarted Shell is read again; what the old one said goes with it.
func TestScreenTimeFollowsShellRestart(t *testing.T) {
	t.Parallel()
	bus := testenv.StartBus(t)
	first := startFakeShell(t, bus, BreakInBreak, true)
	h := watchScreenTimeOn(t, bus)
	h.rec.expect(t, inBreak(true))

	first.conn.Close()
	h.rec.expect(t, inBreak(false))

	second := startFakeShell(t, bus, BreakDue, true)
	h.rec.expect(t, breakDue(true))
	h.heardAnswers(t, second.conn.Names()[0], 1)
	second.setState(BreakInBreak)
	h.rec.expect(t, inBreak(true), breakDue(false))
}

func TestScreenTimeStop(t *testing.T) {
	t.Parallel()
	bus := testenv.StartBus(t)
	shell := startFakeShell(t, bus, BreakInBreak, true)
	h := watchScreenTimeOn(t, bus)
	h.rec.expect(t, inBreak(true))
	before := matchRules(t, bus, h.conn)
	h.stopNow()
	h.stopNow() // idempotent
	// One NameOwnerChanged rule, one PropertiesChanged rule.
	if after := matchRules(t, bus, h.conn); before >= 0 && (before != 2 || after != 0) {
		t.Errorf("the watcher's connection had %d match rules, %d after stop; want 2, then 0", before, after)
	}
	// The recorder fails the test if this is reported.
	shell.setState(BreakActive)
	roundTrip(t, shell.conn)
	roundTrip(t, h.conn)
	h.rec.none(t)
	if _, err := WatchScreenTime(nil, nil, nil, nil); err == nil {
		t.Error("WatchScreenTime(nil conn): got no error, want one")
	}
}
