package dbusapi

import (
	"errors"
	"fmt"
	"reflect"
	"testing"

	"github.com/godbus/dbus/v5"
)

// callErr calls method on the served object over conn and returns the
// D-Bus error it failed with.
func callErr(t *testing.T, conn *dbus.Conn, method string, args ...any) dbus.Error {
	t.Helper()
	err := conn.Object(BusName, ObjectPath).Call(Interface+"."+method, 0, args...).Err
	var e dbus.Error
	if !errors.As(err, &e) {
		t.Fatalf("%s: got %v, want a D-Bus error", method, err)
	}
	return e
}

func dial(t *testing.T, address string) *dbus.Conn {
	t.Helper()
	conn, err := dbus.Connect(address)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { conn.Close() })
	return conn
}

// A connection that asked for error data gets it after the same message;
// every other connection still gets the message alone, which is what GDBus
// and every other binding read.
func TestErrorDataGoesOnlyToConnectionsThatAskedForIt(t *testing.T) {
	bus, _, _ := serve(t)
	plain, asked := dial(t, bus.Address), dial(t, bus.Address)
	if err := asked.Object(BusName, ObjectPath).Call(ErrorDataInterface+".Enable", 0).Err; err != nil {
		t.Fatal(err)
	}
	p, a := callErr(t, plain, "Complete"), callErr(t, asked, "Complete")
	if len(p.Body) != 1 {
		t.Errorf("without Enable: got a body of %d arguments, want the message alone", len(p.Body))
	}
	if len(a.Body) != 2 || a.Body[0] != p.Body[0] || a.Name != p.Name {
		t.Fatalf("with Enable: got %s %v, want %s, the same message and the data", a.Name, a.Body, p.Name)
	}
	data := a.Body[1].(map[string]dbus.Variant)
	want := map[string]any{
		"method": "Complete", "state": "locked", "because": "state", "works_in": []string{"active"},
		"permitted": []string{"Plan", "Start", "StartTask", "Coach", "SetQuiet", "VerifyAudit", "History", "Report", "ReportDevice", "ListTasks"},
	}
	if got := values(data); !reflect.DeepEqual(got, want) {
		t.Errorf("NotPermitted data:\n got %v,\nwant %v", got, want)
	}

	e := callErr(t, asked, "History", uint32(5000))
	want = map[string]any{"method": "History", "argument": "limit", "rule": "at_most", "got": uint64(5000), "limit": int64(1000)}
	if got := values(e.Body[1].(map[string]dbus.Variant)); !reflect.DeepEqual(got, want) {
		t.Errorf("InvalidArgument data:\n got %v,\nwant %v", got, want)
	}
}

func values(data map[string]dbus.Variant) map[string]any {
	out := map[string]any{}
	for k, v := range data {
		out[k] = v.Value()
	}
	return out
}

// The connections that asked are forgotten once they have left the bus,
// and only then: the set stays the size of the live ones.
func TestErrorDataForgetsConnectionsThatLeft(t *testing.T) {
	bus, _, srv := serve(t)
	live := dial(t, bus.Address)
	if err := live.Object(BusName, ObjectPath).Call(ErrorDataInterface+".Enable", 0).Err; err != nil {
		t.Fatal(err)
	}
	for i := 0; i < 3*minPruneAt; i++ {
		srv.wantData.add(fmt.Sprintf(":1.%d", 100000+i)) // never on this bus
	}
	if !srv.wantData.has(live.Names()[0]) {
		t.Errorf("the live connection %s: got it forgotten, want it kept", live.Names()[0])
	}
	srv.wantData.mu.Lock()
	n := len(srv.wantData.names)
	srv.wantData.mu.Unlock()
	if n > minPruneAt {
		t.Errorf("got %d names kept, want at most %d after pruning", n, minPruneAt)
	}
}
