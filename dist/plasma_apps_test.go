package dist

import (
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/antidrift/antidrift/internal/testsupport/testenv"
)

// The applet's popup names the window in front, and the windows the time
// went to, by their apps' names (CurrentAppName, BucketApps: the daemon's
// reading of the desktop entries in a test XDG_DATA_HOME), a window
// without a desktop entry by its class, and a hostile name as inert text,
// as a screen reader reads them; photographed (the icons: a theme icon, an
// image file by its absolute path).
func TestPlasmaAppletNamesApps(t *testing.T) {
	testenv.EachRelease(t, testenv.PlasmaReleases, testPlasmaAppletNamesApps)
}

func testPlasmaAppletNamesApps(t *testing.T, rel testenv.Release) {
	r := needPlasma(t, rel)
	bus := testenv.StartBus(t)
	x := testenv.StartX(t)
	runtime := r.TempDir(t)
	a11y := testenv.StartAccessibility(t, bus, runtime)
	data := t.TempDir()
	entries := map[string]string{
		"org.gnu.emacs":  "Name=GNU Emacs\nIcon=utilities-terminal\nStartupWMClass=Emacs\n",
		"org.gimp.GIMP":  "Name=GNU Image Manipulation Program\nIcon=/usr/share/pixmaps/debian-logo.png\nStartupWMClass=Gimp\n",
		"org.ex.Hostile": "Name=<b>Evil</b> &amp; \u202egnp.exe\nIcon=../../etc/passwd\nStartupWMClass=Hostile\n",
	}
	if err := os.MkdirAll(filepath.Join(data, "applications"), 0o755); err != nil {
		t.Fatal(err)
	}
	for id, body := range entries {
		if err := os.WriteFile(filepath.Join(data, "applications", id+".desktop"), []byte("[Desktop Entry]\nType=Application\nExec=/bin/true\n"+body), 0o644); err != nil {
			t.Fatal(err)
		}
	}
	editor := x.XTerm(t, "Emacs", "intro.md")
	gimp := x.XTerm(t, "Gimp", "a picture")
	unlisted := x.XTerm(t, "Unlisted", "no entry")
	hostile := x.XTerm(t, "Hostile", "hostile")
	// Out of the way of the applet's window, which is photographed.
	for _, w := range []uint32{editor, gimp, unlisted, hostile} {
		if _, err := x.Run(t, "xdotool", "windowmove", "--sync", fmt.Sprint(w), "600", "500"); err != nil {
			t.Fatal(err)
		}
	}
	testenv.StartDaemon(t, bus, filepath.Join(t.TempDir(), "state"), "DISPLAY="+x.Name, "XDG_DATA_HOME="+data)
	s := bus.Session(t)
	x.Activate(t, editor)
	testenv.WaitForValue(t, time.Minute, "CurrentAppName", "GNU Emacs", func() string { return s.String(t, "CurrentAppName") })
	s.Call(t, "Start", testenv.Args("write the intro", "it is written", uint64(1500), "observe", []string{"Emacs"}), new(string))

	dir, env := plasmaHome(t, r, bus, runtime, "DISPLAY="+x.Name, "QT_QPA_PLATFORM=xcb")
	installCLI(t, dir)
	applet := startApplet(t, r, dir, env)
	window := roomyWindow(t, x, applet, 480, 320)
	inFront := func(want string) {
		t.Helper()
		a11y.WaitForNode(t, "plasmawindowed", "the popup naming the window in front "+want, showing("label", named("In front: "+want)))
	}
	x.Activate(t, editor)
	inFront("GNU Emacs")
	x.Activate(t, gimp)
	inFront("GNU Image Manipulation Program")
	x.Activate(t, unlisted)
	inFront("Unlisted")
	// Markup as the characters it is, the override as a space.
	x.Activate(t, hostile)
	inFront("<b>Evil</b> &amp;  gnp.exe")

	x.Activate(t, gimp)
	// The buckets as the popup has them (plasmawindowed's popup is never
	// "expanded", so on 6.4+ they are those read at start): the editor's.
	a11y.WaitForNode(t, "plasmawindowed", "the buckets naming GNU Emacs", showing("label", func(s string) bool {
		return strings.HasSuffix(s, "  GNU Emacs · intro.md")
	}))
	photograph(t, x, applet, window, filepath.Join(testenv.ArtifactsDir(t), "plasma-applet-apps.png"), 0, white)
}
