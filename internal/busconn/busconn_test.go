package busconn

import (
	"encoding/binary"
	"path/filepath"
	"reflect"
	"strings"
	"testing"
	"time"

	"github.com/godbus/dbus/v5"

	"github.com/antidrift/antidrift/internal/testsupport/testenv"
)

func TestUnixSocketsOfABusAddress(t *testing.T) {
	for address, want := range map[string][]string{
		"unix:path=/run/user/1000/bus":                 {"/run/user/1000/bus"},
		"unix:path=/tmp/a%20b,guid=0123":               {"/tmp/a b"},
		"unix:abstract=/tmp/dbus-XYZ,guid=0123":        {"@/tmp/dbus-XYZ"},
		"tcp:host=127.0.0.1,port=1;unix:path=/run/bus": {"/run/bus"},
		"unix:path=/gone;unix:path=/run/bus":           {"/gone", "/run/bus"},
		"tcp:host=127.0.0.1,port=1":                    nil,
		"unix:guid=0123":                               nil,
		"":                                             nil,
	} {
		if got := unixSockets(address); !reflect.DeepEqual(got, want) {
			t.Errorf("%q: %q; want %q", address, got, want)
		}
	}
}

// A bus address whose first unix socket is gone still connects, through
// the next one.
func TestConnectTriesEachUnixSocket(t *testing.T) {
	testenv.Need(t, "dbus-daemon")
	bus := testenv.StartBus(t)
	c, err := Connect("unix:path="+filepath.Join(t.TempDir(), "gone")+";"+bus.Address, nil)
	if err != nil {
		t.Fatal(err)
	}
	defer c.Close()
	if err := c.BusObject().Call("org.freedesktop.DBus.GetId", 0).Err; err != nil {
		t.Fatal(err)
	}
}

// With DBUS_SESSION_BUS_ADDRESS unset or autolaunch:, the session bus is
// $XDG_RUNTIME_DIR/bus, as sd-bus and GLib find it.
func TestConnectFindsTheSessionBusInTheRuntimeDir(t *testing.T) {
	testenv.Need(t, "dbus-daemon")
	bus := testenv.StartBus(t)
	socket, _ := strings.CutPrefix(bus.Address, "unix:path=")
	socket, _, _ = strings.Cut(socket, ",")
	if filepath.Base(socket) != "bus" {
		t.Skipf("the test bus listens on %s, not a file named bus", socket)
	}
	t.Setenv("XDG_RUNTIME_DIR", filepath.Dir(socket))
	for _, env := range []string{"", "autolaunch:"} {
		t.Setenv("DBUS_SESSION_BUS_ADDRESS", env)
		c, err := Connect("", nil)
		if err != nil {
			t.Fatalf("Connect with DBUS_SESSION_BUS_ADDRESS=%q: got %v, want a connection", env, err)
		}
		c.Close()
	}
}

type echo struct{}

func (echo) Echo(s string) (string, *dbus.Error) { return s, nil }

// On the stock session bus, in either byte order: a call over MaxMessage
// is answered LimitsExceeded; an overlong signal and an overlong call that
// wants no reply are skipped silently; the calls after each are answered.
func TestOverlongMessagesAreSkipped(t *testing.T) {
	testenv.Need(t, "dbus-daemon")
	bus := testenv.StartStockSessionBus(t)
	server, err := Connect(bus.Address, nil)
	if err != nil {
		t.Fatal(err)
	}
	defer server.Close()
	if err := server.Export(echo{}, "/echo", "org.example.Echo"); err != nil {
		t.Fatal(err)
	}
	if err := server.AddMatchSignal(dbus.WithMatchInterface("org.example.Echo")); err != nil {
		t.Fatal(err)
	}
	signals := make(chan *dbus.Signal, 8)
	server.Signal(signals)
	raw := testenv.DialRaw(t, bus.Address)
	for _, order := range []binary.ByteOrder{binary.LittleEndian, binary.BigEndian} {
		call := func(s string, flags byte) testenv.RawMessage {
			m := testenv.RawMessage{Order: order, Flags: flags, Destination: server.Names()[0], Path: "/echo",
				Interface: "org.example.Echo", Member: "Echo", Signature: "s", Body: (&testenv.RawBody{Order: order}).String(s).Encoded()}
			if flags != 0 {
				raw.Send(t, m)
				return testenv.RawMessage{}
			}
			return raw.Call(t, m)
		}
		huge := strings.Repeat("x", MaxMessage)
		if reply := call(huge, 0); reply.ErrorName != "org.freedesktop.DBus.Error.LimitsExceeded" {
			t.Fatalf("%v: a call of %d bytes: %q; want LimitsExceeded", order, len(huge), reply.Err())
		}
		call(huge, 1) // wants no reply
		raw.Send(t, testenv.RawMessage{Order: order, Type: 4, Path: "/echo", Interface: "org.example.Echo", Member: "Big",
			Signature: "s", Body: (&testenv.RawBody{Order: order}).String(huge).Encoded()})
		raw.Send(t, testenv.RawMessage{Order: order, Type: 4, Path: "/echo", Interface: "org.example.Echo", Member: "Small"})
		if reply := call("hello", 0); reply.ErrorName != "" || len(reply.Strings) != 1 || reply.Strings[0] != "hello" {
			t.Fatalf("%v: the call after the overlong ones: got %+v, want the reply \"hello\"", order, reply)
		}
		select {
		case s := <-signals:
			if s.Name != "org.example.Echo.Small" {
				t.Fatalf("%v: the first signal delivered is %s; want the small one (the big one is skipped)", order, s.Name)
			}
		case <-time.After(10 * time.Second):
			t.Fatalf("%v: the small signal after the big one: got none within 10 s, want it", order)
		}
	}
}

// ConnectSystem reads the system bus's address where sd-bus and libdbus
// do, and frames it like any other: an overlong call is refused there too.
func TestConnectSystemFramesTheSystemBus(t *testing.T) {
	testenv.Need(t, "dbus-daemon")
	bus := testenv.StartStockSessionBus(t)
	t.Setenv("DBUS_SYSTEM_BUS_ADDRESS", bus.Address)
	c, err := ConnectSystem(nil)
	if err != nil {
		t.Fatal(err)
	}
	defer c.Close()
	if err := c.Export(echo{}, "/echo", "org.example.Echo"); err != nil {
		t.Fatal(err)
	}
	client := bus.Dial(t)
	err = client.Object(c.Names()[0], "/echo").Call("org.example.Echo.Echo", 0, strings.Repeat("x", MaxMessage)).Err
	if e, ok := err.(dbus.Error); !ok || e.Name != "org.freedesktop.DBus.Error.LimitsExceeded" {
		t.Fatalf("an overlong call on the system connection: %v; want LimitsExceeded", err)
	}
	var got string
	if err := client.Object(c.Names()[0], "/echo").Call("org.example.Echo.Echo", 0, "hi").Store(&got); err != nil || got != "hi" {
		t.Fatalf("the call after it: got %q, %v; want \"hi\"", got, err)
	}
}
