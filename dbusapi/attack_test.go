package dbusapi

// The daemon's face under attack by another client of the same session
// bus (the stock session limits: max_message_size 1000000000), with
// messages built by hand in either byte order.

import (
	"encoding/binary"
	"fmt"
	"os"
	"slices"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/godbus/dbus/v5"

	"github.com/antidrift/antidrift/internal/testsupport/testenv"
	"github.com/antidrift/antidrift/service"
)

var byteOrders = []binary.ByteOrder{binary.LittleEndian, binary.BigEndian}

func allowed(t *testing.T, obj dbus.BusObject) []string {
	t.Helper()
	var classes []string
	if err := dbus.Store([]any{getAll(t, obj)["AllowedClasses"].Value()}, &classes); err != nil {
		t.Fatal(err)
	}
	return classes
}

func startSession(t *testing.T, svc *service.Service, obj dbus.BusObject) {
	t.Helper()
	svc.RecordWindow(service.Window{ID: "1", Class: "Editor", Title: "main.go", Available: true})
	if err := obj.Call(Interface+".Start", 0, "write the parser", "tests pass", uint64(3600), "warn", []string{"Editor"}).Err; err != nil {
		t.Fatal(err)
	}
}

// A call without an interface header is checked against the interface
// that has its member: the wrong types are refused by name and change
// nothing; the right ones work. Either byte order.
func TestCallsWithoutAnInterfaceAreTypeChecked(t *testing.T) {
	bus, svc, _ := serve(t)
	_, obj := panel(t, bus.Address)
	startSession(t, svc, obj)
	raw := testenv.DialRaw(t, bus.Address)
	for _, order := range byteOrders {
		call := func(member, sig string, body *testenv.RawBody) testenv.RawMessage {
			return raw.Call(t, testenv.RawMessage{Order: order, Destination: BusName, Path: string(ObjectPath),
				Member: member, Signature: sig, Body: body.Encoded()})
		}
		body := func() *testenv.RawBody { return &testenv.RawBody{Order: order} }
		for _, c := range []struct {
			member, sig string
			body        *testenv.RawBody
		}{
			{"Allow", "u", body().Uint32(65)},
			{"Abandon", "i", body().Int32(67)},
			{"Extend", "s", body().String("600")},
		} {
			reply := raw.Call(t, testenv.RawMessage{Order: order, Destination: BusName, Path: string(ObjectPath),
				Member: c.member, Signature: c.sig, Body: c.body.Encoded()})
			// godbus refuses what it cannot convert (a string for a
			// number) itself; what it would convert, the gate refuses.
			if reply.ErrorName != "org.freedesktop.DBus.Error.InvalidArgs" {
				t.Errorf("%v: %s(%s) without an interface: %q; want InvalidArgs", order, c.member, c.sig, reply.Err())
			}
			if c.member != "Extend" && !strings.Contains(reply.Err(), "takes arguments of type") {
				t.Errorf("%v: %s(%s) without an interface: %q; want the types named", order, c.member, c.sig, reply.Err())
			}
		}
		if got := getAll(t, obj)["State"].Value(); got != "active" {
			t.Fatalf("%v: the state after the refused calls: got %v, want active", order, got)
		}
		if classes := allowed(t, obj); slices.Contains(classes, "A") {
			t.Fatalf("%v: allowed classes after Allow(u 65): got %q, want no \"A\"", order, classes)
		}
		class := fmt.Sprint("Terminal-", order)
		if reply := call("Allow", "s", body().String(class)); reply.ErrorName != "" {
			t.Fatalf("%v: Allow(s) without an interface: got %s, want success", order, reply.Err())
		}
		if classes := allowed(t, obj); !slices.Contains(classes, class) {
			t.Fatalf("%v: allowed classes after Allow(s %q) without an interface: got %q, want it among them", order, class, classes)
		}
	}
}

// A member two interfaces have cannot be called without naming one.
func TestAMemberOfTwoInterfacesNeedsItsInterface(t *testing.T) {
	_, _, srv := serve(t)
	srv.interfaces["Allow"] = append(srv.interfaces["Allow"], "org.example.Other")
	msg := &dbus.Message{Type: dbus.TypeMethodCall, Headers: map[dbus.HeaderField]dbus.Variant{
		dbus.FieldSender:    dbus.MakeVariant(srv.conn.Names()[0]),
		dbus.FieldMember:    dbus.MakeVariant("Allow"),
		dbus.FieldSignature: dbus.MakeVariant(dbus.SignatureOf("x")),
	}}
	err := srv.gate(msg)
	if err == nil || err.Name != "org.freedesktop.DBus.Error.UnknownMethod" || !strings.Contains(err.Error(), "org.antidrift.Session1 and org.example.Other") {
		t.Fatalf("Allow without an interface, with two interfaces having it: got %v, want UnknownMethod naming org.antidrift.Session1 and org.example.Other", err)
	}
}

// carrier is a method call of exactly 2^27 bytes to dest whose body, two
// ay (an array may hold at most 2^26 bytes), holds forged at a 16-byte
// boundary of the message as its receiver reads it — the bus adds its
// sender field, the sender named sender, at the end of the header fields.
// godbus refuses the message after its first 16 bytes and reads on from
// there, 16 bytes at a time, until it finds a header: the forged messages.
func carrier(order binary.ByteOrder, dest, sender string, forged []byte) []byte {
	msg := func(body []byte) []byte {
		return testenv.RawMessage{Order: order, Destination: dest, Path: string(ObjectPath), Interface: Interface,
			Member: "Start", Signature: "ayay", Body: body}.Encode()
	}
	fields := uint64(order.Uint32(msg(nil)[12:16]))
	sent := align8(16 + fields)
	received := align8(16 + align8(fields) + 8 + uint64(len(sender)) + 1)
	first := uint64(1<<26 - 64)
	second := 1<<27 - sent - 4 - first - 4
	at := (received+4+16+15)&^15 - (received + 4)
	payload := make([]byte, first)
	copy(payload[at:], forged)
	c := msg((&testenv.RawBody{Order: order}).Bytes(payload).Bytes(make([]byte, second)).Encoded())
	if len(c) != 1<<27 {
		panic(fmt.Sprintf("carrier of %d bytes", len(c)))
	}
	return c
}

func align8(n uint64) uint64 { return (n + 7) &^ 7 }

// forgedCalls are a ReportFocus claiming to come from reporter, with the
// serial 0x7ffffff0 (which would make every later real report look
// stale), and an Abandon claiming to come from abandoner, both to dest.
func forgedCalls(order binary.ByteOrder, dest, reporter, abandoner string) []byte {
	focus := testenv.RawMessage{Order: order, Serial: 0x7ffffff0, Sender: reporter, Destination: dest, Path: string(ObjectPath),
		Interface: EvidenceInterface, Member: "ReportFocus", Signature: "sss",
		Body: (&testenv.RawBody{Order: order}).String("h").String("INJECTED").String("forged title").Encoded()}
	abandon := testenv.RawMessage{Order: order, Serial: 0x7ffffff1, Sender: abandoner, Destination: dest, Path: string(ObjectPath),
		Interface: Interface, Member: "Abandon", Signature: "s",
		Body: (&testenv.RawBody{Order: order}).String("forged").Encoded()}
	return append(focus.Encode(), abandon.Encode()...)
}

// victim is plain godbus serving the two methods the forged calls name.
type victim struct{ calls chan string }

func (v *victim) ReportFocus(msg dbus.Message, _, class, _ string) *dbus.Error {
	v.calls <- "ReportFocus " + class
	return nil
}

func (v *victim) Abandon(msg dbus.Message, reason string) *dbus.Error {
	v.calls <- "Abandon " + reason
	return nil
}

// The exact-2^27 carrier with a forged ReportFocus and a forged Abandon
// inside: plain godbus runs both (the check that the carrier is real);
// the daemon refuses the carrier with LimitsExceeded without reading it,
// neither forged call takes effect, and it keeps serving — the
// compositor's next real report is believed. Either byte order.
func TestTheExact2To27CarrierForgesNothing(t *testing.T) {
	if testing.Short() {
		t.Skip("sends 128 MiB messages")
	}
	bus, svc, srv := serve(t)
	_, obj := panel(t, bus.Address)
	kwin, kwinObj := panel(t, bus.Address)
	if reply, err := kwin.RequestName("org.kde.KWin", dbus.NameFlagDoNotQueue); err != nil || reply != dbus.RequestNameReplyPrimaryOwner {
		t.Fatalf("owning org.kde.KWin: got %v %v, want primary owner", reply, err)
	}
	reports, _ := believe(srv, "kwin", "org.kde.KWin")
	startSession(t, svc, obj)
	raw := testenv.DialRaw(t, bus.Address)

	const victimName = "org.antidrift.Victim"
	for _, order := range byteOrders {
		// The check that the carrier is real: plain godbus, a fresh
		// connection each time (it reads on through the rest of the
		// carrier 16 bytes at a time; it is closed once it ran both).
		plain, err := dbus.Connect(bus.Address)
		if err != nil {
			t.Fatal(err)
		}
		v := &victim{calls: make(chan string, 16)}
		for _, iface := range []string{Interface, EvidenceInterface} {
			if err := plain.Export(v, ObjectPath, iface); err != nil {
				t.Fatal(err)
			}
		}
		if _, err := plain.RequestName(victimName, dbus.NameFlagDoNotQueue); err != nil {
			t.Fatal(err)
		}
		raw.SendEncoded(t, carrier(order, victimName, raw.Name, forgedCalls(order, victimName, kwin.Names()[0], plain.Names()[0])))
		// godbus runs each call on a goroutine of its own: the two arrive
		// in either order.
		ran := map[string]bool{}
		for len(ran) < 2 {
			select {
			case call := <-v.calls:
				if call != "ReportFocus INJECTED" && call != "Abandon forged" {
					t.Fatalf("%v: plain godbus ran %q; want the two forged calls", order, call)
				}
				ran[call] = true
			case <-time.After(30 * time.Second):
				t.Fatalf("%v: plain godbus ran %v of the forged calls, want both within 30 s: else the carrier is not what the test claims", order, ran)
			}
		}
		plain.Close()

		serial := raw.SendEncoded(t, carrier(order, BusName, raw.Name, forgedCalls(order, BusName, kwin.Names()[0], srv.conn.Names()[0])))
		reply := raw.ReplyTo(t, serial, 60*time.Second)
		if reply.ErrorName != "org.freedesktop.DBus.Error.LimitsExceeded" {
			t.Fatalf("%v: the carrier was answered %q; want LimitsExceeded", order, reply.Err())
		}
		props := getAll(t, obj)
		if props["State"].Value() != "active" {
			t.Fatalf("%v: the state after the carrier: got %v, want active", order, props["State"].Value())
		}
		select {
		case r := <-reports:
			t.Fatalf("%v: got a forged report believed: %+v, want none", order, r)
		default:
		}
		if err := kwinObj.Call(EvidenceInterface+".ReportFocus", 0, "w1", "Editor", "real").Err; err != nil {
			t.Fatalf("%v: the compositor's real report after the carrier: got %v, want success", order, err)
		}
		if r := <-reports; r.app != "Editor" {
			t.Fatalf("%v: the real report: got %+v, want app Editor", order, r)
		}
	}
}

// A call of 60 MiB is refused with LimitsExceeded, unread, while another
// client reads GetAll without a failure, before, during and after it; the
// state is untouched. (How long the reader waited is a benchmark's
// business: bench's GetAllBesideAHugeCall.)
func TestAHugeCallIsRefusedUnreadBesideAReader(t *testing.T) {
	bus, svc, _ := serve(t)
	_, obj := panel(t, bus.Address)
	startSession(t, svc, obj)
	_, reader := panel(t, bus.Address)
	var reads atomic.Int64
	stop := make(chan struct{})
	var wg sync.WaitGroup
	wg.Add(1)
	go func() {
		defer wg.Done()
		for {
			select {
			case <-stop:
				return
			default:
			}
			if err := reader.Call(propertiesInterface+".GetAll", 0, Interface).Err; err != nil {
				t.Errorf("GetAll beside the huge call: got %v, want success", err)
				return
			}
			reads.Add(1)
		}
	}()
	_, attacker := panel(t, bus.Address)
	for range 2 {
		err := attacker.Call(Interface+".Allow", 0, strings.Repeat("A", 60<<20)).Err
		var derr dbus.Error
		if e, ok := err.(dbus.Error); ok {
			derr = e
		}
		if derr.Name != "org.freedesktop.DBus.Error.LimitsExceeded" {
			t.Fatalf("a 60 MiB Allow: %v; want LimitsExceeded", err)
		}
	}
	before := reads.Load()
	testenv.WaitUntil(t, 10*time.Second, "GetAll to be answered after the huge calls", func() bool { return reads.Load() > before+3 })
	close(stop)
	wg.Wait()
	if classes := allowed(t, obj); len(classes) != 1 {
		t.Fatalf("allowed classes after the refused Allow: got %d, want 1", len(classes))
	}
}

// A call carrying a file descriptor never reaches the daemon, which does
// not take descriptors: the caller is told so, at once, and the daemon
// keeps serving.
func TestACallWithAFileDescriptorIsRefused(t *testing.T) {
	bus, _, _ := serve(t)
	_, obj := panel(t, bus.Address)
	f, err := os.Open(os.DevNull)
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	call := obj.Call(Interface+".Allow", 0, dbus.UnixFD(f.Fd()))
	if call.Err == nil || !strings.Contains(call.Err.Error(), "Unix file descriptors") {
		t.Fatalf("a call with a file descriptor: %v; want the bus's refusal", call.Err)
	}
	getAll(t, obj)
}
