package dist

import (
	"fmt"
	"net/http"
	"net/http/httptest"
	"path/filepath"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/antidrift/antidrift/internal/testsupport/testenv"
)

// fetches is a server on 127.0.0.1 that records every request it gets: a
// panel that reads a title as rich text fetches its <img src>.
type fetches struct {
	*httptest.Server
	mu   sync.Mutex
	urls []string
}

func startFetches(t *testing.T) *fetches {
	f := &fetches{}
	f.Server = httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		f.mu.Lock()
		f.urls = append(f.urls, r.URL.Path)
		f.mu.Unlock()
		http.NotFound(w, r)
	}))
	t.Cleanup(f.Close)
	return f
}

func (f *fetches) got() []string {
	f.mu.Lock()
	defer f.mu.Unlock()
	return append([]string(nil), f.urls...)
}

// hostileTask is a title, a next action and a success condition with an
// image from server, a link and bold in them. A bucket's title has its
// counters folded ("127.0.0.1:PORT" is a version-like number: "#"), so the
// title names the server in a form the folding leaves alone: 127.0.0.1 in
// hex, a number glued to letters.
func hostileTask(server *fetches) (title, next, done string) {
	img := func(name string) string { return fmt.Sprintf(`<img src="%s/%s.png">`, server.URL, name) }
	_, port, _ := strings.Cut(server.URL, "127.0.0.1:")
	title = `<img src="http://0x7f000001:` + port + `/x.png">`
	next = img("next") + ` <a href="` + server.URL + `/link">click me</a> <b>x</b> & y`
	done = img("done") + ` <i>done</i>`
	return title, next, done
}

// On a real KWin 6, the applet running natively on Wayland beside the
// daemon (its evidence from the KWin script) fetches nothing a title, a next
// action or a success condition names in an <img src>, while it shows
// them for as long as it reads the buckets again.
func TestPlasmaAppletOnKWinFetchesNothingATitleNames(t *testing.T) {
	testenv.EachRelease(t, testenv.PlasmaReleases, testPlasmaAppletOnKWinFetchesNothingATitleNames)
}

func testPlasmaAppletOnKWinFetchesNothingATitleNames(t *testing.T, rel testenv.Release) {
	r := needPlasma(t, rel)
	server := startFetches(t)
	title, next, done := hostileTask(server)
	bus := testenv.StartBus(t)
	k := testenv.StartKWin(t, r, bus)
	k.Window(t, "org.example.Browser", title)
	testenv.StartDaemon(t, bus, filepath.Join(t.TempDir(), "state"),
		"WAYLAND_DISPLAY="+k.Socket, "XDG_RUNTIME_DIR="+k.RuntimeDir)
	s := bus.Session(t)
	testenv.WaitFor(t, time.Minute, "the daemon to see the browser's title (CurrentTitle naming 0x7f000001)", func() string {
		return s.String(t, "CurrentTitle")
	}, func(title string) bool { return strings.Contains(title, "0x7f000001") })
	s.Call(t, "Start", testenv.Args(next, done, uint64(1500), "observe", []string{"org.kde.kate"}), new(string))
	a11y := testenv.StartAccessibility(t, bus, k.RuntimeDir)
	dir, env := plasmaHome(t, r, bus, k.RuntimeDir, "WAYLAND_DISPLAY="+k.Socket, "QT_QPA_PLATFORM=wayland")
	installCLI(t, dir)
	applet := startApplet(t, r, dir, env)
	// The title shown, as a screen reader reads it: the applet followed the
	// session (through --wait-change on 6.3, DBus.Properties from 6.4) and
	// laid the bucket out.
	a11y.WaitForNode(t, "plasmawindowed", "the applet showing the bucket's title", showing("label", func(s string) bool {
		if applet.Exited() {
			t.Fatalf("plasmawindowed exited\n%s", applet.Output())
		}
		return strings.Contains(s, title)
	}))
	time.Sleep(5 * time.Second) // the buckets read and laid out again, twice
	if got := server.got(); len(got) > 0 {
		t.Errorf("the applet fetched: got %q, want nothing (it read a title or the next action as rich text)", got)
	}
	if bad := qmlErrors.FindAllString(applet.Output(), -1); len(bad) > 0 {
		t.Errorf("the applet's log: got QML errors:\n%s\nwant none", strings.Join(bad, "\n"))
	}
}

// The Plasma applet shows hostile text as the text it is: a window titled
// <img src="http://127.0.0.1:PORT/x.png"> (a bucket of "where the time
// went") and a next action and success condition with an image, a link and
// bold in them make no request to that server, and the popup draws them
// literally; photographed.
func TestPlasmaAppletShowsMarkupAsText(t *testing.T) {
	testenv.EachRelease(t, testenv.PlasmaReleases, testPlasmaAppletShowsMarkupAsText)
}

func testPlasmaAppletShowsMarkupAsText(t *testing.T, rel testenv.Release) {
	r := needPlasma(t, rel)
	server := startFetches(t)
	title, next, done := hostileTask(server)

	bus := testenv.StartBus(t)
	x := testenv.StartX(t)
	runtime := r.TempDir(t)
	a11y := testenv.StartAccessibility(t, bus, runtime)
	browser := x.XTerm(t, "Browser", title)
	x.Activate(t, browser)
	testenv.StartDaemon(t, bus, filepath.Join(t.TempDir(), "state"), "DISPLAY="+x.Name)
	bus.Session(t).Call(t, "Start", testenv.Args(next, done, uint64(1500), "observe", []string{"Editor"}), new(string))

	dir, env := plasmaHome(t, r, bus, runtime, "DISPLAY="+x.Name, "QT_QPA_PLATFORM=xcb")
	installCLI(t, dir)
	applet := startApplet(t, r, dir, env)
	window := roomyWindow(t, x, applet, 520, 420)

	// The popup shows each text, as a screen reader reads it out.
	for _, want := range []struct{ role, text string }{
		{"heading", next},
		{"label", "Done when: " + done},
		{"label", "Browser · " + title},
	} {
		a11y.WaitForNode(t, "plasmawindowed", "the applet showing "+want.text, showing(want.role, func(s string) bool { return strings.Contains(s, want.text) }))
	}
	// Drawn, and redrawn as the popup reads the buckets again (every 2 s
	// while open): any fetch would have happened by now.
	shot := filepath.Join(testenv.ArtifactsDir(t), "plasma-applet-markup.png")
	photograph(t, x, applet, window, shot, 2, white)
	time.Sleep(5 * time.Second)
	x.Screenshot(t, shot, uint32(window))
	if got := server.got(); len(got) > 0 {
		t.Errorf("the applet fetched: got %q, want nothing (it read a title or the next action as rich text)", got)
	}
	// A link would be drawn in Breeze's link colour (ForegroundLink,
	// 41,128,185); the text as text has none of it.
	pic := testenv.DecodePNG(t, shot)
	links := 0
	for y := pic.Bounds().Min.Y; y < pic.Bounds().Max.Y; y++ {
		for x := pic.Bounds().Min.X; x < pic.Bounds().Max.X; x++ {
			r, g, b, _ := pic.At(x, y).RGBA()
			if near(r>>8, 41) && near(g>>8, 128) && near(b>>8, 185) {
				links++
			}
		}
	}
	if links > 0 {
		t.Errorf("%s: got %d pixels in the colour of a link, want none (the applet drew <a href> as a link)", shot, links)
	}
}
