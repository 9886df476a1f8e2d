package dbusapi

import (
	"reflect"
	"strings"
	"testing"
	"time"

	"github.com/godbus/dbus/v5"

	"github.com/antidrift/antidrift/service"
)

// panel is a second connection to the private bus, as a panel would hold,
// and the daemon's object on it.
func panel(t *testing.T, address string) (*dbus.Conn, dbus.BusObject) {
	t.Helper()
	conn, err := dbus.Connect(address)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { conn.Close() })
	return conn, conn.Object(BusName, ObjectPath)
}

func getAll(t *testing.T, obj dbus.BusObject) map[string]dbus.Variant {
	t.Helper()
	var props map[string]dbus.Variant
	if err := obj.Call(propertiesInterface+".GetAll", 0, Interface).Store(&props); err != nil {
		t.Fatal(err)
	}
	return props
}

func (c *propertyCache) built() uint64 {
	c.mu.Lock()
	defer c.mu.Unlock()
	return c.builds
}

// GetAll answers from a map built once per change, and reads what the core
// holds: fresh after a method's reply, after a PropertiesChanged, and while
// the current window's seconds grow.
func TestGetAllReadsTheCoreThroughItsCache(t *testing.T) {
	bus, svc, srv := serve(t)
	conn, obj := panel(t, bus.Address)

	first := getAll(t, obj)
	builds := srv.props.built()
	second := getAll(t, obj)
	if srv.props.built() != builds {
		t.Fatalf("builds after a second GetAll with nothing changed: got %d, want %d (none again)", srv.props.built(), builds)
	}
	if !reflect.DeepEqual(first, second) || len(second) != len(propertyList) {
		t.Fatalf("the cached map: got\n%v\nwant the first, with every property\n%v", second, first)
	}

	svc.RecordWindow(service.Window{ID: "1", Class: "Editor", Title: "main.go", Available: true})
	if err := obj.Call(Interface+".Start", 0, "write the parser", "tests pass", uint64(3600), "warn", []string{"Editor"}).Err; err != nil {
		t.Fatal(err)
	}
	if got := getAll(t, obj)["State"].Value(); got != "active" {
		t.Fatalf("GetAll right after Start's reply: got State %v, want active", got)
	}

	signals := make(chan *dbus.Signal, 8)
	if err := conn.AddMatchSignal(dbus.WithMatchInterface(propertiesInterface), dbus.WithMatchMember("PropertiesChanged")); err != nil {
		t.Fatal(err)
	}
	conn.Signal(signals)
	svc.RecordWindow(service.Window{ID: "2", Class: "Firefox", Title: "docs", Available: true})
	select {
	case <-signals:
	case <-time.After(5 * time.Second):
		t.Fatal("PropertiesChanged for a focus change: got none within 5 s, want one")
	}
	if got := getAll(t, obj)["CurrentClass"].Value(); got != "Firefox" {
		t.Fatalf("GetAll after PropertiesChanged: got CurrentClass %v, want Firefox", got)
	}
	var class dbus.Variant
	if err := obj.Call(propertiesInterface+".Get", 0, Interface, "CurrentClass").Store(&class); err != nil || class.Value() != "Firefox" {
		t.Fatalf("Get CurrentClass: got %v, %v; want Firefox", class, err)
	}

	before := liveSeconds(t, getAll(t, obj), "Firefox")
	time.Sleep(1100 * time.Millisecond)
	if after := liveSeconds(t, getAll(t, obj), "Firefox"); after <= before {
		t.Fatalf("the current window's seconds 1.1 s later: got %d, want more than %d", after, before)
	}
}

func liveSeconds(t *testing.T, props map[string]dbus.Variant, class string) uint64 {
	t.Helper()
	var buckets []bucket
	if err := dbus.Store([]any{props["Buckets"].Value()}, &buckets); err != nil {
		t.Fatal(err)
	}
	for _, b := range buckets {
		if b.Class == class {
			return b.Seconds
		}
	}
	t.Fatalf("buckets: got %v, want one for %s", buckets, class)
	return 0
}

// GetAll refuses by name what it does not serve: another interface, an
// argument of another type, a caller of another user.
func TestGetAllRefusals(t *testing.T) {
	bus, _, srv := serve(t)
	_, obj := panel(t, bus.Address)
	getAll(t, obj)

	err := obj.Call(propertiesInterface+".GetAll", 0, "org.example.Nope").Err
	if err == nil || !strings.Contains(err.Error(), "has properties only on org.antidrift.Session1") {
		t.Errorf("GetAll of another interface: got %v, want a refusal saying it has properties only on org.antidrift.Session1", err)
	}
	err = obj.Call(propertiesInterface+".GetAll", 0, uint32(7)).Err
	if err == nil || !strings.Contains(err.Error(), "takes arguments of type") {
		t.Errorf("GetAll of a number: got %v, want a refusal of the argument type", err)
	}
	srv.peers.mu.Lock()
	srv.peers.uid++
	srv.peers.mu.Unlock()
	err = obj.Call(propertiesInterface+".GetAll", 0, Interface).Err
	if err == nil || !strings.Contains(err.Error(), "serves only the user it runs as") {
		t.Errorf("GetAll from a known caller of another user: got %v, want a refusal saying it serves only the user it runs as", err)
	}
}
