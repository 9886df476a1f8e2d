package testenv

import (
	"testing"

	"github.com/godbus/dbus/v5"
	"github.com/godbus/dbus/v5/prop"
)

// ScreenTime states of GNOME Shell's break manager (js/misc/breakManager.js's
// BreakState, which the Shell exports as is).
const (
	ScreenTimeDisabled uint32 = 0
	ScreenTimeActive   uint32 = 1
	ScreenTimeIdle     uint32 = 2
	ScreenTimeInBreak  uint32 = 3
	ScreenTimeBreakDue uint32 = 4
)

// StandInScreenTime is a stand-in for GNOME Shell's break reminders on a
// bus: a peer of its own that owns org.gnome.Shell and exports
// org.gnome.Shell.ScreenTime (State, LastBreakEndTime) on
// /org/gnome/Shell/ScreenTime, announcing changes with PropertiesChanged as
// the Shell does. It is not GNOME Shell: a test using it says so.
type StandInScreenTime struct {
	Conn  *dbus.Conn
	props *prop.Properties
}

// StartStandInScreenTime starts the stand-in on bus in state.
func StartStandInScreenTime(t testing.TB, bus *Bus, state uint32) *StandInScreenTime {
	t.Helper()
	conn, err := dbus.Connect(bus.Address)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { conn.Close() })
	props, err := prop.Export(conn, "/org/gnome/Shell/ScreenTime", prop.Map{"org.gnome.Shell.ScreenTime": {
		"State":            {Value: state, Emit: prop.EmitTrue},
		"LastBreakEndTime": {Value: uint64(0), Emit: prop.EmitTrue},
	}})
	if err != nil {
		t.Fatal(err)
	}
	if reply, err := conn.RequestName("org.gnome.Shell", dbus.NameFlagDoNotQueue); err != nil || reply != dbus.RequestNameReplyPrimaryOwner {
		t.Fatalf("owning org.gnome.Shell for the ScreenTime stand-in: %v %v", reply, err)
	}
	return &StandInScreenTime{Conn: conn, props: props}
}

// Set changes State, announcing it.
func (s *StandInScreenTime) Set(state uint32) {
	s.props.SetMust("org.gnome.Shell.ScreenTime", "State", state)
}
