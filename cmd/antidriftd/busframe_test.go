package main

import (
	"path/filepath"
	"strings"
	"testing"

	"github.com/godbus/dbus/v5"

	"github.com/antidrift/antidrift/internal/testsupport/testenv"
)

// The daemon reads its session bus through busconn: on the stock session
// bus a call over its message limit is refused with LimitsExceeded, unread,
// and the daemon answers the next call as before.
func TestDaemonRefusesAnOverlongCallUnread(t *testing.T) {
	testenv.Need(t, "dbus-daemon")
	d := testenv.StartDaemon(t, testenv.StartStockSessionBus(t), filepath.Join(t.TempDir(), "state"))
	c := dialDaemon(t, d)
	err := c.call("Allow", strings.Repeat("x", 1<<20)).Err
	if e, ok := err.(dbus.Error); !ok || e.Name != "org.freedesktop.DBus.Error.LimitsExceeded" {
		t.Fatalf("a 1 MiB Allow: %v; want LimitsExceeded", err)
	}
	var props map[string]dbus.Variant
	if err := c.do("org.freedesktop.DBus.Properties.GetAll", sessionIfc).Store(&props); err != nil {
		t.Fatalf("GetAll after the refused call: %v", err)
	}
	if classes, _ := props["AllowedClasses"].Value().([]string); len(classes) != 0 {
		t.Fatalf("AllowedClasses after the refused Allow: got %q, want none", classes)
	}
}
