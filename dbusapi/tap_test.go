package dbusapi

import (
	"fmt"
	"reflect"
	"strings"
	"sync"
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

// GetAll from a caller already known to be the daemon's user is answered
// where it is read, and reads exactly what godbus's path reads: the same
// properties, fresh after a method's reply, after a PropertiesChanged, and
// while the current window's seconds grow.
func TestGetAllFastPathReadsWhatGodbusReads(t *testing.T) {
	bus, svc, srv := serve(t)
	conn, obj := panel(t, bus.Address)

	first := getAll(t, obj) // a stranger yet: godbus asks the bus for its user
	if n := srv.fastAnswers.Load(); n != 0 {
		t.Fatalf("the first call of an unknown caller was answered on the fast path (%d)", n)
	}
	second := getAll(t, obj)
	if n := srv.fastAnswers.Load(); n != 1 {
		t.Fatalf("the second call was not answered on the fast path (%d answers)", n)
	}
	if !reflect.DeepEqual(first, second) || len(second) != len(propertyList) {
		t.Fatalf("the fast path read\n%v\ngodbus's read\n%v", second, first)
	}

	svc.RecordWindow(service.Window{ID: "1", Class: "Editor", Title: "main.go", Available: true})
	if err := obj.Call(Interface+".Start", 0, "write the parser", "tests pass", uint64(3600), "warn", []string{"Editor"}).Err; err != nil {
		t.Fatal(err)
	}
	if got := getAll(t, obj)["State"].Value(); got != "active" {
		t.Fatalf("GetAll right after Start's reply reads State %v", got)
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
		t.Fatal("no PropertiesChanged for a focus change")
	}
	if got := getAll(t, obj)["CurrentClass"].Value(); got != "Firefox" {
		t.Fatalf("GetAll after PropertiesChanged reads CurrentClass %v", got)
	}

	before := liveSeconds(t, getAll(t, obj), "Firefox")
	answers := srv.fastAnswers.Load()
	time.Sleep(1100 * time.Millisecond)
	if after := liveSeconds(t, getAll(t, obj), "Firefox"); after <= before {
		t.Fatalf("1.1 s later the current window's seconds read %d, were %d", after, before)
	}
	if srv.fastAnswers.Load() != answers+1 {
		t.Fatal("the fresh seconds did not come from the fast path")
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
	t.Fatalf("no bucket for %s in %v", class, buckets)
	return 0
}

// What the fast path does not take still gets godbus's answer, on the same
// connection, after fast replies: a wrong interface or argument type is
// refused by name, a call that wants no reply gets none, and a caller that
// is not the daemon's user is refused even once known.
func TestGetAllFastPathLeavesTheRestToGodbus(t *testing.T) {
	bus, _, srv := serve(t)
	_, obj := panel(t, bus.Address)
	getAll(t, obj)
	getAll(t, obj)
	answers := srv.fastAnswers.Load()

	err := obj.Call(propertiesInterface+".GetAll", 0, "org.example.Nope").Err
	if err == nil || !strings.Contains(err.Error(), "has properties only on org.antidrift.Session1") {
		t.Errorf("GetAll of another interface: %v", err)
	}
	err = obj.Call(propertiesInterface+".GetAll", 0, uint32(7)).Err
	if err == nil || !strings.Contains(err.Error(), "takes arguments of type") {
		t.Errorf("GetAll of a number: %v", err)
	}
	if call := obj.Call(propertiesInterface+".GetAll", dbus.FlagNoReplyExpected, Interface); call.Err != nil {
		t.Errorf("GetAll wanting no reply: %v", call.Err)
	}
	getAll(t, obj) // the stream is still in step
	if got := srv.fastAnswers.Load(); got != answers+1 {
		t.Errorf("the fast path answered %d of these, want only the last", got-answers)
	}

	srv.peers.mu.Lock()
	srv.peers.uid++
	srv.peers.mu.Unlock()
	err = obj.Call(propertiesInterface+".GetAll", 0, Interface).Err
	if err == nil || !strings.Contains(err.Error(), "serves only the user it runs as") {
		t.Errorf("GetAll from a known caller of another user: %v", err)
	}
}

// Fast replies, godbus's replies and signals share one socket: under
// clients reading all at once while the state changes, every reply still
// decodes and belongs to its call.
func TestFastRepliesAndGodbusMessagesDoNotInterleave(t *testing.T) {
	bus, svc, _ := serve(t)
	var wg sync.WaitGroup
	errs := make(chan error, 16)
	for c := range 4 {
		_, obj := panel(t, bus.Address)
		wg.Add(1)
		go func() {
			defer wg.Done()
			for i := range 300 {
				var props map[string]dbus.Variant
				if err := obj.Call(propertiesInterface+".GetAll", 0, Interface).Store(&props); err != nil {
					errs <- fmt.Errorf("client %d call %d: %v", c, i, err)
					return
				}
				if _, ok := props["State"].Value().(string); !ok || len(props) != len(propertyList) {
					errs <- fmt.Errorf("client %d call %d: a reply of %d properties", c, i, len(props))
					return
				}
			}
		}()
	}
	_, driver := panel(t, bus.Address)
	for i := range 30 {
		svc.RecordWindow(service.Window{ID: fmt.Sprint(i), Class: fmt.Sprint("App", i%3), Title: "t", Available: true})
		for _, m := range []struct {
			name string
			args []any
		}{{"Start", []any{"a", "b", uint64(600), "warn", []string{"App0"}}}, {"Complete", nil}, {"End", nil}} {
			if err := driver.Call(Interface+"."+m.name, 0, m.args...).Err; err != nil {
				t.Fatalf("%s: %v", m.name, err)
			}
		}
	}
	wg.Wait()
	close(errs)
	for err := range errs {
		t.Error(err)
	}
}
