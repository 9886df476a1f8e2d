package main

import (
	"context"
	"errors"
	"fmt"
	"os"
	"slices"
	"strings"
	"time"

	"github.com/godbus/dbus/v5"

	"github.com/antidrift/antidrift/persist"
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
// unreachable for a person at a prompt. ANTIDRIFT_TIMEOUT (a duration)
// changes it, for scripts that would rather give up sooner.
const callTimeout = 40 * time.Second

// timeout is callTimeout, or ANTIDRIFT_TIMEOUT when that is a positive
// duration.
func timeout() time.Duration {
	if d, err := time.ParseDuration(os.Getenv("ANTIDRIFT_TIMEOUT")); err == nil && d > 0 {
		return d
	}
	return callTimeout
}

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
	// askedData: this connection has asked for error data
	// (askForErrorData), which the first method call does.
	askedData bool
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
	wait := timeout()
	ctx, cancel := context.WithTimeout(c.ctx, wait)
	defer cancel()
	if !c.askedData && !strings.HasPrefix(method, propertiesIface+".") {
		c.askedData = true
		if err := c.askForErrorData(ctx); c.ctx.Err() == nil && isNoAnswer(err) {
			return c.hung(wait)
		}
	}
	call := c.obj.CallWithContext(ctx, method, c.flags, args...)
	if call.Err != nil {
		if c.ctx.Err() == nil && isNoAnswer(call.Err) {
			return c.hung(wait)
		}
		return callError(strings.TrimPrefix(method, iface+"."), call.Err)
	}
	if err := call.Store(reply...); err != nil {
		// The daemon answered with the wrong types: not one this CLI knows.
		return &exitError{code: exitRefused, msg: fmt.Sprintf("antidrift: unexpected reply to %s: %v (is antidriftd the same version as antidrift %s?)", method, err, version)}
	}
	return nil
}

// askForErrorData asks the daemon to send what its errors say as data
// after their message (org.antidrift.ErrorData1), which speak.go words
// them from. Its answer is awaited, because the daemon serves calls
// concurrently. A daemon that does not know it still says its message;
// one that cannot be reached fails the call that follows, which says so.
func (c *client) askForErrorData(ctx context.Context) error {
	return c.obj.CallWithContext(ctx, "org.antidrift.ErrorData1.Enable", c.flags).Err
}

// isNoAnswer reports whether err means the call went out and no answer
// came back in time: this CLI's timeout, or the bus's.
func isNoAnswer(err error) bool {
	var e dbus.Error
	return errors.Is(err, context.DeadlineExceeded) ||
		errors.As(err, &e) && (e.Name == "org.freedesktop.DBus.Error.NoReply" || e.Name == "org.freedesktop.DBus.Error.TimedOut")
}

// hung is the error for a call that got no answer within wait. When
// someone owns org.antidrift, the daemon is there but not answering
// (stopped with SIGSTOP or a debugger, or stuck), and starting it is the
// wrong advice: the bus says who it is, /proc whether it is stopped.
func (c *client) hung(wait time.Duration) error {
	ctx, cancel := context.WithTimeout(context.Background(), 2*time.Second)
	defer cancel()
	waited := exact(uint64(wait.Round(time.Second) / time.Second))
	var pid uint32
	err := c.conn.BusObject().CallWithContext(ctx, "org.freedesktop.DBus.GetConnectionUnixProcessID", 0, busName).Store(&pid)
	if err != nil || pid == 0 {
		return unreachable("antidriftd did not answer within %s", waited)
	}
	advice := fmt.Sprintf("It is running (pid %d) but not answering. See what it is doing:\n"+
		"    systemctl --user status antidrift; journalctl --user -u antidrift -n 50\n"+
		"If it stays stuck, restart it (the session survives a restart):\n"+
		"    systemctl --user restart antidrift   (or: kill %d; the next call starts it again)", pid, pid)
	if processStopped(pid) {
		advice = fmt.Sprintf("It is stopped (pid %d is in state T: SIGSTOP, Ctrl-Z or a debugger). Resume it with:\n"+
			"    kill -CONT %d", pid, pid)
	}
	return &exitError{code: exitUnreachable, msg: fmt.Sprintf("antidrift: antidriftd did not answer within %s.\n%s", waited, advice)}
}

// processStopped reports whether pid is stopped (state T or t in
// /proc/PID/stat). The state follows the command name, which is in
// parentheses and may itself hold any character, so it is found after the
// last ')'.
func processStopped(pid uint32) bool {
	data, err := os.ReadFile(fmt.Sprintf("/proc/%d/stat", pid))
	if err != nil {
		return false
	}
	i := strings.LastIndexByte(string(data), ')')
	if i < 0 || i+2 >= len(data) {
		return false
	}
	return data[i+2] == 'T' || data[i+2] == 't'
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

// callError maps a failed call of method to an exit code and words. The
// daemon's own errors (org.antidrift.Error.*) are refusals, said in this
// CLI's words (speak.go): an argument it refused is a usage error (exit 2),
// anything else exit 1. Bus errors about reaching the daemon, and
// transport failures, are exit 3 with how to start it.
func callError(method string, err error) error {
	// godbus returns dbus.Error by value; accept a pointer too.
	var (
		e  dbus.Error
		pe *dbus.Error
	)
	switch {
	case errors.As(err, &e):
	case errors.As(err, &pe):
		e = *pe
	default:
		return unreachable("%v", err)
	}
	cmd := commandOf(method)
	switch {
	case e.Name == "org.antidrift.Error.NotPermitted" && cmd != nil:
		return refusal(method, e)
	case e.Name == "org.antidrift.Error.InvalidArgument" && cmd != nil:
		return cmd.invalidArgument(method, e)
	case e.Name == "org.antidrift.Error.NoModel":
		return noModel()
	case e.Name == "org.antidrift.Error.CoachFailed":
		return coachFailed(e)
	case strings.HasPrefix(e.Name, "org.antidrift.Error."):
		prefix := "antidrift"
		if cmd != nil {
			prefix += " " + cmd.name
		}
		return &exitError{code: exitRefused, msg: prefix + ": " + e.Error()}
	case isUnreachable(e.Name):
		return unreachable("%s (%s)", e.Error(), e.Name)
	default:
		// E.g. UnknownMethod from a daemon older than this CLI.
		return &exitError{code: exitRefused, msg: fmt.Sprintf("antidrift: %s: %s", e.Name, e.Error())}
	}
}

// commandOf is the command that calls method, or nil.
func commandOf(method string) *command {
	for _, c := range commands {
		if c.method == method || slices.Contains(c.also, method) {
			return c
		}
	}
	return nil
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
	msg := "antidrift: cannot reach antidriftd: " + fmt.Sprintf(format, a...) + "\n"
	if why := laterStateDir(); why != "" {
		return &exitError{code: exitUnreachable, msg: msg + why}
	}
	return &exitError{code: exitUnreachable, msg: msg + howToStart}
}

// laterStateDir says why antidriftd will not start when a later version of
// antidrift wrote its state directory (the default one), "" otherwise:
// starting it again would not help, so that is said instead of how to.
func laterStateDir() string {
	dir, err := persist.DefaultDir()
	if err != nil {
		return ""
	}
	if err := persist.NewReader(dir).LaterVersion(); err != nil {
		return "antidriftd will not start on " + dir + ": " + err.Error()
	}
	return ""
}

// isExit reports whether err ends the program with code.
func isExit(err error, code int) bool {
	var e *exitError
	return errors.As(err, &e) && e.code == code
}
