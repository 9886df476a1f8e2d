package testenv

import (
	"errors"
	"fmt"
	"reflect"
	"testing"
	"time"

	"github.com/godbus/dbus/v5"
)

// Session is a test's own client of the daemon's org.antidrift.Session1:
// it decodes properties into Go values and calls methods with Go
// arguments, so a test compares "away" with "away" and a failure shows
// the value, not busctl's or gdbus's text of it. Tests about
// interoperability (that busctl, gdbus or a raw socket see what they
// should) keep those clients, and say so in their names.
type Session struct {
	obj dbus.BusObject
}

const (
	sessionName  = "org.antidrift"
	sessionPath  = "/org/antidrift/Session1"
	sessionIface = "org.antidrift.Session1"
)

// Session is a client of the daemon on b over a connection of its own,
// closed at cleanup. It follows the name, so it outlives a restarted
// daemon.
func (b *Bus) Session(t testing.TB) *Session {
	t.Helper()
	return &Session{obj: b.Dial(t).Object(sessionName, sessionPath)}
}

// Session is the daemon's client, made on first use and kept.
func (d *Daemon) Session(t testing.TB) *Session {
	t.Helper()
	if d.session == nil {
		d.session = d.Bus.Session(t)
	}
	return d.session
}

// Prop reads property name into a T, failing the test when it cannot be
// read or is not a T.
func Prop[T any](t testing.TB, s *Session, name string) T {
	t.Helper()
	v, err := readProp[T](s, name)
	if err != nil {
		t.Fatal(err)
	}
	return v
}

func readProp[T any](s *Session, name string) (T, error) {
	var v T
	got, err := s.obj.GetProperty(sessionIface + "." + name)
	if err != nil {
		return v, fmt.Errorf("reading %s: %w", name, err)
	}
	if err := got.Store(&v); err != nil {
		return v, fmt.Errorf("%s is %s, not a %s: %w", name, got.Signature(), reflect.TypeFor[T](), err)
	}
	return v, nil
}

// String reads a property of type s.
func (s *Session) String(t testing.TB, name string) string {
	t.Helper()
	return Prop[string](t, s, name)
}

// Uint32 reads a property of type u (MinimizeCount, SwitchCount).
func (s *Session) Uint32(t testing.TB, name string) uint32 {
	t.Helper()
	return Prop[uint32](t, s, name)
}

// Bool reads a property of type b.
func (s *Session) Bool(t testing.TB, name string) bool {
	t.Helper()
	return Prop[bool](t, s, name)
}

// Strings reads a property of type as (AllowedClasses, Permitted).
func (s *Session) Strings(t testing.TB, name string) []string {
	t.Helper()
	return Prop[[]string](t, s, name)
}

// WaitForProp waits until property name reads want, and fails naming the
// last value it read:
//
//	timed out after 30s waiting for Drift to be "drifting"; last saw "on_task"
func WaitForProp[T comparable](t testing.TB, timeout time.Duration, s *Session, name string, want T) T {
	t.Helper()
	return WaitForValue(t, timeout, name, want, func() T {
		v, err := readProp[T](s, name)
		if err != nil {
			t.Fatal(err)
		}
		return v
	})
}

// Call calls method with args and stores its reply in out (pointers, one
// per reply argument), failing the test on an error.
func (s *Session) Call(t testing.TB, method string, args []any, out ...any) {
	t.Helper()
	if err := s.Try(method, args, out...); err != nil {
		t.Fatalf("%s%v: %v", method, args, err)
	}
}

// Try calls method as Call does and returns its error: a dbus.Error for a
// refusal, whose Name is the error's D-Bus name and whose first body
// argument is its message.
func (s *Session) Try(method string, args []any, out ...any) error {
	call := s.obj.Call(sessionIface+"."+method, 0, args...)
	if call.Err != nil {
		return call.Err
	}
	return call.Store(out...)
}

// Args is a method's arguments, for Call and Try: Args("write code",
// "tests pass", uint64(600), "", []string{}).
func Args(v ...any) []any { return v }

// Refused is the D-Bus error name and message of a refusal err, or fails
// the test when err is not a D-Bus error.
func Refused(t testing.TB, err error) (name, message string) {
	t.Helper()
	var de dbus.Error
	if !errors.As(err, &de) {
		t.Fatalf("got %v, want a D-Bus error", err)
	}
	if len(de.Body) > 0 {
		message, _ = de.Body[0].(string)
	}
	return de.Name, message
}
