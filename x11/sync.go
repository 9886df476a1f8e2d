package x11

// The few requests and the one event of the X SYNC extension that idle
// detection needs. xgb ships no SYNC package, so these follow the shape of
// xgb's generated extensions (cookie types, request writers, reply readers),
// with the wire layout of X11/extensions/syncproto.h (also xcb-proto's
// sync.xml):
//
//   - every request starts with the extension's major opcode, the SYNC
//     minor opcode, and the length in 4-byte units;
//   - an INT64 is two 32-bit words, the signed high word first, then the low
//     word;
//   - CreateAlarm/ChangeAlarm carry a value mask (Counter=1, ValueType=2,
//     Value=4, TestType=8, Delta=16, Events=32) followed by the values in bit
//     order, Value and Delta taking two words each;
//   - AlarmNotify is event first_event+1: type, kind, sequence, alarm,
//     counter value (INT64), alarm value (INT64), timestamp, state, 3 pad.
//
// One deliberate difference from xgb's generated Init functions: syncInit
// does not copy event and error constructors into xgb.NewEventFuncs and
// xgb.NewErrorFuncs. Those are package-level maps that every connection's
// reader goroutine reads without a lock, so writing to them while the focus
// sensor's connection is receiving events is a data race (and can crash the
// process with "concurrent map read and map write"). Instead, this file's
// init registers, once and before any connection exists, a raw constructor
// for every event and error number xgb has none for; each connection then
// recognizes its own SYNC events by the first_event its server announced.

import (
	"errors"
	"fmt"

	"github.com/jezek/xgb"
	"github.com/jezek/xgb/xproto"
)

const syncExtName = "SYNC"

// SYNC minor opcodes (syncproto.h X_Sync*).
const (
	syncOpInitialize         = 0
	syncOpListSystemCounters = 1
	syncOpQueryCounter       = 5
	syncOpCreateAlarm        = 8
	syncOpChangeAlarm        = 9
	syncOpDestroyAlarm       = 11
)

// SYNC event numbers, relative to the extension's first event.
const syncAlarmNotify = 1

// CreateAlarm/ChangeAlarm value-mask bits (XSyncCA*).
const (
	syncCACounter   = 1 << 0
	syncCAValueType = 1 << 1
	syncCAValue     = 1 << 2
	syncCATestType  = 1 << 3
	syncCADelta     = 1 << 4
	syncCAEvents    = 1 << 5
)

// Trigger value types (XSyncValueType).
const (
	syncAbsolute = 0
	syncRelative = 1
)

// Trigger test types (XSyncTestType).
const (
	syncPositiveTransition = 0
	syncNegativeTransition = 1
	syncPositiveComparison = 2
	syncNegativeComparison = 3
)

// Alarm states (XSyncAlarmState), as reported in AlarmNotify.
const (
	syncAlarmActive    = 0
	syncAlarmInactive  = 1
	syncAlarmDestroyed = 2
)

type (
	syncCounter uint32
	syncAlarm   uint32
)

func init() {
	// See the comment at the top of the file. xproto has registered the core
	// events (2-35) and errors (1-17) by now; fill in every other number.
	for n := 2; n < 128; n++ {
		if _, ok := xgb.NewEventFuncs[n]; !ok {
			xgb.NewEventFuncs[n] = newRawEvent
		}
	}
	for n := 1; n < 256; n++ {
		if _, ok := xgb.NewErrorFuncs[n]; !ok {
			xgb.NewErrorFuncs[n] = newRawError
		}
	}
}

// rawEvent is an event of an extension xgb has no constructor for, as the
// 32 bytes it came in.
type rawEvent [32]byte

func newRawEvent(buf []byte) xgb.Event {
	var e rawEvent
	copy(e[:], buf)
	return e
}

// Code is the event's number, without the SendEvent bit.
func (e rawEvent) Code() byte { return e[0] & 127 }

func (e rawEvent) Bytes() []byte { return e[:] }

func (e rawEvent) SequenceId() uint16 { return xgb.Get16(e[2:]) }

func (e rawEvent) String() string { return fmt.Sprintf("extension event %d", e.Code()) }

// rawError is an error of an extension xgb has no constructor for.
type rawError struct {
	Code     byte
	Sequence uint16
	Bad      uint32
	Minor    uint16
	Major    byte
}

func newRawError(buf []byte) xgb.Error {
	return rawError{
		Code:     buf[1],
		Sequence: xgb.Get16(buf[2:]),
		Bad:      xgb.Get32(buf[4:]),
		Minor:    xgb.Get16(buf[8:]),
		Major:    buf[10],
	}
}

func (e rawError) SequenceId() uint16 { return e.Sequence }

func (e rawError) BadId() uint32 { return e.Bad }

func (e rawError) Error() string {
	return fmt.Sprintf("X error %d (request %d.%d, resource %#x)", e.Code, e.Major, e.Minor, e.Bad)
}

// syncExt is what one connection knows about its server's SYNC extension.
type syncExt struct {
	firstEvent byte
	major      byte // extension version the server speaks
	minor      byte
}

var errNoSyncExt = errors.New("the X server has no SYNC extension")

// syncInit makes SYNC usable on c: it looks the extension up, records its
// opcode in c.Extensions (where the request writers find it, as with xgb's
// generated extensions) and sends Initialize, which the protocol requires
// before any other SYNC request.
func syncInit(c *xgb.Conn) (*syncExt, error) {
	q, err := xproto.QueryExtension(c, uint16(len(syncExtName)), syncExtName).Reply()
	if err == nil && q == nil {
		err = errConnClosed
	}
	if err != nil {
		return nil, err
	}
	if !q.Present {
		return nil, errNoSyncExt
	}
	c.ExtLock.Lock()
	c.Extensions[syncExtName] = q.MajorOpcode
	c.ExtLock.Unlock()

	v, err := syncInitialize(c, 3, 1).Reply()
	if err == nil && v == nil {
		err = errConnClosed
	}
	if err != nil {
		return nil, fmt.Errorf("SYNC Initialize: %w", err)
	}
	return &syncExt{firstEvent: q.FirstEvent, major: v.MajorVersion, minor: v.MinorVersion}, nil
}

// alarmNotify returns ev as an AlarmNotify event of this connection's SYNC
// extension, if it is one.
func (s *syncExt) alarmNotify(ev xgb.Event) (syncAlarmNotifyEvent, bool) {
	e, ok := ev.(rawEvent)
	if !ok || e.Code() != s.firstEvent+syncAlarmNotify || e[1] != syncAlarmNotify {
		return syncAlarmNotifyEvent{}, false
	}
	return syncAlarmNotifyEventNew(e[:]), true
}

// syncOpcode returns SYNC's major opcode on c. Like xgb's generated
// extensions it panics when the extension was not initialized: that is a
// programming error.
func syncOpcode(c *xgb.Conn) byte {
	c.ExtLock.RLock()
	defer c.ExtLock.RUnlock()
	op, ok := c.Extensions[syncExtName]
	if !ok {
		panic("x11: SYNC request before syncInit")
	}
	return op
}

// syncRequest returns a request buffer of size bytes with the header filled
// in, and the offset of the first field.
func syncRequest(c *xgb.Conn, minor byte, size int) ([]byte, int) {
	buf := make([]byte, size)
	buf[0] = syncOpcode(c)
	buf[1] = minor
	xgb.Put16(buf[2:], uint16(size/4))
	return buf, 4
}

func putInt64(buf []byte, v int64) {
	xgb.Put32(buf, uint32(v>>32)) // hi, signed
	xgb.Put32(buf[4:], uint32(v)) // lo
}

func getInt64(buf []byte) int64 {
	return int64(int32(xgb.Get32(buf)))<<32 | int64(xgb.Get32(buf[4:]))
}

// --- Initialize ---

type syncInitializeCookie struct{ *xgb.Cookie }

type syncInitializeReply struct {
	MajorVersion byte
	MinorVersion byte
}

func syncInitialize(c *xgb.Conn, major, minor byte) syncInitializeCookie {
	buf, b := syncRequest(c, syncOpInitialize, 8)
	buf[b] = major
	buf[b+1] = minor
	cookie := c.NewCookie(true, true)
	c.NewRequest(buf, cookie)
	return syncInitializeCookie{cookie}
}

func (ck syncInitializeCookie) Reply() (*syncInitializeReply, error) {
	buf, err := ck.Cookie.Reply()
	if err != nil || buf == nil {
		return nil, err
	}
	if len(buf) < 32 {
		return nil, errShortReply
	}
	return &syncInitializeReply{MajorVersion: buf[8], MinorVersion: buf[9]}, nil
}

var errShortReply = errors.New("x11: short reply from the X server")

// --- ListSystemCounters ---

type syncListSystemCountersCookie struct{ *xgb.Cookie }

type syncSystemCounter struct {
	Counter    syncCounter
	Resolution int64
	Name       string
}

func syncListSystemCounters(c *xgb.Conn) syncListSystemCountersCookie {
	buf, _ := syncRequest(c, syncOpListSystemCounters, 4)
	cookie := c.NewCookie(true, true)
	c.NewRequest(buf, cookie)
	return syncListSystemCountersCookie{cookie}
}

func (ck syncListSystemCountersCookie) Reply() ([]syncSystemCounter, error) {
	buf, err := ck.Cookie.Reply()
	if err != nil || buf == nil {
		return nil, err
	}
	return parseSystemCounters(buf)
}

// parseSystemCounters reads a ListSystemCounters reply: the count at byte 8,
// the list from byte 32; each entry is counter (4), resolution (INT64),
// name length (2) and the name, padded so the entry is a multiple of 4.
func parseSystemCounters(buf []byte) ([]syncSystemCounter, error) {
	if len(buf) < 32 {
		return nil, errShortReply
	}
	n := int(xgb.Get32(buf[8:]))
	counters := make([]syncSystemCounter, 0, min(n, 64))
	b := 32
	for range n {
		if b+14 > len(buf) {
			return nil, errShortReply
		}
		nameLen := int(xgb.Get16(buf[b+12:]))
		if b+14+nameLen > len(buf) {
			return nil, errShortReply
		}
		counters = append(counters, syncSystemCounter{
			Counter:    syncCounter(xgb.Get32(buf[b:])),
			Resolution: getInt64(buf[b+4:]),
			Name:       string(buf[b+14 : b+14+nameLen]),
		})
		b += xgb.Pad(14 + nameLen)
	}
	return counters, nil
}

// --- QueryCounter ---

type syncQueryCounterCookie struct{ *xgb.Cookie }

func syncQueryCounter(c *xgb.Conn, counter syncCounter) syncQueryCounterCookie {
	buf, b := syncRequest(c, syncOpQueryCounter, 8)
	xgb.Put32(buf[b:], uint32(counter))
	cookie := c.NewCookie(true, true)
	c.NewRequest(buf, cookie)
	return syncQueryCounterCookie{cookie}
}

// Reply returns the counter's value.
func (ck syncQueryCounterCookie) Reply() (int64, error) {
	buf, err := ck.Cookie.Reply()
	if err == nil && buf == nil {
		err = errConnClosed
	}
	if err != nil {
		return 0, err
	}
	if len(buf) < 16 {
		return 0, errShortReply
	}
	return getInt64(buf[8:]), nil
}

// --- CreateAlarm, ChangeAlarm, DestroyAlarm ---

// syncAlarmAttrs are the settable attributes of an alarm; Mask says which
// are sent.
type syncAlarmAttrs struct {
	Mask      uint32
	Counter   syncCounter
	ValueType uint32
	Value     int64
	TestType  uint32
	Delta     int64
	Events    bool
}

// words encodes the attributes in value-mask bit order.
func (a syncAlarmAttrs) words() []byte {
	var buf []byte
	put32 := func(v uint32) {
		var w [4]byte
		xgb.Put32(w[:], v) // xgb speaks little-endian
		buf = append(buf, w[:]...)
	}
	if a.Mask&syncCACounter != 0 {
		put32(uint32(a.Counter))
	}
	if a.Mask&syncCAValueType != 0 {
		put32(a.ValueType)
	}
	if a.Mask&syncCAValue != 0 {
		put32(uint32(a.Value >> 32))
		put32(uint32(a.Value))
	}
	if a.Mask&syncCATestType != 0 {
		put32(a.TestType)
	}
	if a.Mask&syncCADelta != 0 {
		put32(uint32(a.Delta >> 32))
		put32(uint32(a.Delta))
	}
	if a.Mask&syncCAEvents != 0 {
		var v uint32
		if a.Events {
			v = 1
		}
		put32(v)
	}
	return buf
}

type syncVoidCookie struct{ *xgb.Cookie }

// Check waits until the server has processed the request and returns its
// error, if any.
func (ck syncVoidCookie) Check() error { return ck.Cookie.Check() }

func syncAlarmRequest(c *xgb.Conn, minor byte, id syncAlarm, a syncAlarmAttrs) []byte {
	values := a.words()
	buf, b := syncRequest(c, minor, 12+len(values))
	xgb.Put32(buf[b:], uint32(id))
	xgb.Put32(buf[b+4:], a.Mask&(syncCACounter|syncCAValueType|syncCAValue|syncCATestType|syncCADelta|syncCAEvents))
	copy(buf[b+8:], values)
	return buf
}

// syncCreateAlarmChecked creates alarm id (from c.NewId) with attributes a.
func syncCreateAlarmChecked(c *xgb.Conn, id syncAlarm, a syncAlarmAttrs) syncVoidCookie {
	cookie := c.NewCookie(true, false)
	c.NewRequest(syncAlarmRequest(c, syncOpCreateAlarm, id, a), cookie)
	return syncVoidCookie{cookie}
}

// syncChangeAlarmChecked changes the attributes of alarm id in a.Mask. The
// server makes the alarm Active again and fires it at once if its trigger
// already holds.
func syncChangeAlarmChecked(c *xgb.Conn, id syncAlarm, a syncAlarmAttrs) syncVoidCookie {
	cookie := c.NewCookie(true, false)
	c.NewRequest(syncAlarmRequest(c, syncOpChangeAlarm, id, a), cookie)
	return syncVoidCookie{cookie}
}

// syncDestroyAlarm destroys alarm id (unchecked). Closing the connection
// destroys a client's alarms too.
func syncDestroyAlarm(c *xgb.Conn, id syncAlarm) {
	buf, b := syncRequest(c, syncOpDestroyAlarm, 8)
	xgb.Put32(buf[b:], uint32(id))
	c.NewRequest(buf, c.NewCookie(false, false))
}

// --- AlarmNotify ---

type syncAlarmNotifyEvent struct {
	Kind         byte
	Sequence     uint16
	Alarm        syncAlarm
	CounterValue int64
	AlarmValue   int64
	Timestamp    xproto.Timestamp
	State        byte
}

func syncAlarmNotifyEventNew(buf []byte) syncAlarmNotifyEvent {
	return syncAlarmNotifyEvent{
		Kind:         buf[1],
		Sequence:     xgb.Get16(buf[2:]),
		Alarm:        syncAlarm(xgb.Get32(buf[4:])),
		CounterValue: getInt64(buf[8:]),
		AlarmValue:   getInt64(buf[16:]),
		Timestamp:    xproto.Timestamp(xgb.Get32(buf[24:])),
		State:        buf[28],
	}
}
