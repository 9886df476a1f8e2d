package x11

import (
	"bytes"
	"context"
	"encoding/hex"
	"fmt"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/jezek/xgb"
	"github.com/jezek/xgb/screensaver"
	"github.com/jezek/xgb/xproto"

	"github.com/antidrift/antidrift/internal/testsupport/testenv"
)

// testIdleAfter is the idle threshold in end-to-end tests: idleness takes
// real time, so it is short, but long enough that xdotool calls made right
// after a report come well within it.
const testIdleAfter = 2 * time.Second

// idleRun is an IdleWatcher running until the test ends.
type idleRun struct {
	reports chan bool
	sources chan string // one per connection the watcher made
	seen    []bool
}

func startIdleWatcher(t *testing.T, w *IdleWatcher) *idleRun {
	t.Helper()
	r := &idleRun{reports: make(chan bool, 64), sources: make(chan string, 64)}
	w.onSource = func(s string) { r.sources <- s }
	runUntilCleanup(t, "IdleWatcher.Run", r.reports, w.Run)
	return r
}

// next waits for the next report and fails unless it is want: reports
// alternate, so anything else is a bug.
func (r *idleRun) next(t *testing.T, want bool) {
	t.Helper()
	select {
	case got := <-r.reports:
		r.seen = append(r.seen, got)
		if got != want {
			t.Fatalf("got report(%v), want report(%v); reports so far: %v", got, want, r.seen)
		}
	case <-time.After(waitTimeout):
		t.Fatalf("timed out waiting for report(%v); reports so far: %v", want, r.seen)
	}
}

// source waits for the watcher to connect and returns the idle source it
// uses on that connection.
func (r *idleRun) source(t *testing.T) string {
	t.Helper()
	select {
	case s := <-r.sources:
		return s
	case <-time.After(waitTimeout):
		t.Fatal("timed out waiting for the idle watcher to connect")
		return ""
	}
}

// mouse moves the pointer with xdotool (XTEST), which the X server counts as
// user input. Each move goes somewhere new: a move to where the pointer
// already is may not count.
type mouse struct {
	d *testenv.Display
	n int
}

func (m *mouse) move(t *testing.T) {
	t.Helper()
	m.n++
	if _, err := m.d.Run(t, "xdotool", "mousemove", fmt.Sprint(100+37*m.n), fmt.Sprint(100+23*m.n)); err != nil {
		t.Fatal(err)
	}
}

func testIdleCycle(t *testing.T, noSync bool, wantSource string) {
	testenv.Need(t, "Xvfb", "openbox", "xdotool", "xprop")
	d := testenv.StartX(t)
	m := &mouse{d: d}
	w := NewIdleWatcher(d.Name, testIdleAfter, testenv.Logger())
	w.noSync = noSync
	r := startIdleWatcher(t, w)
	if got := r.source(t); got != wantSource {
		t.Fatalf("idle source = %q, want %q", got, wantSource)
	}

	r.next(t, true) // nobody touched the new display
	m.move(t)
	r.next(t, false)
	r.next(t, true) // and idle again: the alarms re-arm
	m.move(t)
	r.next(t, false)
}

func TestIdleWatcherSync(t *testing.T) {
	testIdleCycle(t, false, idleSourceSync)
}

func TestIdleWatcherScreenSaverFallback(t *testing.T) {
	testIdleCycle(t, true, idleSourceScreenSaver)
}

func TestIdleWatcherReconnects(t *testing.T) {
	testenv.Need(t, "Xvfb", "openbox", "xdotool", "xprop")
	d := testenv.StartX(t)
	m := &mouse{d: d}
	r := startIdleWatcher(t, NewIdleWatcher(d.Name, testIdleAfter, testenv.Logger()))
	r.source(t)
	r.next(t, true)

	d.Restart(t)
	// Once the watcher is on the new server, input there ends the idleness
	// reported on the old one (at once if the new server's idle time is
	// already below the threshold when the watcher arrives).
	if got := r.source(t); got != idleSourceSync {
		t.Fatalf("idle source after reconnecting = %q, want %q", got, idleSourceSync)
	}
	m.move(t)
	r.next(t, false)
	r.next(t, true)
}

func TestIdleWatcherNoDisplay(t *testing.T) {
	w := NewIdleWatcher("", testIdleAfter, testenv.Logger())
	ctx, cancel := context.WithTimeout(context.Background(), 200*time.Millisecond)
	defer cancel()
	var reports []bool
	done := make(chan struct{})
	go func() {
		defer close(done)
		w.Run(ctx, func(idle bool) { reports = append(reports, idle) })
	}()
	select {
	case <-done:
	case <-time.After(waitTimeout):
		t.Fatal("Run did not return after its context ended")
	}
	if len(reports) != 0 {
		t.Errorf("reports with no display: got %v, want none", reports)
	}
}

func TestIdleWatcherWedgedServer(t *testing.T) {
	w := NewIdleWatcher(wedgedDisplay(t), testIdleAfter, testenv.Logger())
	w.slowDial = 50 * time.Millisecond
	ctx, cancel := context.WithTimeout(context.Background(), 300*time.Millisecond)
	defer cancel()
	done := make(chan struct{})
	go func() {
		defer close(done)
		w.Run(ctx, func(idle bool) { t.Errorf("a server that never answered: got report(%v), want none", idle) })
	}()
	select {
	case <-done:
	case <-time.After(waitTimeout):
		t.Fatal("Run did not return after cancel while the X server never answered")
	}
}

// TestSyncQueryCounter reads IDLETIME through SYNC around an MIT-SCREEN-SAVER
// query of the same thing: with no input in between, the readings are in
// order. It checks the INT64 decoding and the system counter list against a
// real server.
func TestIdleSyncQueryCounter(t *testing.T) {
	testenv.Need(t, "Xvfb", "openbox", "xprop")
	d := testenv.StartX(t)
	c, err := dial(d.Name)
	if err != nil {
		t.Fatal(err)
	}
	defer c.x.Close()
	ext, err := syncInit(c.x)
	if err != nil {
		t.Fatal(err)
	}
	if ext.major != 3 {
		t.Errorf("SYNC version %d.%d, want 3.x", ext.major, ext.minor)
	}
	counters, err := syncListSystemCounters(c.x).Reply()
	if err != nil {
		t.Fatal(err)
	}
	var idle syncCounter
	var names []string
	for _, sc := range counters {
		names = append(names, sc.Name)
		if sc.Name == "IDLETIME" {
			idle = sc.Counter
		}
	}
	if idle == 0 {
		t.Fatalf("system counters: got %q, want IDLETIME among them", names)
	}
	if err := screenSaverInit(c); err != nil {
		t.Fatal(err)
	}
	before, err := syncQueryCounter(c.x, idle).Reply()
	if err != nil {
		t.Fatal(err)
	}
	info, err := screensaver.QueryInfo(c.x, xproto.Drawable(c.root)).Reply()
	if err != nil {
		t.Fatal(err)
	}
	after, err := syncQueryCounter(c.x, idle).Reply()
	if err != nil {
		t.Fatal(err)
	}
	ss := int64(info.MsSinceUserInput)
	if !(0 <= before && before <= ss && ss <= after) {
		t.Errorf("IDLETIME %d ms, then MIT-SCREEN-SAVER %d ms, then IDLETIME %d ms: want them in order", before, ss, after)
	}
}

// --- wire format, checked against X11/extensions/syncproto.h ---

func le32(v uint32) []byte { return []byte{byte(v), byte(v >> 8), byte(v >> 16), byte(v >> 24)} }

func cat(parts ...[]byte) []byte { return bytes.Join(parts, nil) }

func fakeSyncConn(opcode byte) *xgb.Conn {
	return &xgb.Conn{Extensions: map[string]byte{syncExtName: opcode}}
}

// hexBytes decodes "86 08 0b 00 ...".
func hexBytes(t *testing.T, s string) []byte {
	t.Helper()
	b, err := hex.DecodeString(strings.ReplaceAll(s, " ", ""))
	if err != nil {
		t.Fatal(err)
	}
	return b
}

// TestIdleSyncRequestBytes compares our requests with what libXext sends for
// the same calls (XSyncInitialize, XSyncListSystemCounters,
// XSyncCreateAlarm, XSyncChangeAlarm, XSyncQueryCounter, XSyncDestroyAlarm),
// captured on the wire from a small C program talking to Xvfb, where SYNC's
// major opcode was 134, IDLETIME was counter 0x3e and the alarm 0xc00001.
func TestIdleSyncRequestBytes(t *testing.T) {
	c := fakeSyncConn(134)
	var sent [][]byte
	capture := func(buf []byte) { sent = append(sent, buf) }

	buf, b := syncRequest(c, syncOpInitialize, 8)
	buf[b], buf[b+1] = 3, 1
	capture(buf)
	buf, _ = syncRequest(c, syncOpListSystemCounters, 4)
	capture(buf)
	attrs := syncAlarmAttrs{
		Mask:      syncCACounter | syncCAValueType | syncCAValue | syncCATestType | syncCADelta | syncCAEvents,
		Counter:   0x3e,
		ValueType: syncAbsolute,
		Value:     1<<32 | 2, // hi 1, lo 2
		TestType:  syncNegativeComparison,
		Delta:     -1,
		Events:    true,
	}
	capture(syncAlarmRequest(c, syncOpCreateAlarm, 0xc00001, attrs))
	attrs.Mask = syncCAValue | syncCATestType // only these, still in bit order
	attrs.Value = 1999
	capture(syncAlarmRequest(c, syncOpChangeAlarm, 0xc00001, attrs))
	buf, b = syncRequest(c, syncOpQueryCounter, 8)
	xgb.Put32(buf[b:], 0x3e)
	capture(buf)
	buf, b = syncRequest(c, syncOpDestroyAlarm, 8)
	xgb.Put32(buf[b:], 0xc00001)
	capture(buf)

	libXext := []string{
		"86 00 02 00 03 01 00 00",
		"86 01 01 00",
		"86 08 0b 00 01 00 c0 00 3f 00 00 00 3e 00 00 00 00 00 00 00 01 00 00 00 02 00 00 00 03 00 00 00 ff ff ff ff ff ff ff ff 01 00 00 00",
		"86 09 06 00 01 00 c0 00 0c 00 00 00 00 00 00 00 cf 07 00 00 03 00 00 00",
		"86 05 02 00 3e 00 00 00",
		"86 0b 02 00 01 00 c0 00",
	}
	for i, want := range libXext {
		if got := sent[i]; !bytes.Equal(got, hexBytes(t, want)) {
			t.Errorf("request %d:\n got % x\nwant %s", i, got, want)
		}
	}
}

func TestIdleSyncAlarmNotifyParse(t *testing.T) {
	ext := &syncExt{firstEvent: 90}
	buf := cat(
		[]byte{91, 1, 0x34, 0x12}, // type = first_event+1, kind AlarmNotify, sequence
		le32(0x400001),            // alarm
		le32(0), le32(2001),       // counter value
		le32(0), le32(2000), // alarm value
		le32(123456),       // timestamp
		[]byte{1, 0, 0, 0}, // state Inactive, pad
	)
	ev := xgb.NewEventFuncs[91](buf) // what xgb's reader does with it
	got, ok := ext.alarmNotify(ev)
	if !ok {
		t.Fatalf("event %v: got not an AlarmNotify, want one", ev)
	}
	want := syncAlarmNotifyEvent{Kind: 1, Sequence: 0x1234, Alarm: 0x400001, CounterValue: 2001, AlarmValue: 2000, Timestamp: 123456, State: syncAlarmInactive}
	if got != want {
		t.Errorf("AlarmNotify = %+v, want %+v", got, want)
	}
	if _, ok := (&syncExt{firstEvent: 80}).alarmNotify(ev); ok {
		t.Error("an event of another extension was taken for AlarmNotify")
	}
	if _, ok := ext.alarmNotify(xproto.PropertyNotifyEvent{}); ok {
		t.Error("a core event was taken for AlarmNotify")
	}
	if v := getInt64(cat(le32(0xffffffff), le32(0xfffffffe))); v != -2 {
		t.Errorf("INT64 {hi -1, lo 0xfffffffe} = %d, want -2", v)
	}
}

func TestIdleSyncListSystemCountersParse(t *testing.T) {
	entry := func(id uint32, resolution int64, name string) []byte {
		b := cat(le32(id), le32(uint32(resolution>>32)), le32(uint32(resolution)), []byte{byte(len(name)), 0}, []byte(name))
		return append(b, make([]byte, xgb.Pad(len(b))-len(b))...)
	}
	list := cat(entry(1, 4, "SERVERTIME"), entry(2, 4, "IDLETIME"), entry(7, 1<<33, "DEVICEIDLETIME 2"))
	reply := cat([]byte{1, 0, 5, 0}, le32(uint32(len(list)/4)), le32(3), make([]byte, 20), list)
	got, err := parseSystemCounters(reply)
	if err != nil {
		t.Fatal(err)
	}
	want := []syncSystemCounter{{1, 4, "SERVERTIME"}, {2, 4, "IDLETIME"}, {7, 1 << 33, "DEVICEIDLETIME 2"}}
	if fmt.Sprint(got) != fmt.Sprint(want) {
		t.Errorf("counters = %+v, want %+v", got, want)
	}
	if _, err := parseSystemCounters(reply[:len(reply)-4]); err == nil {
		t.Error("a truncated reply parsed without error")
	}
}

func TestIdleSyncErrorsHaveConstructors(t *testing.T) {
	// SYNC's Counter and Alarm errors (codes first_error+0, +1) must reach
	// the cookie that caused them, which xgb only does for codes it can
	// construct.
	buf := cat([]byte{0, 155, 7, 0}, le32(0x400001), []byte{9, 0, 140}, make([]byte, 21))
	err := xgb.NewErrorFuncs[155](buf)
	if err.SequenceId() != 7 || err.BadId() != 0x400001 {
		t.Errorf("error %v: sequence %d, bad id %#x", err, err.SequenceId(), err.BadId())
	}
}

func TestIdlePollDelay(t *testing.T) {
	for _, tc := range []struct {
		idle         bool
		since, after time.Duration
		want         time.Duration
	}{
		{false, 0, 3 * time.Minute, 3 * time.Minute},                             // just active: the whole threshold
		{false, 70 * time.Second, 3 * time.Minute, 110 * time.Second},            // part of the way there
		{false, 3*time.Minute - time.Millisecond, 3 * time.Minute, minPollDelay}, // a hair away
		{true, 10 * time.Minute, 3 * time.Minute, awayPoll},                      // away: once a second
	} {
		if got := pollDelay(tc.idle, tc.since, tc.after); got != tc.want {
			t.Errorf("pollDelay(idle %v, since %v, after %v) = %v, want %v", tc.idle, tc.since, tc.after, got, tc.want)
		}
	}
}

// TestIdleRedialerHooks checks the redialer's hooks, which the idle watcher
// does not use, on a display nobody serves and on one that never answers.
func TestIdleRedialerHooks(t *testing.T) {
	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	failed := make(chan bool, 16)
	r := &redialer{
		display: filepath.Join(t.TempDir(), "nothing") + ":0", log: testenv.Logger(), what: "a test", slowDial: time.Hour,
		onDialFailed: func(err error, lost bool) { failed <- lost },
	}
	done := make(chan struct{})
	go func() {
		defer close(done)
		r.run(ctx, func(context.Context, *conn) error { t.Error("a session on a display nobody serves"); return nil })
	}()
	select {
	case lost := <-failed:
		if lost {
			t.Error("onDialFailed(lost=true) before any connection had worked")
		}
	case <-time.After(waitTimeout):
		t.Fatal("onDialFailed was not called for a display nobody serves")
	}
	cancel()
	<-done

	ctx, cancel = context.WithCancel(context.Background())
	defer cancel()
	slow := make(chan struct{}, 1)
	r = &redialer{
		display: wedgedDisplay(t), log: testenv.Logger(), what: "a test", slowDial: 10 * time.Millisecond,
		onSlow: func() { slow <- struct{}{} },
	}
	done = make(chan struct{})
	go func() {
		defer close(done)
		r.run(ctx, func(context.Context, *conn) error { t.Error("a session on a server that never answers"); return nil })
	}()
	select {
	case <-slow:
	case <-time.After(waitTimeout):
		t.Fatal("onSlow was not called for a server that never answers")
	}
	cancel()
	<-done
}
