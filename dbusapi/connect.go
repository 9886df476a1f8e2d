package dbusapi

import (
	"net"
	"net/url"
	"os"
	"path/filepath"
	"strings"

	"github.com/godbus/dbus/v5"
)

// Conn is a private bus connection for Serve. On a unix socket it runs
// through a tap, so that Serve can answer GetAll where the call is read;
// elsewhere (a tcp: address) it is godbus's own and every call goes
// through godbus.
type Conn struct {
	*dbus.Conn
	tap *tap // nil without the fast path
}

// Connect opens a private connection to the bus at address, "" meaning the
// session bus the environment names (DBUS_SESSION_BUS_ADDRESS, else
// $XDG_RUNTIME_DIR/bus, as godbus looks; failing both, godbus's own
// discovery, without the fast path).
func Connect(address string) (*Conn, error) {
	if address == "" || address == "autolaunch:" {
		address = sessionBusAddress()
	}
	for _, socket := range unixSockets(address) {
		if c, err := dialTapped(socket); err == nil {
			return c, nil
		}
	}
	// No unix socket answered, or none is named: godbus's own connection,
	// which tries every entry and says why none works.
	connect := func() (*dbus.Conn, error) { return dbus.Connect(address) }
	if address == "" {
		connect = func() (*dbus.Conn, error) { return dbus.ConnectSessionBus() }
	}
	c, err := connect()
	if err != nil {
		return nil, err
	}
	return &Conn{Conn: c}, nil
}

// sessionBusAddress is where the session bus is, "" when nothing says.
func sessionBusAddress() string {
	if a := os.Getenv("DBUS_SESSION_BUS_ADDRESS"); a != "" && a != "autolaunch:" {
		return a
	}
	if dir := os.Getenv("XDG_RUNTIME_DIR"); dir != "" {
		if fi, err := os.Stat(filepath.Join(dir, "bus")); err == nil && fi.Mode().Type() == os.ModeSocket {
			return "unix:path=" + filepath.Join(dir, "bus")
		}
	}
	return ""
}

// dialTapped connects to the bus's unix socket through a tap.
func dialTapped(socket string) (*Conn, error) {
	dialed, err := net.Dial("unix", socket)
	if err != nil {
		return nil, err
	}
	sock, err := newQuietSocket(dialed.(*net.UnixConn))
	if err != nil {
		dialed.Close()
		return nil, err
	}
	t := &tap{sock: sock}
	c, err := dbus.NewConn(t, dbus.WithSerialGenerator(&t.serials))
	if err != nil {
		sock.Close()
		return nil, err
	}
	if err = c.Auth(nil); err == nil {
		err = c.Hello()
	}
	if err != nil {
		c.Close()
		return nil, err
	}
	return &Conn{Conn: c, tap: t}, nil
}

// unixSockets are the sockets of the unix: entries of a bus address, in
// order ("unix:path=/run/user/1000/bus,guid=…"; abstract ones as "@name").
func unixSockets(address string) []string {
	var out []string
	for _, entry := range strings.Split(address, ";") {
		params, ok := strings.CutPrefix(entry, "unix:")
		if !ok {
			continue
		}
		for _, kv := range strings.Split(params, ",") {
			key, value, _ := strings.Cut(kv, "=")
			value, err := url.PathUnescape(value)
			if err != nil || value == "" {
				continue
			}
			switch key {
			case "path":
				out = append(out, value)
			case "abstract":
				out = append(out, "@"+value)
			}
		}
	}
	return out
}
