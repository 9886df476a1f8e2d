package main

import (
	"context"
	"errors"
	"fmt"
	"os"
	"strings"
	"time"

	"github.com/godbus/dbus/v5"
)

// The daemon's names on the session bus (README, "D-Bus API").
const (
	busName    = "org.antidrift"
	objectPath = dbus.ObjectPath("/org/antidrift/Session1")
	iface      = "org.antidrift.Session1"

	propertiesIface = "org.freedesktop.DBus.Properties"
)

// callTimeout bounds one call, bus activation included (dbus-daemon gives a
// starting service 25 s). A daemon that takes longer is as good as
// unreachable for a person at a prompt.
const callTimeout = 40 * time.Second

// howToStart ends every "cannot reach the daemon" message.
const howToStart = `Start it with: systemctl --user start antidrift
(not installed as a user service? run 'make install-user' in the antidrift
source tree, or run antidriftd in a terminal)`

// client is a connection to the session bus and the daemon's object on it.
type client struct {
	conn *dbus.Conn
	obj  dbus.BusObject
	// flags for every call. 0 lets the bus start the daemon through
	// activation; status --follow sets dbus.FlagNoAutoStart after its first
	// read, so that watching never restarts a daemon someone stopped.
	flags dbus.Flags
	ctx   context.Context // bounds every call; context.Background() unless set
}

// connect connects to the session bus (DBUS_SESSION_BUS_ADDRESS, else the
// usual fallbacks). Nothing is sent to the daemon yet.
func connect() (*client, error) {
	conn, err := dbus.ConnectSessionBus()
	if err != nil {
		where := "(DBUS_SESSION_BUS_ADDRESS is not set)"
		if addr := os.Getenv("DBUS_SESSION_BUS_ADDRESS"); addr != "" {
			where = "at " + addr
		}
		return nil, unreachable("cannot connect to the D-Bus session bus %s: %v.\nantidrift has to run inside your desktop session, where antidriftd lives.", where, err)
	}
	return &client{conn: conn, obj: conn.Object(busName, objectPath), ctx: context.Background()}, nil
}

func (c *client) close() { c.conn.Close() }

// call calls method (a member of org.antidrift.Session1, or a full
// "interface.member") with args, stores the reply in reply, and turns a
// failure into an *exitError with the right exit code. It is the only place
// the CLI talks to the daemon.
func (c *client) call(method string, args []any, reply ...any) error {
	if !strings.Contains(method, ".") {
		method = iface + "." + method
	}
	ctx, cancel := context.WithTimeout(c.ctx, callTimeout)
	defer cancel()
	call := c.obj.CallWithContext(ctx, method, c.flags, args...)
	if call.Err != nil {
		return callError(call.Err)
	}
	if err := call.Store(reply...); err != nil {
		// The daemon answered with the wrong types: not one this CLI knows.
		return &exitError{code: exitRefused, msg: fmt.Sprintf("antidrift: unexpected reply to %s: %v (is antidriftd the same version as antidrift %s?)", method, err, version)}
	}
	return nil
}

// properties reads every property of the daemon's object. As a method call
// (GetAll) it starts the daemon through bus activation like any other call.
func (c *client) properties() (*status, error) {
	var m map[string]dbus.Variant
	if err := c.call(propertiesIface+".GetAll", []any{iface}, &m); err != nil {
		return nil, err
	}
	return decodeStatus(m), nil
}

// busErrorsUnreachable are the bus's own errors meaning "nobody is there to
// answer": no activation file, activation failed (Spawn.*), the owner went
// away, or it did not reply.
var busErrorsUnreachable = []string{
	"org.freedesktop.DBus.Error.ServiceUnknown",
	"org.freedesktop.DBus.Error.NameHasNoOwner",
	"org.freedesktop.DBus.Error.NoReply",
	"org.freedesktop.DBus.Error.TimedOut",
	"org.freedesktop.DBus.Error.Timeout",
	"org.freedesktop.DBus.Error.Disconnected",
	"org.freedesktop.DBus.Error.NoServer",
	"org.freedesktop.DBus.Error.Spawn.",
}

// callError maps a failed call to an exit code. The daemon's own errors
// (org.antidrift.Error.*) are refusals: exit 1 with the message exactly as
// the daemon wrote it, because it already says what refused, why, and what
// works now. Bus errors about reaching the daemon, and transport failures,
// are exit 3 with how to start it.
func callError(err error) error {
	// godbus returns dbus.Error by value; accept a pointer too.
	var (
		e  dbus.Error
		pe *dbus.Error
	)
	switch {
	case errors.As(err, &e):
	case errors.As(err, &pe):
		e = *pe
	case errors.Is(err, context.DeadlineExceeded):
		return unreachable("antidriftd did not answer within %v", callTimeout)
	default:
		return unreachable("%v", err)
	}
	switch {
	case strings.HasPrefix(e.Name, "org.antidrift.Error."):
		return &exitError{code: exitRefused, msg: e.Error()}
	case isUnreachable(e.Name):
		return unreachable("%s (%s)", e.Error(), e.Name)
	default:
		// E.g. UnknownMethod from a daemon older than this CLI.
		return &exitError{code: exitRefused, msg: fmt.Sprintf("antidrift: %s: %s", e.Name, e.Error())}
	}
}

func isUnreachable(name string) bool {
	for _, n := range busErrorsUnreachable {
		if name == n || strings.HasSuffix(n, ".") && strings.HasPrefix(name, n) {
			return true
		}
	}
	return false
}

func unreachable(format string, a ...any) error {
	return &exitError{code: exitUnreachable, msg: "antidrift: cannot reach antidriftd: " + fmt.Sprintf(format, a...) + "\n" + howToStart}
}

// isExit reports whether err ends the program with code.
func isExit(err error, code int) bool {
	var e *exitError
	return errors.As(err, &e) && e.code == code
}
