package main

import (
	"encoding/json"
	"log/slog"
	"os"
	"path/filepath"
	"testing"
	"time"

	"github.com/antidrift/antidrift/apps"
	"github.com/antidrift/antidrift/config"
	"github.com/antidrift/antidrift/internal/testsupport/statefixture"
	"github.com/antidrift/antidrift/internal/testsupport/testenv"
	"github.com/antidrift/antidrift/persist"
	"github.com/antidrift/antidrift/report"
)

// The daemon's Reporter gets the desktop entries the daemon opened, and
// none (a nil interface, not a nil *apps.Index in it) when it has none.
func TestTheReporterGetsTheApps(t *testing.T) {
	store, _, err := persist.Open(t.TempDir())
	if err != nil {
		t.Fatal(err)
	}
	defer store.Close()
	t.Setenv("XDG_DATA_HOME", t.TempDir())
	t.Setenv("XDG_DATA_DIRS", t.TempDir())
	x, err := apps.Open("")
	if err != nil {
		t.Fatal(err)
	}
	defer x.Close()
	with := &Main{store: store, src: source{name: "x11"}, log: slog.Default(), apps: x}
	if got := with.serviceOptions(config.Default(), nil).Reporter.(report.DirReporter).Options.Apps; got != report.AppLookup(x) {
		t.Errorf("the Reporter's apps with an index: got %v, want the daemon's index", got)
	}
	without := &Main{store: store, src: source{name: "x11"}, log: slog.Default()}
	if got := without.serviceOptions(config.Default(), nil).Reporter.(report.DirReporter).Options.Apps; got != nil {
		t.Errorf("the Reporter's apps without an index: got %#v, want nil", got)
	}
}

// Report over the bus names apps as `antidrift report` does: the desktop
// entries of the daemon's session (Name[de] under LANG=de_DE.UTF-8) beside
// each class that has one, and no app beside a class that has none.
func TestReportOverTheBusNamesApps(t *testing.T) {
	testenv.Need(t, "dbus-daemon")
	root := t.TempDir()
	state := filepath.Join(root, "state")
	today := time.Now().UTC().Truncate(24 * time.Hour)
	if _, err := statefixture.Write(state, statefixture.Spec{
		Seed: 3, Sessions: 6, First: today.AddDate(0, 0, -3), Slots: []time.Duration{9 * time.Hour}, EventsPerSession: 20, KeepRawLogs: 3,
	}); err != nil {
		t.Fatal(err)
	}
	data := filepath.Join(root, "data")
	if err := os.MkdirAll(filepath.Join(data, "applications"), 0o755); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(filepath.Join(data, "applications", "kitty.desktop"),
		[]byte("[Desktop Entry]\nType=Application\nExec=kitty\nName=kitty\nName[de]=Kitty-Terminal\nIcon=kitty\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	d := testenv.StartDaemon(t, testenv.StartBus(t), state, "XDG_DATA_HOME="+data, "LANG=de_DE.UTF-8", "LC_ALL=", "LC_MESSAGES=", "LANGUAGE=", "TZ=UTC")
	var doc string
	if err := d.Bus.Dial(t).Object("org.antidrift", "/org/antidrift/Session1").
		Call("org.antidrift.Session1.Report", 0, today.AddDate(0, 0, -6).Unix(), today.AddDate(0, 0, 1).Unix()).Store(&doc); err != nil {
		t.Fatalf("Report: %v\n%s", err, d.Output())
	}
	var r report.Report
	if err := json.Unmarshal([]byte(doc), &r); err != nil {
		t.Fatal(err)
	}
	named := false
	for _, w := range r.Windows {
		switch {
		case w.Class == "kitty":
			named = w.App == report.App{Name: "Kitty-Terminal", DesktopID: "kitty", Icon: "kitty"}
		case w.App != report.App{}:
			t.Errorf("window %q: got app %+v, want none (no desktop entry)", w.Class, w.App)
		}
	}
	if !named || len(r.Sessions) == 0 {
		t.Errorf("Report: got windows %+v over %d sessions, want kitty named Kitty-Terminal (desktop id kitty)", r.Windows, len(r.Sessions))
	}
}
