package busname_test

import (
	"context"
	"testing"
	"time"

	"github.com/godbus/dbus/v5"

	"github.com/antidrift/antidrift/internal/busname"
	"github.com/antidrift/antidrift/internal/testsupport/testenv"
)

const name = "org.example.Compositor"

// Older news never undoes newer: what an Owner learnt from a later message
// stands against an earlier one arriving late, and hearing the same owner
// again is no change.
func TestOwnerLearnKeepsTheNewestNews(t *testing.T) {
	var o busname.Owner
	if !o.Learn(":1.5", 10) || o.Unique != ":1.5" {
		t.Fatalf("first news not learnt: %+v", o)
	}
	if o.Learn(":1.4", 9) || o.Unique != ":1.5" {
		t.Fatalf("older news undid newer: %+v", o)
	}
	if o.Learn(":1.5", 11) {
		t.Fatal("the same owner again counted as a change")
	}
	if !o.Learn("", 12) || o.Unique != "" {
		t.Fatalf("the owner leaving not learnt: %+v", o)
	}
	if o.Sent(&dbus.Signal{Sender: ""}) {
		t.Fatal("with no owner, a signal without a sender counts as the owner's")
	}
}

// nextChange reads f's signals until one changes a followed owner.
func nextChange(t *testing.T, f *busname.Follower) *busname.Owner {
	t.Helper()
	timeout := time.After(10 * time.Second)
	for {
		select {
		case sig := <-f.Signals:
			if o, _ := f.OwnerChange(sig); o != nil {
				return o
			}
		case <-timeout:
			t.Fatal("no change of owner arrived")
			return nil
		}
	}
}

// A Follower learns who owns a name from the bus, follows it as it changes
// hands, believes only the bus's own NameOwnerChanged (a peer's, sent
// straight to it, changes nothing), and leaves no match rule behind.
func TestFollowerFollowsTheBusOnly(t *testing.T) {
	bus := testenv.StartBus(t)
	conn := bus.Dial(t)
	f := busname.New(conn, nil)
	o, err := f.Follow(context.Background(), name)
	if err != nil {
		t.Fatal(err)
	}
	if o.Unique != "" {
		t.Fatalf("nobody owns %s, the Follower says %q", name, o.Unique)
	}

	owner := bus.Dial(t)
	if reply, err := owner.RequestName(name, dbus.NameFlagDoNotQueue); err != nil || reply != dbus.RequestNameReplyPrimaryOwner {
		t.Fatalf("owning %s: %v %v", name, reply, err)
	}
	if got := nextChange(t, f); got != o || o.Unique != owner.Names()[0] {
		t.Fatalf("after %s took the name, the Follower says %q", owner.Names()[0], o.Unique)
	}

	// A forger says the name changed hands to it, straight to us; then the
	// real owner gives the name up. Only the bus's news is believed, in
	// the order sent.
	forger := bus.Dial(t)
	testenv.SendSignalTo(t, forger, conn.Names()[0], busname.BusPath, busname.Bus+".NameOwnerChanged", name, owner.Names()[0], forger.Names()[0])
	if _, err := owner.ReleaseName(name); err != nil {
		t.Fatal(err)
	}
	if got := nextChange(t, f); got != o || o.Unique != "" {
		t.Fatalf("after the forgery and the release, the Follower says %q owns %s", o.Unique, name)
	}

	f.Close()
	var stats map[string]dbus.Variant
	if err := conn.BusObject().Call("org.freedesktop.DBus.Debug.Stats.GetConnectionStats", 0, conn.Names()[0]).Store(&stats); err != nil {
		t.Fatalf("counting match rules: %v", err)
	}
	if n, _ := stats["MatchRules"].Value().(uint32); n != 0 {
		t.Fatalf("%d match rules left after Close", n)
	}
}

// IsError recognizes a D-Bus error by name, as godbus returns it by value
// or by pointer.
func TestIsError(t *testing.T) {
	e := dbus.Error{Name: "org.freedesktop.DBus.Error.NameHasNoOwner"}
	if !busname.IsError(e, e.Name) || !busname.IsError(&e, e.Name) || busname.IsError(e, "org.example.Other") || busname.IsError(nil, e.Name) {
		t.Fatal("IsError misreads a D-Bus error")
	}
}
