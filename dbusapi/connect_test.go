package dbusapi

import (
	"path/filepath"
	"reflect"
	"strings"
	"testing"

	"github.com/antidrift/antidrift/internal/testenv"
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
// the next one, with the fast path.
func TestConnectTriesEachUnixSocket(t *testing.T) {
	testenv.Need(t, "dbus-daemon")
	bus := testenv.StartBus(t)
	socket, _ := strings.CutPrefix(bus.Address, "unix:path=")
	c, err := Connect("unix:path=" + filepath.Join(t.TempDir(), "gone") + ";" + bus.Address)
	if err != nil {
		t.Fatal(err)
	}
	defer c.Close()
	if c.tap == nil {
		t.Fatalf("connected to %s without the tap", socket)
	}
	if err := c.BusObject().Call("org.freedesktop.DBus.GetId", 0).Err; err != nil {
		t.Fatal(err)
	}
}
