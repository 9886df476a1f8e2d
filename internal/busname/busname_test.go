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
		t.Fatalf("first news: got %+v, want :1.5 learnt", o)
	}
	if o.Learn(":1.4", 9) || o.Unique != ":1.5" {
		t.Fatalf("older news: got %+v, want :1.5 kept (older news never undoes newer)", o)
	}
	if o.Learn(":1.5", 11) {
		t.Fatal("the same owner again: got a change, want none")
	}
	if !o.Learn("", 12) || o.Unique != "" {
		t.Fatalf("the owner leaving: got %+v, want no owner learnt", o)
	}
	if o.Sent(&dbus.Signal{Sender: ""}) {
		t.Fatal("with no owner, a signal without a sender: got it counted as the owner's, want not")
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
			t.Fatal("a change of owner: got none, want one")
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
		t.Fatalf("owner of %s, which nobody owns: got %q, want none", name, o.Unique)
	}

	owner := bus.Dial(t)
	if reply, err := owner.RequestName(name, dbus.NameFlagDoNotQueue); err != nil || reply != dbus.RequestNameReplyPrimaryOwner {
		t.Fatalf("owning %s: got %v %v, want primary owner", name, reply, err)
	}
	if got := nextChange(t, f); got != o || o.Unique != owner.Names()[0] {
		t.Fatalf("after %s took the name, the Follower's owner: got %q, want %s", owner.Names()[0], o.Unique, owner.Names()[0])
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
		t.Fatalf("after the forgery and the release, the Follower's owner of %s: got %q, want none", name, o.Unique)
	}

	f.Close()
	var stats map[string]dbus.Variant
	if err := conn.BusObject().Call("org.freedesktop.DBus.Debug.Stats.GetConnectionStats", 0, conn.Names()[0]).Store(&stats); err != nil {
		t.Fatalf("counting match rules: got %v, want the connection's stats", err)
	}
	if n, _ := stats["MatchRules"].Value().(uint32); n != 0 {
		t.Fatalf("match rules left after Close: got %d, want 0", n)
	}
}

// IsError recognizes a D-Bus error by name, as godbus returns it by value
// or by pointer.
func TestIsError(t *testing.T) {
	e := dbus.Error{Name: "org.freedesktop.DBus.Error.NameHasNoOwner"}
	if !busname.IsError(e, e.Name) || !busname.IsError(&e, e.Name) || busname.IsError(e, "org.example.Other") || busname.IsError(nil, e.Name) {
		t.Fatal("IsError: got a D-Bus error misread, want it recognized by name, by value and by pointer, and nothing else")
	}
}
