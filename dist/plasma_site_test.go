package dist

import (
	"fmt"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/antidrift/antidrift/internal/testsupport/testenv"
)

// With a Firefox window in front (on Xvfb: a window of class firefox,
// titled as Firefox titles a tab's window), the applet's popup shows the
// page its extension's native host reports (the real host, started by a
// stand-in browser): host and path, never the query or the fragment, as a
// screen reader reads it; photographed. A report of a page whose title is
// not the window's (another window's tab) changes nothing
// the popup shows.
func TestPlasmaAppletShowsTheSite(t *testing.T) {
	testenv.EachRelease(t, testenv.PlasmaReleases, testPlasmaAppletShowsTheSite)
}

// front is the window the daemon sees in front, as a failure shows it.
type front struct{ class, title string }

func (f front) String() string { return fmt.Sprintf("class %q, title %q", f.class, f.title) }

func testPlasmaAppletShowsTheSite(t *testing.T, rel testenv.Release) {
	r := needPlasma(t, rel)
	bus := testenv.StartBus(t)
	x := testenv.StartX(t)
	runtime := r.TempDir(t)
	a11y := testenv.StartAccessibility(t, bus, runtime)
	// Class firefox is what makes a window Firefox's (service.BrowserOf).
	// Titled as Firefox titles it, with _NET_WM_NAME (xterm's own title
	// outside a UTF-8 locale is COMPOUND_TEXT, its dash escaped).
	browser := x.XTerm(t, "firefox", "Mozilla Firefox")
	x.SetTitle(t, browser, "Tabs, not windows #3 — Mozilla Firefox")
	testenv.StartDaemon(t, bus, filepath.Join(t.TempDir(), "state"), "DISPLAY="+x.Name)
	s := bus.Session(t)
	s.Call(t, "Start", testenv.Args("review the tabs pull request", "it is approved", uint64(1500), "observe", []string{"firefox"}), new(string))

	dir, env := plasmaHome(t, r, bus, runtime, "DISPLAY="+x.Name, "QT_QPA_PLATFORM=xcb")
	installCLI(t, dir)
	applet := startApplet(t, r, dir, env)
	window := roomyWindow(t, x, applet, 480, 260)
	// The browser in front again (the applet's window took the focus), as
	// the daemon sees it.
	x.Activate(t, browser)
	testenv.WaitFor(t, time.Minute, `the daemon to see the browser in front (class "firefox", a title naming "Tabs, not windows")`, func() front {
		return front{class: s.String(t, "CurrentClass"), title: s.String(t, "CurrentTitle")}
	}, func(f front) bool { return f.class == "firefox" && strings.Contains(f.title, "Tabs, not windows") })

	// Anything the popup shows that names a page: the one it should, the
	// query or fragment it must not, or the page that does not fit.
	pages := func(n *testenv.Node) bool {
		return n.Has("showing") && (strings.Contains(n.Name, "github.com") || strings.Contains(n.Name, "SECRET") ||
			strings.Contains(n.Name, "youtube") || strings.Contains(n.Name, "token"))
	}
	_, tree := a11y.WaitForNode(t, "plasmawindowed", "the applet showing the session", showing("heading", named("review the tabs pull request")))
	for _, n := range tree.Find(pages) {
		t.Errorf("before any tab report the popup: got a page %s %q, want none", n.Role, n.Name)
	}

	host := testenv.StartNativeHost(t, bus.Env(), "firefox")
	report := func(url, title string) {
		t.Helper()
		host.Tab(t, url, title)
	}
	const site = "github.com/antidrift/antidrift/pull/3"
	report("https://github.com/antidrift/antidrift/pull/3?token=SECRET#diff", "Tabs, not windows #3")
	_, tree = a11y.WaitForNode(t, "plasmawindowed", "the applet showing the site", showing("label", named(site)))
	for _, n := range tree.Find(pages) {
		if n.Name != site {
			t.Errorf("the popup: got %s %q, want only the page %q", n.Role, n.Name, site)
		}
	}
	shots := testenv.ArtifactsDir(t)
	photograph(t, x, applet, window, filepath.Join(shots, "plasma-applet-site.png"), 2, white)

	// A page whose title is not the window's: believed for no window, so
	// the daemon's site stays and so does the popup's. What the popup shows
	// after a later change (the session extended by 10 minutes, over the
	// bus) is what it shows after the report.
	report("https://www.youtube.com/watch?v=dQw4w9WgXcQ", "Cat videos - YouTube")
	if got := s.String(t, "CurrentSite"); got != site {
		t.Errorf("the daemon's CurrentSite after a report that fits no window: got %q, want %q", got, site)
	}
	s.Call(t, "Extend", testenv.Args(uint64(600)))
	_, tree = a11y.WaitForNode(t, "plasmawindowed", "the applet showing the extended session", showing("label", func(s string) bool { return strings.HasSuffix(s, " left of 35m") }))
	if len(tree.Find(showing("label", named(site)))) == 0 {
		t.Errorf("after a report that fits no window the popup: got\n%s\nwant %q still shown", tree, site)
	}
	for _, n := range tree.Find(pages) {
		if n.Name != site {
			t.Errorf("after a report that fits no window the popup: got %s %q, want only %q", n.Role, n.Name, site)
		}
	}
	x.Screenshot(t, filepath.Join(shots, "plasma-applet-site-unfit.png"), uint32(window))
}
