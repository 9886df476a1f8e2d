package main

import (
	"os"
	"path/filepath"
	"regexp"
	"testing"

	"github.com/antidrift/antidrift/internal/testsupport/testenv"
)

// With sync_dir holding another machine's copy (a laptop's session of
// today, written by its publisher), the indicator's menu on this machine
// shows today's total across both and says it ran on two machines: the
// laptop's ten minutes and this machine's session, two sessions; in English
// and in German. Photographed.
func TestGnomeIndicatorTodayAcrossMachines(t *testing.T) {
	testenv.EachRelease(t, testenv.GnomeReleases, testGnomeIndicatorTodayAcrossMachines)
}

func testGnomeIndicatorTodayAcrossMachines(t *testing.T, rel testenv.Release) {
	k := startGnomeDesktop(t, rel)
	g := k.g
	syncDir := filepath.Join(filepath.Dir(k.stateDir), "Sync")
	if err := os.Mkdir(syncDir, 0o700); err != nil {
		t.Fatal(err)
	}
	otherMachine(t, t.TempDir(), syncDir)
	// The daemon runs as the Shell's user, and writes its own folder beside the laptop's.
	if err := filepath.Walk(syncDir, func(p string, _ os.FileInfo, err error) error {
		if err != nil {
			return err
		}
		return os.Lchown(p, testenv.ShellUID, testenv.ShellUID)
	}); err != nil {
		t.Fatal(err)
	}
	k.startDaemon(t, "evidence = \"gnome-shell\"\nsync_dir = \""+syncDir+"\"\ndevice_name = \"desk\"\n")
	icon := func() string { return g.EvalString(t, indicator+"?._icon.icon_name ?? ''") }
	todayText := func() string {
		return g.EvalString(t, indicator+"._today.visible ? "+indicator+"._today.label.text : ''")
	}
	testenv.WaitForValue(t, wait, "the indicator's icon", "changes-prevent-symbolic", icon)
	for _, c := range [][]string{
		{"org.antidrift.Session1.Start", "write the intro on the desk", "it is committed", "uint64 600", "observe", "@as []"},
		{"org.antidrift.Session1.Complete"}, {"org.antidrift.Session1.End"},
	} {
		if out, err := k.gdbus(t, c[0], c[1:]...); err != nil {
			t.Fatalf("%s: %v %s", c[0], err, out)
		}
	}
	gnomeWaitProp(t, k, "State", "locked")
	mustEval(t, g, indicator+".menu.open()")
	today := regexp.MustCompile(`^Today on 2 machines: (\d+h )?\d+m focused, 2 sessions$`)
	testenv.WaitFor(t, wait, "the menu to count both machines' sessions ("+today.String()+")", todayText, today.MatchString)
	quietTray(t, g)
	shots := testenv.ArtifactsDir(t)
	menuShot(t, g, filepath.Join(shots, "gnome-menu-machines.png"))
	mustEval(t, g, indicator+".menu.close()")

	// In German: the Shell started again in a German locale.
	g.Stop()
	g.ExtraEnv = testenv.GermanLocale(t)
	g.Start(t)
	testenv.WaitForValue(t, wait, "the indicator's icon in German", "changes-prevent-symbolic", icon)
	mustEval(t, g, indicator+".menu.open()")
	heute := regexp.MustCompile(`^Heute auf 2 Rechnern: (\d+h )?\d+m konzentriert, 2 Sitzungen$`)
	testenv.WaitFor(t, wait, "the menu to count both machines' sessions in German ("+heute.String()+")", todayText, heute.MatchString)
	quietTray(t, g)
	menuShot(t, g, filepath.Join(shots, "gnome-menu-machines-de.png"))
}
