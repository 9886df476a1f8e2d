package dbusapi

import (
	"encoding/xml"
	"io"
	"log/slog"

	"path/filepath"
	"reflect"
	"sort"
	"strings"
	"testing"

	"github.com/godbus/dbus/v5"
	"github.com/godbus/dbus/v5/introspect"

	"github.com/antidrift/antidrift/dist"
	"github.com/antidrift/antidrift/internal/busconn"
	"github.com/antidrift/antidrift/internal/testsupport/testenv"
	"github.com/antidrift/antidrift/persist"
	"github.com/antidrift/antidrift/service"
)

// declared is org.antidrift.Session1 as the interface XML declares it.
func declared(t *testing.T) introspect.Interface { return declaredInterface(t, Interface) }

// declaredInterface is interface name as the interface XML declares it.
func declaredInterface(t *testing.T, name string) introspect.Interface {
	t.Helper()
	var node introspect.Node
	if err := xml.Unmarshal([]byte(dist.InterfaceXML), &node); err != nil {
		t.Fatal(err)
	}
	for _, i := range node.Interfaces {
		if i.Name == name {
			return i
		}
	}
	t.Fatalf("the interface XML: got no %s declared, want it", name)
	return introspect.Interface{}
}

// exported are the interfaces of ours the object serves, with the Go value
// that implements each.
var exported = []struct {
	iface string
	impl  any
}{
	{Interface, &methods{}},
	{EvidenceInterface, &evidenceObject{}},
}

// The sweep: a method nobody classified would be refused in every state,
// which is safe but broken; this names it so it cannot go unnoticed.
func TestEveryExportedMethodIsInThePermissionTable(t *testing.T) {
	for _, e := range exported {
		iface := declaredInterface(t, e.iface)
		if len(iface.Methods) == 0 {
			t.Fatalf("%s: got no methods declared, want some", e.iface)
		}
		for _, m := range iface.Methods {
			if !service.Classified(m.Name) {
				t.Errorf("%s.%s: got it exported but not in service's permission table, want it there: add it to permissions in service/permissions.go, saying why", e.iface, m.Name)
			}
		}
		// And the live object exports exactly the declared methods.
		typ := reflect.TypeOf(e.impl)
		for i := 0; i < typ.NumMethod(); i++ {
			name := typ.Method(i).Name
			if !service.Classified(name) {
				t.Errorf("%s: got a method of the exported object not in the permission table, want it there", name)
			}
		}
	}
}

func args(list []introspect.Arg, dir string) string {
	var sig strings.Builder
	for _, a := range list {
		if a.Direction == dir {
			sig.WriteString(a.Type)
		}
	}
	return sig.String()
}

// The Go methods implement exactly the declared signatures.
func TestMethodsMatchTheInterfaceXML(t *testing.T) {
	for _, e := range exported {
		methodsMatch(t, declaredInterface(t, e.iface), reflect.TypeOf(e.impl))
	}
}

func methodsMatch(t *testing.T, iface introspect.Interface, typ reflect.Type) {
	t.Helper()
	messageType := reflect.TypeOf(dbus.Message{})
	errType := reflect.TypeOf(&dbus.Error{})
	seen := map[string]bool{}
	for _, m := range iface.Methods {
		seen[m.Name] = true
		gm, ok := typ.MethodByName(m.Name)
		if !ok {
			t.Errorf("%s: got it declared but not implemented, want both", m.Name)
			continue
		}
		var in, out strings.Builder
		for i := 1; i < gm.Type.NumIn(); i++ {
			if p := gm.Type.In(i); p != messageType {
				in.WriteString(dbus.SignatureOfType(p).String())
			}
		}
		for i := 0; i < gm.Type.NumOut(); i++ {
			if p := gm.Type.Out(i); p != errType {
				out.WriteString(dbus.SignatureOfType(p).String())
			}
		}
		if in.String() != args(m.Args, "in") || out.String() != args(m.Args, "out") {
			t.Errorf("%s: got implemented (%s)→(%s), want it as declared, (%s)→(%s)", m.Name, in.String(), out.String(), args(m.Args, "in"), args(m.Args, "out"))
		}
	}
	for i := 0; i < typ.NumMethod(); i++ {
		if name := typ.Method(i).Name; !seen[name] {
			t.Errorf("%s: got it implemented but not declared in the interface XML, want both", name)
		}
	}
}

func TestPropertiesMatchTheInterfaceXML(t *testing.T) {
	iface := declared(t)
	got := properties(service.View{})
	want := map[string]string{}
	for _, p := range iface.Properties {
		want[p.Name] = p.Type
		if p.Access != "read" {
			t.Errorf("property %s: got access %s, want read: every property is read-only", p.Name, p.Access)
		}
	}
	for name, v := range got {
		if want[name] == "" {
			t.Errorf("property %s: got it served but not declared, want both", name)
		} else if sig := v.Signature().String(); sig != want[name] {
			t.Errorf("property %s is served as %s, declared %s", name, sig, want[name])
		}
	}
	for name := range want {
		if _, ok := got[name]; !ok {
			t.Errorf("property %s: got it declared but not served, want both", name)
		}
	}
}

// serve runs the core on a private bus in this process, with real files.
func serve(t *testing.T) (*testenv.Bus, *service.Service, *Server) {
	t.Helper()
	testenv.Need(t, "dbus-daemon", "gdbus")
	bus := testenv.StartStockSessionBus(t)
	store, _, err := persist.Open(filepath.Join(t.TempDir(), "state"))
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { store.Close() })
	quiet := slog.New(slog.NewTextHandler(io.Discard, nil))
	svc := service.New(service.Options{Store: store, Logger: quiet, Version: "test"})
	if err := svc.Recover(service.Snapshot{}); err != nil {
		t.Fatal(err)
	}
	conn, err := busconn.Connect(bus.Address, nil)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { conn.Close() })
	srv, err := Serve(conn, svc, quiet)
	if err != nil {
		t.Fatal(err)
	}
	return bus, svc, srv
}

// The live object, introspected by an independent client, is the XML.
func TestLiveObjectIntrospectsAsTheInterfaceXML(t *testing.T) {
	bus, _, _ := serve(t)
	out, err := bus.Run(t, "gdbus", "introspect", "--session", "--xml", "--dest", BusName, "--object-path", string(ObjectPath))
	if err != nil {
		t.Fatal(err)
	}
	var node introspect.Node
	if err := xml.Unmarshal([]byte(out), &node); err != nil {
		t.Fatalf("gdbus introspect: got\n%s\nwant XML: %v", out, err)
	}
	live := map[string]introspect.Interface{}
	var names []string
	for _, i := range node.Interfaces {
		names = append(names, i.Name)
		live[i.Name] = i
	}
	sort.Strings(names)
	if want := []string{"org.antidrift.ErrorData1", "org.antidrift.Evidence1", "org.antidrift.Session1", "org.freedesktop.DBus.Introspectable", "org.freedesktop.DBus.Peer", "org.freedesktop.DBus.Properties"}; !reflect.DeepEqual(names, want) {
		t.Fatalf("got interfaces %v, want %v", names, want)
	}
	for _, e := range exported {
		decl, got := declaredInterface(t, e.iface), live[e.iface]
		if !reflect.DeepEqual(got.Methods, decl.Methods) || !reflect.DeepEqual(got.Properties, decl.Properties) || !reflect.DeepEqual(got.Signals, decl.Signals) {
			t.Fatalf("the live interface %s: got\n%+v\nwant it as the XML declares it\n%+v", e.iface, got, decl)
		}
	}
}

func TestPropertiesAreReadOnlyAndNamed(t *testing.T) {
	bus, _, _ := serve(t)
	_, err := bus.Run(t, "gdbus", "call", "--session", "--dest", BusName, "--object-path", string(ObjectPath),
		"--method", "org.freedesktop.DBus.Properties.Set", Interface, "State", "<'active'>")
	if err == nil || !strings.Contains(err.Error(), "PropertyReadOnly") {
		t.Fatalf("Set State: got %v, want PropertyReadOnly", err)
	}
	_, err = bus.Run(t, "gdbus", "call", "--session", "--dest", BusName, "--object-path", string(ObjectPath),
		"--method", "org.freedesktop.DBus.Properties.Get", Interface, "Nonsense")
	if err == nil || !strings.Contains(err.Error(), "UnknownProperty") {
		t.Fatalf("Get Nonsense: got %v, want UnknownProperty", err)
	}
}

// Only the daemon's own user is served: a caller running as anyone else
// is refused by name, on methods and properties alike.
func TestOtherUsersAreRefused(t *testing.T) {
	bus, svc, srv := serve(t)
	// Pretend the daemon runs as another user than the test's clients.
	srv.peers.mu.Lock()
	srv.peers.uid++
	srv.peers.mu.Unlock()
	for _, call := range [][]string{
		{"--method", Interface + ".Plan"},
		{"--method", "org.freedesktop.DBus.Properties.Get", Interface, "CurrentTitle"},
	} {
		_, err := bus.Run(t, "gdbus", append([]string{"call", "--session", "--dest", BusName, "--object-path", string(ObjectPath)}, call...)...)
		if err == nil || !strings.Contains(err.Error(), "org.antidrift.Error.AccessDenied") || !strings.Contains(err.Error(), "serves only the user it runs as") {
			t.Errorf("%v from another user: got %v, want org.antidrift.Error.AccessDenied saying it serves only the user it runs as", call, err)
		}
	}
	if v := svc.View(); v.State != service.StateLocked {
		t.Fatalf("the state after a refused caller: got %s, want locked, unchanged", v.State)
	}
}

// Arguments of the wrong type are refused by name, never converted: a
// uint32 where a string belongs would otherwise arrive as "\x00".
func TestWrongArgumentTypesAreRefused(t *testing.T) {
	bus, svc, _ := serve(t)
	for _, c := range [][]string{
		{"org.freedesktop.DBus.Properties", "GetAll", "u", "0"},
		{Interface, "Abandon", "u", "0"},
		{Interface, "Start", "s", "only one"},
		{Interface, "Extend", "s", "600"},
	} {
		_, err := bus.Run(t, "busctl", append([]string{"--user", "--timeout=5", "call", BusName, string(ObjectPath)}, c...)...)
		// godbus itself turns away what it cannot convert; the gate the rest.
		if err == nil || !(strings.Contains(err.Error(), "takes arguments of type") || strings.Contains(err.Error(), "Invalid type / number of args")) {
			t.Errorf("%v: got %v, want a refusal of the argument types", c, err)
		}
	}
	if v := svc.View(); v.State != service.StateLocked {
		t.Fatalf("the state after a malformed call: got %s, want locked, unchanged", v.State)
	}
}

// A refusal names a bad argument by its start and its size, never echoes
// it whole: a 20,000-byte argument (here well under any size limit) gives
// a reply a person can read, in every refusal that quotes one.
func TestRefusalsQuoteAtMost80CharactersOfAnArgument(t *testing.T) {
	bus, _, _ := serve(t)
	long := strings.Repeat("abcdefghij", 2000)
	quoted := `"` + long[:80] + `"… (20000 bytes in all)`
	for _, c := range [][]string{
		{"org.freedesktop.DBus.Properties", "Get", "ss", Interface, long},
		{"org.freedesktop.DBus.Properties", "Get", "ss", long, "State"},
		{"org.freedesktop.DBus.Properties", "Set", "ssv", Interface, long, "s", "x"},
		{Interface, "Start", "sstsas", "a", "b", "60", long, "0"},
		{Interface, "Start", "sstsas", "a", "b", "60", "", "1", long},
		{Interface, "Allow", "s", long},
		{Interface, "SetEnforcement", "s", long},
	} {
		out, err := bus.Run(t, "busctl", append([]string{"--user", "--timeout=5", "call", BusName, string(ObjectPath)}, c...)...)
		if err == nil {
			t.Errorf("%s %s: got it accepted: %s; want a refusal", c[1], c[2], out)
			continue
		}
		_, reply, _ := strings.Cut(err.Error(), "; stderr: ") // after the command line
		if !strings.Contains(reply, quoted) || len(reply) > 500 {
			t.Errorf("%s %s: refusal of %d bytes, want the argument quoted as %s: %.300s", c[1], c[2], len(reply), quoted, reply)
		}
	}
}
