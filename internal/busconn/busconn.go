// Package busconn opens the daemon's bus connections, session and system
// alike, so that no message, whatever its size or shape, can
// desynchronize them.
//
// Why it exists: godbus reads a message from the socket as it decodes it.
// When it gives up partway — a message longer than its 2^27-byte limit
// (which a bus relays: a call of exactly 2^27 bytes plus the sender field
// the bus adds), or a header it will not decode — it goes on reading at
// the byte where it stopped, and parses the rest of that message's body as
// messages the bus never checked, with whatever sender they claim. A body
// it cannot decode closes the connection instead. Either way one message
// from any client could forge calls or take the daemon off the bus.
//
// What it does: it sits between the socket and godbus and frames the
// stream itself, from each message's fixed header alone. A message longer
// than MaxMessage is counted past by its declared length without its body
// being read into memory or decoded; a call among them is answered
// org.freedesktop.DBus.Error.LimitsExceeded. A message that fits is handed
// to godbus only after godbus has decoded it once from a buffer, so godbus
// never fails inside the stream; one it cannot decode is skipped the same
// way (a call gets InvalidArgs). The bus has checked every message's
// framing before relaying it, so skipping by the declared length lands on
// the next message; the one thing that cannot be skipped — a fixed header
// that does not start a message — drops the connection (ErrLostFraming).
//
// Why skipping and not reconnecting: a connection dropped on every such
// message would hand any client of the bus a way to restart the daemon at
// will, and lose the calls in flight of every other client. Skipping costs
// nothing: the bus framed the stream, so its lengths can be trusted.
//
// Unix fd passing is not negotiated: nothing the daemon serves or calls
// carries a file descriptor, and a bus does not deliver fds to a
// connection that did not ask for them (it refuses the sender's call with
// an error instead), so no descriptor is ever received and lost.
//
// Everything else — authentication, what is written, and every message
// that passes — is godbus's.
package busconn

import (
	"bytes"
	"errors"
	"fmt"
	"log/slog"
	"net"
	"net/url"
	"os"
	"path/filepath"
	"strings"
	"sync"
	"sync/atomic"
	"time"

	"github.com/godbus/dbus/v5"
)

// Connect opens a private connection to the bus at address, "" meaning the
// session bus the environment names: DBUS_SESSION_BUS_ADDRESS (autolaunch:
// counts as unset), else $XDG_RUNTIME_DIR/bus. Each unix: entry of the
// address is tried in turn. log hears of skipped messages; nil is silent.
func Connect(address string, log *slog.Logger) (*dbus.Conn, error) {
	if address == "" || address == "autolaunch:" {
		address = sessionBusAddress()
		if address == "" {
			return nil, errors.New("no session bus: DBUS_SESSION_BUS_ADDRESS is unset and $XDG_RUNTIME_DIR/bus is not a socket")
		}
	}
	return dial(address, log)
}

// ConnectSystem opens a private connection to the system bus:
// DBUS_SYSTEM_BUS_ADDRESS, else the standard socket.
func ConnectSystem(log *slog.Logger) (*dbus.Conn, error) {
	address := os.Getenv("DBUS_SYSTEM_BUS_ADDRESS")
	if address == "" {
		address = "unix:path=/run/dbus/system_bus_socket"
	}
	return dial(address, log)
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

// dial connects through the first unix socket of address that answers.
func dial(address string, log *slog.Logger) (*dbus.Conn, error) {
	sockets := unixSockets(address)
	if len(sockets) == 0 {
		return nil, fmt.Errorf("bus address %q names no unix socket; antidrift connects to buses over unix sockets only", address)
	}
	var errs []error
	for _, socket := range sockets {
		c, err := dialSocket(socket, log)
		if err == nil {
			return c, nil
		}
		errs = append(errs, fmt.Errorf("%s: %w", socket, err))
	}
	return nil, errors.Join(errs...)
}

func dialSocket(socket string, log *slog.Logger) (*dbus.Conn, error) {
	sock, err := net.Dial("unix", socket)
	if err != nil {
		return nil, err
	}
	refusals := make(chan Skipped, 16)
	s := &stream{Conn: sock}
	s.framer = newFramer(sock, MaxMessage, func(m Skipped) {
		logSkipped(log, m)
		if m.WantsReply() {
			select {
			case refusals <- m:
			default: // a flood of them: the rest wait for their timeout
			}
		}
	})
	c, err := dbus.NewConn(s)
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
	go refuse(c, refusals)
	return c, nil
}

// stream is the socket as godbus sees it: reads through the framer, writes
// as they are. godbus reads from one goroutine at a time.
type stream struct {
	net.Conn
	framer *framer
	began  atomic.Bool // godbus wrote BEGIN: from here on the stream is messages
}

func (s *stream) Read(p []byte) (int, error) {
	if !s.framer.began && s.began.Load() {
		s.framer.begin()
	}
	return s.framer.Read(p)
}

var begin = []byte("BEGIN\r\n")

// Write notes the end of the authentication: godbus writes BEGIN as one
// line, and the bus sends nothing after it until godbus's Hello.
func (s *stream) Write(p []byte) (int, error) {
	if !s.began.Load() && bytes.HasPrefix(p, begin) {
		s.began.Store(true)
	}
	return s.Conn.Write(p)
}

// refuse answers the skipped calls that wait for an answer, through godbus
// (which numbers and writes every message), until the connection ends.
func refuse(c *dbus.Conn, refusals <-chan Skipped) {
	for {
		select {
		case <-c.Context().Done():
			return
		case m := <-refusals:
			name, text := "org.freedesktop.DBus.Error.LimitsExceeded", fmt.Sprintf(
				"a message of %d bytes is more than antidrift reads (%d bytes); it was not read", m.Size, MaxMessage)
			if m.Unreadable != nil {
				name, text = "org.freedesktop.DBus.Error.InvalidArgs", fmt.Sprintf("antidrift cannot decode this message (%v); it was not read", m.Unreadable)
			}
			c.Send(&dbus.Message{Type: dbus.TypeError, Headers: map[dbus.HeaderField]dbus.Variant{
				dbus.FieldErrorName:   dbus.MakeVariant(name),
				dbus.FieldReplySerial: dbus.MakeVariant(m.Serial),
				dbus.FieldDestination: dbus.MakeVariant(m.Sender),
				dbus.FieldSignature:   dbus.MakeVariant(dbus.SignatureOf(text)),
			}, Body: []any{text}}, nil)
		}
	}
}

// logSkipped logs a skipped message, at most one line every few seconds
// (a client can send them as fast as the bus relays).
var logThrottle struct {
	sync.Mutex
	last    time.Time
	dropped int
}

func logSkipped(log *slog.Logger, m Skipped) {
	if log == nil {
		return
	}
	logThrottle.Lock()
	if time.Since(logThrottle.last) < 5*time.Second {
		logThrottle.dropped++
		logThrottle.Unlock()
		return
	}
	dropped := logThrottle.dropped
	logThrottle.last, logThrottle.dropped = time.Now(), 0
	logThrottle.Unlock()
	why := "too long"
	if m.Unreadable != nil {
		why = m.Unreadable.Error()
	}
	log.Warn("skipped a bus message without reading it", "why", why, "bytes", m.Size, "type", m.Type,
		"sender", m.Sender, "member", m.Interface+"."+m.Member, "skipped_unlogged_before", dropped)
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
