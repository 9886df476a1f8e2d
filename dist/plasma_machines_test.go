package dist

import (
	"os"
	"path/filepath"
	"regexp"
	"slices"
	"testing"
	"time"

	"github.com/antidrift/antidrift/internal/testsupport/statefixture"
	"github.com/antidrift/antidrift/internal/testsupport/testenv"
)

// With sync_dir holding another machine's copy (a laptop's session of
// today, written by its publisher), the applet's popup shows today's total
// across both machines and says it ran on two: the laptop's ten minutes
// and this machine's session, two sessions, as a screen reader reads it, in English and in German;
// photographed.
func TestPlasmaAppletTodayAcrossMachines(t *testing.T) {
	testenv.EachRelease(t, testenv.PlasmaReleases, testPlasmaAppletTodayAcrossMachines)
}

func testPlasmaAppletTodayAcrossMachines(t *testing.T, rel testenv.Release) {
	r := needPlasma(t, rel)
	root := t.TempDir()
	syncDir, cfgHome := filepath.Join(root, "Sync"), filepath.Join(root, "config")
	for _, d := range []string{syncDir, filepath.Join(cfgHome, "antidrift")} {
		if err := os.MkdirAll(d, 0o700); err != nil {
			t.Fatal(err)
		}
	}
	if _, err := statefixture.Machine(filepath.Join(root, "laptop-state"), syncDir, "laptop", false,
		statefixture.TodaySession(time.Now(), "0197a3c4-0000-7000-8000-000000000001", "answer mail on the laptop")); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(filepath.Join(cfgHome, "antidrift", "config.toml"), []byte("sync_dir = \""+syncDir+"\"\ndevice_name = \"desk\"\n"), 0o600); err != nil {
		t.Fatal(err)
	}

	bus := testenv.StartBus(t)
	x := testenv.StartX(t)
	runtime := r.TempDir(t)
	a11y := testenv.StartAccessibility(t, bus, runtime)
	testenv.StartDaemon(t, bus, filepath.Join(root, "state"), "DISPLAY="+x.Name, "XDG_CONFIG_HOME="+cfgHome)
	obj := bus.Dial(t).Object("org.antidrift", "/org/antidrift/Session1")
	var id, hash string
	if err := obj.Call("org.antidrift.Session1.Start", 0, "write the intro on the desk", "it is committed", uint64(600), "observe", []string{}).Store(&id); err != nil {
		t.Fatal(err)
	}
	if err := obj.Call("org.antidrift.Session1.Complete", 0).Err; err != nil {
		t.Fatal(err)
	}
	if err := obj.Call("org.antidrift.Session1.End", 0).Store(&hash); err != nil || hash == "" {
		t.Fatalf("End: %q %v", hash, err)
	}

	dir, env := plasmaHome(t, r, bus, runtime, "DISPLAY="+x.Name, "QT_QPA_PLATFORM=xcb")
	installCLI(t, dir)
	applet := startApplet(t, r, dir, env)
	window := roomyWindow(t, x, applet, 420, 240)
	today := regexp.MustCompile(`^Today on 2 machines: (\d+h )?\d+m focused, 2 sessions$`)
	a11y.WaitForNode(t, "plasmawindowed", "the applet counting both machines' sessions", showing("label", today.MatchString))
	shots := testenv.ArtifactsDir(t)
	photograph(t, x, applet, window, filepath.Join(shots, "plasma-applet-machines.png"), 1, white)
	applet.Stop()

	// In German, from the .plasmoid's catalogue.
	applet = startApplet(t, r, dir, append(slices.Clone(env), testenv.GermanLocale(t)...))
	window = roomyWindow(t, x, applet, 420, 240)
	heute := regexp.MustCompile(`^Heute auf 2 Rechnern: (\d+h )?\d+m konzentriert, 2 Sitzungen$`)
	a11y.WaitForNode(t, "plasmawindowed", "the applet counting both machines' sessions in German", showing("label", heute.MatchString))
	photograph(t, x, applet, window, filepath.Join(shots, "plasma-applet-machines-de.png"), 1, white)
}
