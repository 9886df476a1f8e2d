package dist

import (
	"bytes"
	"fmt"
	"math"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"slices"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/antidrift/antidrift/internal/testsupport/testenv"
)

func TestMain(m *testing.M) { os.Exit(testenv.Main(m)) }

// waitChangeDigests are the digests the panels of the person whose home
// is home hold while following the daemon through `antidrift status
// --wait-change`, read from their command lines (other tests' panels, with
// other homes, are not counted).
func waitChangeDigests(home string) []string {
	var out []string
	pids, _ := filepath.Glob("/proc/[0-9]*/cmdline")
	for _, p := range pids {
		raw, err := os.ReadFile(p)
		if err != nil {
			continue
		}
		env, err := os.ReadFile(filepath.Join(filepath.Dir(p), "environ"))
		if err != nil || !slices.Contains(strings.Split(string(env), "\x00"), "HOME="+home) {
			continue
		}
		args := strings.Split(strings.TrimRight(string(raw), "\x00"), "\x00")
		for i, a := range args {
			if a == "--wait-change" && i+1 < len(args) && strings.HasSuffix(args[0], "antidrift") {
				out = append(out, args[i+1])
			}
		}
	}
	return out
}

// heldDigests is the daemon's status digest and the digests the applet's
// followers hold, as a failure to follow shows them.
type heldDigests struct {
	status string
	held   []string
}

// following is how many followers hold the status's digest.
func (h heldDigests) following() int {
	n := 0
	for _, d := range h.held {
		if d == h.status {
			n++
		}
	}
	return n
}

func (h heldDigests) String() string {
	return fmt.Sprintf("the status's digest %s, followers holding %q", h.status, h.held)
}

// qmlErrors are the lines of a Plasma log that say a QML file failed.
var qmlErrors = regexp.MustCompile(`(?m)^.*(\.qml:\d+|\.mjs:\d+|TypeError|ReferenceError|SyntaxError|is not installed|module .* not found).*$`)

// followsByCommand says whether the applet on rel follows the daemon the
// Plasma 6.3 way, through `antidrift status --wait-change` in
// plasma5support's executable engine, rather than with Plasma's own
// DBus.Properties (6.4 and later).
func followsByCommand(rel testenv.Release) bool { return rel.Version == "6.3" }

// plasma5support is where Plasma's Plasma 5 compatibility QML module lives.
const plasma5support = "/usr/lib/x86_64-linux-gnu/qt6/qml/org/kde/plasma/plasma5support"

// needPlasma is rel's rootfs, checked to have rel's Plasma; on 6.4 and
// later, checked to lack plasma5support, as plasma-workspace alone has it
// (so the applet must do without).
func needPlasma(t *testing.T, rel testenv.Release) *testenv.Rootfs {
	t.Helper()
	r := testenv.NeedSuiteRootfs(t, rel.Suite)
	testenv.CheckRelease(t, r, rel)
	if _, err := os.Stat(filepath.Join(r.Dir, plasma5support)); !followsByCommand(rel) && err == nil {
		t.Fatalf("the %s rootfs: got plasma5support, want none (plasma-workspace %s does not bring it)", rel.Suite, rel.Version)
	}
	return r
}

// The Plasma 6 applet on each Plasma, run by plasmawindowed on a real
// KWin 6 next to the real daemon: it loads without a QML error, follows the
// daemon (a session started over the bus reaches it; on 6.3 through the
// command, on 6.4 and later with no command running), and is photographed
// as installed, in Breeze Dark (a dark window, its text readable on it)
// and in German (its translation read from the .plasmoid's catalogue); its
// buttons work, and what they change is drawn.
func TestPlasmaApplet(t *testing.T) {
	testenv.EachRelease(t, testenv.PlasmaReleases, testPlasmaApplet)
}

func testPlasmaApplet(t *testing.T, rel testenv.Release) {
	r := needPlasma(t, rel)
	de := testenv.GermanLocale(t)
	bus := testenv.StartBus(t)
	k := testenv.StartKWin(t, r, bus)
	testenv.StartDaemon(t, bus, filepath.Join(t.TempDir(), "state"),
		"WAYLAND_DISPLAY="+k.Socket, "XDG_RUNTIME_DIR="+k.RuntimeDir)

	dir, env := plasmaHome(t, r, bus, k.RuntimeDir, "WAYLAND_DISPLAY="+k.Socket, "QT_QPA_PLATFORM=wayland")
	// The CLI where make install-user puts it, ~/.local/bin, which is not
	// on plasmashell's PATH: the applet looks there itself.
	installCLI(t, dir)
	applet := startApplet(t, r, dir, env)
	testenv.WaitFor(t, time.Minute, "plasmawindowed's window among KWin's", func() []string {
		if applet.Exited() {
			t.Fatalf("plasmawindowed exited\n%s", applet.Output())
		}
		var apps []string
		for _, w := range k.Windows(t) {
			apps = append(apps, w.AppID)
		}
		return apps
	}, func(apps []string) bool {
		return slices.ContainsFunc(apps, func(a string) bool { return strings.Contains(a, "plasmawindowed") })
	})

	// The applet follows the daemon: the digest it waits on is the
	// status's, before and after a session starts over the bus.
	// Followers of the daemon hold the current status's digest.
	follows := func(what string, followers int) {
		t.Helper()
		if !followsByCommand(rel) {
			if d := waitChangeDigests(dir); len(d) > 0 {
				t.Fatalf("on Plasma %s the applet follows: got antidrift status --wait-change %v, want DBus.Properties", rel.Version, d)
			}
			return
		}
		testenv.WaitFor(t, time.Minute, fmt.Sprintf("the applet to hold the %s status (%d following)", what, followers), func() heldDigests {
			return heldDigests{status: statusDigest(t, bus), held: waitChangeDigests(dir)}
		}, func(h heldDigests) bool {
			return h.following() == followers
		})
	}
	follows("locked", 1)
	k.Window(t, "org.kde.kate", "intro.md — Kate") // on task: the session allows it
	s := bus.Session(t)
	var id string
	s.Call(t, "Start", testenv.Args("write the intro", "the intro is committed", uint64(1500), "block", []string{"org.kde.kate", "org.kde.konsole"}), &id)
	follows("active", 1)
	if bad := qmlErrors.FindAllString(applet.Output(), -1); len(bad) > 0 {
		t.Fatalf("the applet's log: got QML errors:\n%s\nwant none", strings.Join(bad, "\n"))
	}

	// Headless KWin has no OpenGL here, which its screenshots need: the
	// same applet is photographed on Xvfb, where it runs as an X client,
	// three times: as installed, in Breeze Dark and in German.
	// (plasmawindowed is one instance per bus, so each one goes before
	// the next.)
	applet.Stop()
	x := testenv.StartX(t)
	shots := testenv.ArtifactsDir(t) // one directory for every shot (unset, a fresh temp dir per call)
	show := func(name string, env []string, button func(r, g, b uint32) bool) (*testenv.Process, uint64, []int) {
		t.Helper()
		p := startApplet(t, r, dir, append(env, "QT_QPA_PLATFORM=xcb", "DISPLAY="+x.Name))
		follows("active", 1)
		window := appletWindow(t, x, p, 400) // as large as it was on KWin
		return p, window, photograph(t, x, p, window, filepath.Join(shots, name), 4, button)
	}

	// The German catalogue as installed; the applet opens it in German
	// only (so the check below can fail).
	catalogue := filepath.Join(dir, "data", "plasma", "plasmoids", "org.antidrift.panel", "contents", "locale", "de", "LC_MESSAGES", "plasma_applet_org.antidrift.panel.mo")
	var window uint64
	onX, _, row := show("plasma-applet.png", env, white)
	checkContrast(t, filepath.Join(shots, "plasma-applet.png"), row, false)
	if mapped(catalogue) {
		t.Fatalf("the applet in English: got the German catalogue %s open, want it not open", catalogue)
	}
	onX.Stop()

	// Breeze Dark, chosen as System Settings chooses it: the colour
	// scheme applied to the person's kdeglobals (and Breeze Light again
	// after). The applet keeps its window's size in the same
	// configuration, so it opens as large as before.
	scheme := func(name string) {
		t.Helper()
		if out, err := r.Run(0, env, time.Minute, "plasma-apply-colorscheme", name); err != nil {
			t.Fatalf("plasma-apply-colorscheme %s: %v\n%s", name, err, out)
		}
	}
	scheme("BreezeDark")
	onX, _, row = show("plasma-applet-dark.png", env, darkButton)
	checkContrast(t, filepath.Join(shots, "plasma-applet-dark.png"), row, true)
	onX.Stop()
	scheme("BreezeLight")

	// In German, from the translation the .plasmoid carries: its
	// catalogue is what the applet reads its strings from.
	german := append(slices.Clone(env), de...)
	onX, window, row = show("plasma-applet-de.png", german, white)
	if !mapped(catalogue) {
		t.Fatalf("the German catalogue %s: got no process with it open, want the applet to open it", catalogue)
	}

	// Its buttons call the daemon, as a click does: +10 min (Extend, a
	// typed argument), then Complete. Where each is: from the picture's
	// layout, found by the text the applet draws in the first row of
	// buttons (they sit below the text, left to right).
	click := func(x0, y0 int) {
		t.Helper()
		if _, err := x.Run(t, "xdotool", "mousemove", "--window", strconv.FormatUint(window, 10), strconv.Itoa(x0), strconv.Itoa(y0), "click", "1"); err != nil {
			t.Fatal(err)
		}
	}
	click(row[2], row[len(row)-1]) // the third button: +10 min
	// +10 min extends the session's 1500 s by 600.
	testenv.WaitForProp(t, time.Minute, s, "TimeboxSeconds", uint64(2100))
	click(row[0], row[len(row)-1]) // the first: Complete
	testenv.WaitForProp(t, time.Minute, s, "State", "review")
	// The applet follows: in place of the active session's four enabled
	// steps it draws the review's one (End & seal; +10 min is shown, but
	// not permitted now, so not drawn as a button one can press).
	review := filepath.Join(shots, "plasma-applet-review.png")
	testenv.WaitForValue(t, time.Minute, "the enabled buttons the applet draws for the review", 1, func() int {
		x.Screenshot(t, review, uint32(window))
		return max(0, len(buttonRow(t, review, 1, white))-1)
	})
	if bad := qmlErrors.FindAllString(onX.Output(), -1); len(bad) > 0 {
		t.Fatalf("the applet's log: got QML errors:\n%s\nwant none", strings.Join(bad, "\n"))
	}

}

// startApplet runs the applet installed in dir (by plasmaHome) in
// plasmawindowed with env; its output is logged if the test fails.
func startApplet(t *testing.T, r *testenv.Rootfs, dir string, env []string) *testenv.Process {
	t.Helper()
	p := r.Start(t, dir, 0, env, "plasmawindowed", "org.antidrift.panel")
	t.Cleanup(func() {
		if t.Failed() {
			t.Logf("plasmawindowed:\n%s", p.Output())
		}
	})
	return p
}

// appletWindow waits for the applet p's window on x to be minWidth wide
// and returns it. In a window of its own it maps as small as in a panel,
// then grows to the size its configuration keeps; at 200 it shows its full
// form.
func appletWindow(t *testing.T, x *testenv.Display, p *testenv.Process, minWidth int) uint64 {
	t.Helper()
	var window uint64
	testenv.WaitFor(t, time.Minute, fmt.Sprintf("the applet's window on X to be at least %d wide", minWidth), func() int {
		if p.Exited() {
			t.Fatalf("plasmawindowed on X exited\n%s", p.Output())
		}
		out, err := x.Run(t, "xdotool", "search", "--onlyvisible", "--class", "plasmawindowed")
		fields := strings.Fields(out)
		if err != nil || len(fields) == 0 {
			return 0
		}
		if window, err = strconv.ParseUint(fields[0], 10, 32); err != nil {
			return 0
		}
		geo, err := x.Run(t, "xdotool", "getwindowgeometry", "--shell", fields[0])
		m := regexp.MustCompile(`WIDTH=(\d+)`).FindStringSubmatch(geo)
		width := 0
		if err == nil && m != nil {
			width, _ = strconv.Atoi(m[1])
		}
		return width
	}, func(width int) bool { return width >= minWidth })
	return window
}

// photograph saves the applet's window to shot once it has drawn a row of
// so many buttons (it paints a moment after it grows), and returns where
// it is (see buttonRow). The applet must have logged no QML error.
func photograph(t *testing.T, x *testenv.Display, p *testenv.Process, window uint64, shot string, buttons int, button func(r, g, b uint32) bool) []int {
	t.Helper()
	var row []int
	testenv.WaitUntil(t, time.Minute, fmt.Sprintf("the applet to draw a row of %d buttons", buttons), func() bool {
		x.Screenshot(t, shot, uint32(window))
		row = buttonRow(t, shot, buttons, button)
		return row != nil
	})
	t.Logf("screenshot: %s", shot)
	if bad := qmlErrors.FindAllString(p.Output(), -1); len(bad) > 0 {
		t.Fatalf("the applet's log: got QML errors:\n%s\nwant none", strings.Join(bad, "\n"))
	}
	return row
}

// Breeze draws buttons white on the light window's grey, and (41,44,48)
// on the dark one's (32,35,38), as BreezeDark.colors says.
func white(r, g, b uint32) bool      { return r >= 250 && g >= 250 && b >= 250 }
func darkButton(r, g, b uint32) bool { return near(r, 41) && near(g, 44) && near(b, 48) }

// plasmaHome makes a home for a person of a Plasma session on bus with
// runtimeDir, with the applet installed as a person installs it from the
// KDE Store: the .plasmoid make package-panels packs, with kpackagetool6.
// It returns the home and the environment the applet runs in there, which
// display (e.g. WAYLAND_DISPLAY=..., QT_QPA_PLATFORM=wayland) completes.
func plasmaHome(t *testing.T, r *testenv.Rootfs, bus *testenv.Bus, runtimeDir string, display ...string) (string, []string) {
	t.Helper()
	dir, env := plasmaSession(t, r, bus, runtimeDir, display...)
	pkgs := r.TempDir(t)
	if b, err := exec.Command("make", "-s", "-C", "..", "package-panels", "BUILDDIR="+pkgs).CombinedOutput(); err != nil {
		t.Fatalf("make package-panels: %v\n%s", err, b)
	}
	if out, err := r.Run(0, env, time.Minute, "kpackagetool6", "--type", "Plasma/Applet", "--install", filepath.Join(pkgs, "org.antidrift.panel.plasmoid")); err != nil {
		t.Fatalf("kpackagetool6 --install: %v\n%s", err, out)
	}
	return dir, env
}

// plasmaHomeAsPackaged is plasmaHome with the applet where the .deb puts
// it: what make install PREFIX=/usr installs (debian/rules installs with
// it), under a data directory of the session's XDG_DATA_DIRS, as
// /usr/share is.
func plasmaHomeAsPackaged(t *testing.T, r *testenv.Rootfs, bus *testenv.Bus, runtimeDir string, display ...string) (string, []string) {
	t.Helper()
	dir, env := plasmaSession(t, r, bus, runtimeDir, display...)
	stage, build := r.TempDir(t), t.TempDir()
	if b, err := exec.Command("make", "-s", "-C", "..", "install", "PREFIX=/usr", "DESTDIR="+stage, "BUILDDIR="+build).CombinedOutput(); err != nil {
		t.Fatalf("make install: %v\n%s", err, b)
	}
	if _, err := os.Stat(filepath.Join(stage, "usr", "share", "plasma", "plasmoids", "org.antidrift.panel", "metadata.json")); err != nil {
		t.Fatalf("make install put no applet under /usr/share/plasma/plasmoids: %v", err)
	}
	return dir, append(env, "XDG_DATA_DIRS="+filepath.Join(stage, "usr", "share")+":/usr/local/share:/usr/share")
}

// plasmaSession makes the home and environment plasmaHome installs into.
func plasmaSession(t *testing.T, r *testenv.Rootfs, bus *testenv.Bus, runtimeDir string, display ...string) (string, []string) {
	t.Helper()
	dir := r.TempDir(t)
	env := append([]string{"HOME=" + dir, "XDG_DATA_HOME=" + filepath.Join(dir, "data"), "XDG_CONFIG_HOME=" + filepath.Join(dir, "config"),
		"XDG_RUNTIME_DIR=" + runtimeDir, "DBUS_SESSION_BUS_ADDRESS=" + bus.Address,
		"QT_QUICK_BACKEND=software", "LANG=C.UTF-8",
		"XDG_CURRENT_DESKTOP=KDE", "QT_QPA_PLATFORMTHEME=kde", // Plasma's look: Breeze, its icons
		"PATH=/usr/bin:/bin"}, display...)
	// A Plasma session's icon theme, as kdeglobals says it.
	if err := os.MkdirAll(filepath.Join(dir, "config"), 0o755); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(filepath.Join(dir, "config", "kdeglobals"), []byte("[Icons]\nTheme=breeze\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	return dir, env
}

// installCLI puts the antidrift CLI where make install-user puts it:
// ~/.local/bin of the home dir.
func installCLI(t *testing.T, dir string) {
	t.Helper()
	bin := filepath.Join(dir, ".local", "bin")
	if err := os.MkdirAll(bin, 0o755); err != nil {
		t.Fatal(err)
	}
	cli, err := os.ReadFile(testenv.Binary(t, "antidrift"))
	if err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(filepath.Join(bin, "antidrift"), cli, 0o755); err != nil {
		t.Fatal(err)
	}
}

// statusDigest is what `antidrift status --wait-change` calls the daemon's
// status now.
func statusDigest(t *testing.T, bus *testenv.Bus) string {
	t.Helper()
	c := exec.Command(testenv.Binary(t, "antidrift"), "status", "--json", "--wait-change", "none")
	c.Env = bus.Env()
	out, err := c.Output()
	if err != nil {
		t.Fatalf("antidrift status: %v", err)
	}
	m := regexp.MustCompile(`"digest":"([0-9a-f]+)"`).FindSubmatch(out)
	if m == nil {
		t.Fatalf("antidrift status --json: got %s, want a \"digest\"", bytes.TrimSpace(out))
	}
	return string(m[1])
}

// buttonRow finds the applet's row of buttons in its screenshot: the first
// line of pixels crossing at least so many runs of button pixels (Breeze draws
// buttons in a colour of their own on the window's). It returns the runs'
// centres, then the line's y; nil when there is no such line yet.
func buttonRow(t *testing.T, path string, buttons int, button func(r, g, b uint32) bool) []int {
	t.Helper()
	img := testenv.DecodePNG(t, path)
	b := img.Bounds()
	on := func(x, y int) bool {
		r, g, bl, _ := img.At(x, y).RGBA()
		return button(r>>8, g>>8, bl>>8)
	}
	for y := b.Min.Y; y < b.Max.Y; y++ {
		var centres []int
		for x := b.Min.X; x < b.Max.X; {
			if !on(x, y) {
				x++
				continue
			}
			start := x
			for x < b.Max.X && on(x, y) {
				x++
			}
			if x-start >= 30 {
				centres = append(centres, (start+x)/2)
			}
		}
		if len(centres) >= buttons {
			return append(centres, y)
		}
	}
	return nil
}

// near says whether a colour channel is within 3 of want.
func near(v, want uint32) bool { return v+3 >= want && v <= want+3 }

// checkContrast checks what a person reads in a screenshot of the applet:
// its window's background (the picture's most common colour) is dark or
// light as asked, and its text (the most common other colour in the lines
// just above the buttons, at row's last entry) stands out from it by the
// WCAG contrast ratio of at least 4.5:1 (AA).
func checkContrast(t *testing.T, path string, row []int, dark bool) {
	t.Helper()
	img := testenv.DecodePNG(t, path)
	b := img.Bounds()
	type rgb struct{ r, g, b uint32 }
	at := func(x, y int) rgb {
		r, g, bl, _ := img.At(x, y).RGBA()
		return rgb{r >> 8, g >> 8, bl >> 8}
	}
	common := func(y0, y1 int, skip *rgb) rgb {
		n := map[rgb]int{}
		var best rgb
		for y := max(y0, b.Min.Y); y < min(y1, b.Max.Y); y++ {
			for x := b.Min.X; x < b.Max.X; x++ {
				c := at(x, y)
				if skip != nil && c == *skip {
					continue
				}
				if n[c]++; n[c] > n[best] {
					best = c
				}
			}
		}
		return best
	}
	lum := func(c rgb) float64 {
		ch := func(v uint32) float64 {
			f := float64(v) / 255
			if f <= 0.03928 {
				return f / 12.92
			}
			return math.Pow((f+0.055)/1.055, 2.4)
		}
		return 0.2126*ch(c.r) + 0.7152*ch(c.g) + 0.0722*ch(c.b)
	}
	y := row[len(row)-1]
	bg := common(b.Min.Y, b.Max.Y, nil)
	fg := common(y-80, y-5, &bg)
	lb, lf := lum(bg), lum(fg)
	if dark && lb > 0.1 || !dark && lb < 0.5 {
		t.Errorf("%s: background %v has luminance %.2f; want it %s", path, bg, lb, map[bool]string{true: "dark (at most 0.1)", false: "light (at least 0.5)"}[dark])
	}
	ratio := (max(lb, lf) + 0.05) / (min(lb, lf) + 0.05)
	if ratio < 4.5 {
		t.Errorf("%s: text %v on background %v: contrast %.2f:1, want at least 4.5:1", path, fg, bg, ratio)
	}
	t.Logf("%s: text %v on background %v (luminance %.2f): contrast %.1f:1", filepath.Base(path), fg, bg, lb, ratio)
}

// mapped says whether some process has file mapped (gettext maps the
// catalogues it reads translations from).
func mapped(file string) bool {
	maps, _ := filepath.Glob("/proc/[0-9]*/maps")
	for _, m := range maps {
		b, err := os.ReadFile(m)
		if err == nil && bytes.Contains(b, []byte(file)) {
			return true
		}
	}
	return false
}
