package dist

import (
	"fmt"
	"path/filepath"
	"regexp"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/antidrift/antidrift/internal/testsupport/testenv"
)

// The applet in these tests runs on Xvfb as an X client with a screen
// reader on: the accessibility bus (at-spi2-core) is up and says so, as
// Orca makes it say, and the tests read the applet as Orca reads it.

// roomyWindow finds the applet's window on x and gives it the room (width
// by height) its popup has in a panel, which is sized to what it shows
// (plasmawindowed opens it as small as the panel's switch width).
func roomyWindow(t *testing.T, x *testenv.Display, applet *testenv.Process, width, height int) uint64 {
	t.Helper()
	window := appletWindow(t, x, applet, 200)
	if _, err := x.Run(t, "xdotool", "windowsize", "--sync", fmt.Sprint(window), fmt.Sprint(width), fmt.Sprint(height)); err != nil {
		t.Fatal(err)
	}
	// Painted at its new size: the window's background, not the white of
	// nothing drawn yet, reaches its far corner.
	shot := filepath.Join(t.TempDir(), "resized.png")
	testenv.WaitFor(t, time.Minute, fmt.Sprintf("the applet to paint its window at its new size (%d wide, its far corner not white)", width), func() painted {
		x.Screenshot(t, shot, uint32(window))
		img := testenv.DecodePNG(t, shot)
		r, g, b, _ := img.At(img.Bounds().Max.X-1, img.Bounds().Max.Y-1).RGBA()
		return painted{width: img.Bounds().Dx(), corner: [3]uint32{r >> 8, g >> 8, b >> 8}}
	}, func(p painted) bool { return p.width == width && !white(p.corner[0], p.corner[1], p.corner[2]) })
	return window
}

// painted is a screenshot's width and the colour of its far corner.
type painted struct {
	width  int
	corner [3]uint32
}

func (p painted) String() string { return fmt.Sprintf("%d wide, far corner %v", p.width, p.corner) }

// showing picks what a screen reader's review of the window reaches: nodes
// that are showing, whose role is role.
func showing(role string, name func(string) bool) func(*testenv.Node) bool {
	return func(n *testenv.Node) bool { return n.Role == role && n.Has("showing") && name(n.Name) }
}

func named(want string) func(string) bool { return func(s string) bool { return s == want } }

// rawBusError is a D-Bus error as the bus words it, which is not for people.
var rawBusError = regexp.MustCompile(`org\.(freedesktop|antidrift)\.|\.service files`)

// On Plasma 6.3, where no antidrift command is to be found (not on PATH,
// not in ~/.local/bin, /usr/local/bin or /usr/bin), the applet says so, in
// words a screen reader reads out and nothing in the bus's words;
// photographed. Installed where make install-user puts it and looked for
// again (its "Look again" button, pressed as a screen reader presses it),
// it follows the daemon. On 6.4 and later the applet needs no command: with
// none anywhere it says antidrift is not running, and follows the daemon
// as soon as it starts.
func TestPlasmaAppletSaysWhenAntidriftIsMissing(t *testing.T) {
	testenv.EachRelease(t, testenv.PlasmaReleases, testPlasmaAppletSaysWhenAntidriftIsMissing)
}

func testPlasmaAppletSaysWhenAntidriftIsMissing(t *testing.T, rel testenv.Release) {
	r := needPlasma(t, rel)
	bus := testenv.StartBus(t)
	x := testenv.StartX(t)
	runtime := r.TempDir(t)
	a11y := testenv.StartAccessibility(t, bus, runtime)
	dir, env := plasmaHome(t, r, bus, runtime, "DISPLAY="+x.Name, "QT_QPA_PLATFORM=xcb")
	applet := startApplet(t, r, dir, env)
	if !followsByCommand(rel) {
		a11y.WaitForNode(t, "plasmawindowed", "the applet saying antidrift is not running",
			showing("heading", named("antidrift is not running")))
		photograph(t, x, applet, roomyWindow(t, x, applet, 440, 140), filepath.Join(testenv.ArtifactsDir(t), "plasma-applet-not-running.png"), 0, white)
		tree := a11y.Application(t, "plasmawindowed")
		for _, n := range tree.Find(func(n *testenv.Node) bool { return n.Has("showing") && rawBusError.MatchString(n.Name) }) {
			t.Errorf("the applet: got the bus's words %s %q, want its own", n.Role, n.Name)
		}
		testenv.StartDaemon(t, bus, filepath.Join(t.TempDir(), "state"), "DISPLAY="+x.Name)
		a11y.WaitForNode(t, "plasmawindowed", "the applet following the daemon by itself (a session can be started)",
			showing("push button", named("Start a session…")))
		if d := waitChangeDigests(dir); len(d) > 0 {
			t.Fatalf("on Plasma %s the applet: got antidrift status --wait-change %v, want DBus.Properties only", rel.Version, d)
		}
		return
	}

	_, tree := a11y.WaitForNode(t, "plasmawindowed", "the applet saying antidrift is not installed",
		showing("heading", func(s string) bool { return strings.Contains(s, "antidrift command was not found") }))
	if len(tree.Find(showing("label", func(s string) bool { return strings.Contains(s, "make install-user") }))) == 0 {
		t.Errorf("the applet: got\n%s\nwant a label saying how to install antidrift (make install-user)", tree)
	}
	photograph(t, x, applet, roomyWindow(t, x, applet, 440, 140), filepath.Join(testenv.ArtifactsDir(t), "plasma-applet-not-installed.png"), 1, white)
	// Read again once it has painted, so the calls it made on opening (to
	// a daemon that is not there) have come back.
	tree = a11y.Application(t, "plasmawindowed")
	for _, n := range tree.Find(func(n *testenv.Node) bool { return n.Has("showing") && rawBusError.MatchString(n.Name) }) {
		t.Errorf("the applet: got the bus's words %s %q, want its own", n.Role, n.Name)
	}

	installCLI(t, dir)
	testenv.StartDaemon(t, bus, filepath.Join(t.TempDir(), "state"), "DISPLAY="+x.Name)
	again, _ := a11y.WaitForNode(t, "plasmawindowed", "Look again", showing("push button", named("Look again")))
	a11y.Press(t, again)
	a11y.WaitForNode(t, "plasmawindowed", "the applet following the daemon (a session can be started)",
		showing("push button", named("Start a session…")))
	testenv.WaitFor(t, time.Minute, "the applet to wait on the daemon's status", func() heldDigests {
		return heldDigests{status: statusDigest(t, bus), held: waitChangeDigests(dir)}
	}, func(h heldDigests) bool { return h.following() > 0 })
}

// controlRoles are the AT-SPI roles of the controls a person operates.
var controlRoles = []string{"push button", "text", "combo box", "check box", "spin button", "toggle button", "radio button", "password text", "slider"}

// controls lists the controls a screen reader reaches in tree: showing,
// of a control role, or a progress bar. What a combo box holds (the text
// typed into it, the list) is the combo box's own: focused through it.
func controls(tree *testenv.Node) []*testenv.Node {
	var out []*testenv.Node
	var walk func(*testenv.Node)
	walk = func(n *testenv.Node) {
		if !n.Has("showing") {
			return
		}
		if slices.Contains(controlRoles, n.Role) || n.Role == "progress bar" {
			out = append(out, n)
		}
		if n.Role == "combo box" {
			return
		}
		for _, c := range n.Children {
			walk(c)
		}
	}
	walk(tree)
	return out
}

// checkReadable fails for every control a screen reader reaches in tree
// that has no name, and for every enabled one the keyboard cannot focus
// (a progress bar only needs its name).
func checkReadable(t *testing.T, what string, tree *testenv.Node) {
	t.Helper()
	for _, n := range controls(tree) {
		switch {
		case n.Name == "":
			t.Errorf("%s: got a %s without a name, want one", what, n.Role)
		case n.Role != "progress bar" && n.Has("enabled") && !n.Has("focusable"):
			t.Errorf("%s: got the %s %q not focusable, want it focusable", what, n.Role, n.Name)
		}
	}
	if t.Failed() {
		t.Logf("%s:\n%s", what, tree)
	}
}

// tabOrder presses Tab in the applet's window until the focus comes back
// round and returns the names of the controls it went through, in order.
func tabOrder(t *testing.T, a11y *testenv.Accessibility, x *testenv.Display, window uint64) []string {
	t.Helper()
	focused := func() string {
		tree := a11y.Application(t, "plasmawindowed")
		if tree == nil {
			return ""
		}
		if f := tree.Find(func(n *testenv.Node) bool { return n.Has("focused") && slices.Contains(controlRoles, n.Role) }); len(f) > 0 {
			return f[0].Role + " " + f[0].Name
		}
		return ""
	}
	var order []string
	for range 30 {
		before := focused()
		if _, err := x.Run(t, "xdotool", "key", "--window", fmt.Sprint(window), "Tab"); err != nil {
			t.Fatal(err)
		}
		now := testenv.WaitFor(t, 10*time.Second, fmt.Sprintf("Tab to move the focus on from %q", before), focused, func(now string) bool {
			return now != "" && now != before
		})
		if slices.Contains(order, now) {
			return order
		}
		order = append(order, now)
	}
	t.Fatalf("Tab order: got %q, never back where it began, want it to come round", order)
	return nil
}

// A person who uses a screen reader and the keyboard, with the applet as
// the .deb installs it: every control of the applet they reach has a name and takes the keyboard focus, Tab goes
// through each of them, and they start a session (the start form filled in
// and sent through the accessibility bus) and abandon it with a reason, as
// Orca lets them.
func TestPlasmaAppletWithAScreenReader(t *testing.T) {
	testenv.EachRelease(t, testenv.PlasmaReleases, testPlasmaAppletWithAScreenReader)
}

func testPlasmaAppletWithAScreenReader(t *testing.T, rel testenv.Release) {
	r := needPlasma(t, rel)
	bus := testenv.StartBus(t)
	x := testenv.StartX(t)
	runtime := r.TempDir(t)
	a11y := testenv.StartAccessibility(t, bus, runtime)
	testenv.StartDaemon(t, bus, filepath.Join(t.TempDir(), "state"), "DISPLAY="+x.Name)
	// Installed where the .deb puts it (the other applet tests install the
	// .plasmoid).
	dir, env := plasmaHomeAsPackaged(t, r, bus, runtime, "DISPLAY="+x.Name, "QT_QPA_PLATFORM=xcb")
	installCLI(t, dir)
	applet := startApplet(t, r, dir, env)
	window := roomyWindow(t, x, applet, 440, 720)

	start, tree := a11y.WaitForNode(t, "plasmawindowed", "Start a session…", showing("push button", named("Start a session…")))
	checkReadable(t, "no session", tree)
	a11y.Press(t, start)
	next, tree := a11y.WaitForNode(t, "plasmawindowed", "the start form", showing("text", named("Next action")))
	checkReadable(t, "the start form", tree)
	order := tabOrder(t, a11y, x, window)
	for _, n := range controls(tree) {
		if n.Role != "progress bar" && n.Has("enabled") && !slices.Contains(order, n.Role+" "+n.Name) {
			t.Errorf("Tab order: got %q, want it to reach the %s %q", order, n.Role, n.Name)
		}
	}

	a11y.Type(t, next, "write the intro")
	done := tree.Find(showing("text", named("Done when")))
	apps := tree.Find(showing("text", named("Allowed apps")))
	send := tree.Find(showing("push button", named("Start")))
	if len(done) == 0 || len(apps) == 0 || len(send) == 0 {
		t.Fatalf("the start form: got\n%s\nwant Done when, Allowed apps and Start", tree)
	}
	a11y.Type(t, done[0], "the intro is committed")
	a11y.Type(t, apps[0], "xterm")
	// Do Not Disturb: unchecked as the daemon's Quiet says (no quiet in
	// its config); checked here, the session it starts is quiet.
	quiet := tree.Find(showing("check box", named("Do Not Disturb while the session runs")))
	if len(quiet) == 0 {
		t.Fatalf("the start form: got\n%s\nwant a Do Not Disturb check box", tree)
	}
	a11y.Press(t, quiet[0])
	a11y.Press(t, send[0])
	s := bus.Session(t)
	testenv.WaitForProp(t, time.Minute, s, "State", "active") // the session the form started
	if !s.Bool(t, "Quiet") {
		t.Error("Quiet of the session started with Do Not Disturb checked: got false, want true")
	}
	if got, want := s.String(t, "NextAction"), "write the intro"; !strings.Contains(got, want) {
		t.Errorf("the session's next action: got %q, want what was typed, %q", got, want)
	}

	abandon, tree := a11y.WaitForNode(t, "plasmawindowed", "Abandon… in the session", showing("push button", named("Abandon…")))
	checkReadable(t, "an active session", tree)
	a11y.Press(t, abandon)
	reason, tree := a11y.WaitForNode(t, "plasmawindowed", "the reason field", showing("text", named("Reason")))
	checkReadable(t, "asking why", tree)
	a11y.Type(t, reason, "a fire drill")
	a11y.Press(t, tree.Find(showing("push button", named("Abandon")))[0])
	testenv.WaitFor(t, time.Minute, "Abandon to end the session (State no longer \"active\")", func() string {
		return s.String(t, "State")
	}, func(state string) bool { return state != "active" })
}
