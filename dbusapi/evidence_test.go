package dbusapi

import (
	"errors"
	"strings"
	"testing"

	"github.com/godbus/dbus/v5"
)

// compositorConn is a connection that owns name, as KWin owns org.kde.KWin.
func compositorConn(t *testing.T, address, name string) *dbus.Conn {
	t.Helper()
	conn, err := dbus.Connect(address)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { conn.Close() })
	if reply, err := conn.RequestName(name, dbus.NameFlagDoNotQueue); err != nil || reply != dbus.RequestNameReplyPrimaryOwner {
		t.Fatalf("owning %s: %v %v", name, reply, err)
	}
	return conn
}

func reportFocus(conn *dbus.Conn, handle, appID, title string) error {
	return conn.Object(BusName, ObjectPath).Call(EvidenceInterface+".ReportFocus", 0, handle, appID, title).Err
}

// Only the compositor is believed: the owner of the source's bus name,
// while that source is in use. A process of the same user that is not the
// compositor cannot feed the core windows.
func TestReportFocusIsBelievedOnlyFromTheCompositor(t *testing.T) {
	bus, _, srv := serve(t)
	srv.SetEvidenceSource("x11")
	kwin := compositorConn(t, bus.Address, "org.kde.KWin")

	// No pushing source in use: even KWin is refused, and told why.
	err := reportFocus(kwin, "1", "org.kde.konsole", "~")
	if errorName(err) != "org.antidrift.Error.AccessDenied" || !strings.Contains(err.Error(), "evidence source is x11, which takes no focus reports") {
		t.Fatalf("ReportFocus with x11 in use = %v, want AccessDenied naming the source", err)
	}

	got := make(chan FocusReport, 4)
	stop := srv.BelieveEvidenceFrom("kwin", "org.kde.KWin", func(r FocusReport) { got <- r })
	if err := reportFocus(kwin, "{abc}", "org.kde.konsole", "build log"); err != nil {
		t.Fatalf("ReportFocus from KWin's connection: %v", err)
	}
	first := <-got
	if first.Serial == 0 || first != (FocusReport{Handle: "{abc}", AppID: "org.kde.konsole", Title: "build log", Serial: first.Serial}) {
		t.Fatalf("delivered %+v", first)
	}
	if err := reportFocus(kwin, "{abc}", "org.kde.konsole", "build log 2"); err != nil {
		t.Fatal(err)
	}
	if r := <-got; r.Serial <= first.Serial {
		t.Fatalf("the second report's serial %d is not after the first's %d", r.Serial, first.Serial)
	}

	// A forger: gdbus, another connection of the same user.
	_, err = bus.Run(t, "gdbus", "call", "--session", "--dest", BusName, "--object-path", string(ObjectPath),
		"--method", EvidenceInterface+".ReportFocus", "{forged}", "steam", "a game")
	if err == nil || !strings.Contains(err.Error(), "org.antidrift.Error.AccessDenied") || !strings.Contains(err.Error(), "only from the compositor: the connection that owns org.kde.KWin") {
		t.Fatalf("forged ReportFocus = %v, want AccessDenied naming the rule", err)
	}

	// KWin restarts: the new owner is believed from its first call.
	kwin.Close()
	kwin2 := compositorConn(t, bus.Address, "org.kde.KWin")
	if err := reportFocus(kwin2, "{def}", "firefox", "docs"); err != nil {
		t.Fatalf("ReportFocus from the restarted KWin: %v", err)
	}
	if r := <-got; r.Handle != "{def}" {
		t.Fatalf("delivered %+v after the restart", r)
	}

	stop()
	if err := reportFocus(kwin2, "{ghi}", "firefox", "docs"); errorName(err) != "org.antidrift.Error.AccessDenied" {
		t.Fatalf("ReportFocus after stop = %v, want AccessDenied", err)
	}
	select {
	case r := <-got:
		t.Fatalf("a refused call was delivered: %+v", r)
	default:
	}
}

// errorName is the D-Bus error name of err ("" when it is none).
func errorName(err error) string {
	var e dbus.Error
	if errors.As(err, &e) {
		return e.Name
	}
	return ""
}
