package report

import (
	"bytes"
	"encoding/base64"
	"encoding/json"
	"html"
	"image"
	"image/color"
	"image/png"
	"os"
	"path/filepath"
	"regexp"
	"strings"
	"testing"
	"time"

	"github.com/antidrift/antidrift/apps"
	"github.com/antidrift/antidrift/internal/inert"
	"github.com/antidrift/antidrift/internal/testsupport/hostile"
	"github.com/antidrift/antidrift/internal/testsupport/testenv"
	"github.com/antidrift/antidrift/persist"
)

// iconColour is the test PNG icon's colour, for finding it on a
// screenshot.
var iconColour = color.RGBA{0xd0, 0x20, 0xc0, 0xff}

// solidPNG is a real PNG icon of size pixels in c.
func solidPNG(t testing.TB, size int, c color.RGBA) []byte {
	t.Helper()
	img := image.NewRGBA(image.Rect(0, 0, size, size))
	for y := range size {
		for x := range size {
			img.Set(x, y, c)
		}
	}
	var b bytes.Buffer
	if err := png.Encode(&b, img); err != nil {
		t.Fatal(err)
	}
	return b.Bytes()
}

func writeFile(t testing.TB, path string, data []byte) {
	t.Helper()
	if err := os.MkdirAll(filepath.Dir(path), 0o755); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(path, data, 0o644); err != nil {
		t.Fatal(err)
	}
}

// hostileAppName is a desktop entry's Name written to attack every
// reader of the report: a terminal's (ESC, OSC), HTML's (a tag, an
// attribute, an entity).
const hostileAppName = "Fire\x1b]0;owned\x07fox <img src=x onerror=alert(1)> &amp; \"q\""

// scriptSVG is an SVG icon with a script in it: as an <img> it never runs.
const scriptSVG = `<svg xmlns="http://www.w3.org/2000/svg" width="32" height="32" viewBox="0 0 32 32"><script>document.title="PWNED"</script><circle cx="16" cy="16" r="14" fill="#7a4fd6"/></svg>`

// appsWorld is a session whose desktop entries are a test's, the host's
// left out: Emacs by StartupWMClass with an SVG icon, kitty by its desktop
// id with Name[de] and a PNG icon in hicolor, firefox with a hostile name
// and no icon file; mpv has no entry. It returns the index, opened under
// LANG=de_DE.UTF-8.
func appsWorld(t testing.TB) *apps.Index {
	t.Helper()
	root := t.TempDir()
	data := filepath.Join(root, "data")
	tt := t.(interface{ Setenv(k, v string) })
	tt.Setenv("HOME", filepath.Join(root, "home"))
	tt.Setenv("XDG_DATA_HOME", data)
	tt.Setenv("XDG_DATA_DIRS", filepath.Join(root, "usr", "share"))
	tt.Setenv("XDG_CONFIG_HOME", filepath.Join(root, "config"))
	for _, k := range []string{"LC_ALL", "LC_MESSAGES", "LANGUAGE"} {
		tt.Setenv(k, "")
	}
	tt.Setenv("LANG", "de_DE.UTF-8")
	entry := func(id, body string) {
		writeFile(t, filepath.Join(data, "applications", id+".desktop"), []byte("[Desktop Entry]\nType=Application\nExec=true\n"+body))
	}
	entry("org.gnu.emacs", "Name=GNU Emacs\nIcon=org.gnu.emacs\nStartupWMClass=Emacs\n")
	entry("kitty", "Name=kitty\nName[de]=Kitty-Terminal\nIcon=kitty\n")
	entry("firefox", "Name="+hostileAppName+"\nIcon=firefox\n")
	// A Flatpak's: its entry and icon in the export directory, the icon a
	// symlink into the app's tree as Flatpak exports it.
	exports := filepath.Join(data, "flatpak", "exports", "share")
	writeFile(t, filepath.Join(exports, "applications", "org.example.Flat.desktop"), []byte("[Desktop Entry]\nType=Application\nExec=true\nName=Flat\nName[de]=Flach\nIcon=org.example.Flat\n"))
	flatIcon := filepath.Join(data, "flatpak", "app", "org.example.Flat", "current", "export", "org.example.Flat.png")
	writeFile(t, flatIcon, solidPNG(t, 48, iconColour))
	if err := os.MkdirAll(filepath.Join(exports, "icons", "hicolor", "48x48", "apps"), 0o755); err != nil {
		t.Fatal(err)
	}
	if err := os.Symlink(flatIcon, filepath.Join(exports, "icons", "hicolor", "48x48", "apps", "org.example.Flat.png")); err != nil {
		t.Fatal(err)
	}
	writeFile(t, filepath.Join(data, "icons", "hicolor", "32x32", "apps", "kitty.png"), solidPNG(t, 32, iconColour))
	writeFile(t, filepath.Join(data, "icons", "hicolor", "scalable", "apps", "org.gnu.emacs.svg"), []byte(scriptSVG))
	x, err := apps.Open("")
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { x.Close() })
	return x
}

// The week of the golden fixture with the desktop's entries: the JSON has
// the app's name (Name[de] under a German locale) and desktop id beside
// every class that has one, and neither beside one that has not; the text
// names the apps; the page shows each icon as a data: URI, the SVG's
// script only inside its base64, and the hostile name inert.
func TestReportNamesApps(t *testing.T) {
	x := appsWorld(t)
	if e, ok := x.Lookup("firefox", "", ""); !ok || !strings.HasPrefix(e.Name, "Fire") {
		t.Fatalf("the hostile entry: got %+v, %v; want it indexed (Name %q)", e, ok, hostileAppName)
	}
	o := fixtureOptions
	o.Apps = x
	r, err := Build(persist.NewReader(fixture(t)), LastDays(fixtureNow, 7, 0), o)
	if err != nil {
		t.Fatal(err)
	}

	// JSON.
	var js bytes.Buffer
	if err := JSON(&js, r); err != nil {
		t.Fatal(err)
	}
	var doc struct {
		Windows  []map[string]any `json:"windows"`
		Sessions []struct {
			Timeline []map[string]any `json:"timeline"`
			Top      []map[string]any `json:"top"`
		} `json:"sessions"`
	}
	if err := json.Unmarshal(js.Bytes(), &doc); err != nil {
		t.Fatal(err)
	}
	want := map[string][2]string{"kitty": {"Kitty-Terminal", "kitty"}, "Emacs": {"GNU Emacs", "org.gnu.emacs"}, "firefox": {hostileAppName, "firefox"}}
	check := func(where string, m map[string]any) {
		class, _ := m["class"].(string)
		w, known := want[class]
		switch {
		case class == "":
			if _, ok := m["app"]; ok {
				t.Errorf("%s: a reserved bucket got app %v, want none", where, m["app"])
			}
		case known && (m["app"] != w[0] || m["desktop_id"] != w[1]):
			t.Errorf("%s, class %q: got app %q, desktop_id %q; want %q, %q", where, class, m["app"], m["desktop_id"], w[0], w[1])
		case !known:
			if _, ok := m["app"]; ok {
				t.Errorf("%s, class %q (no desktop entry): got app %v, want the key omitted", where, class, m["app"])
			}
			if _, ok := m["desktop_id"]; ok {
				t.Errorf("%s, class %q (no desktop entry): got desktop_id %v, want the key omitted", where, class, m["desktop_id"])
			}
		}
	}
	seen := map[string]bool{}
	for _, w := range doc.Windows {
		check("windows[]", w)
		seen[w["class"].(string)] = true
	}
	stretches := 0
	for _, s := range doc.Sessions {
		for _, g := range s.Timeline {
			check("a timeline's stretch", g)
			stretches++
		}
		for _, b := range s.Top {
			check("a session's top", b)
		}
	}
	if !seen["kitty"] || !seen["Emacs"] || !seen["mpv"] || stretches == 0 {
		t.Fatalf("the fixture: got windows %v and %d stretches, want kitty, Emacs and mpv among the windows, and timelines", seen, stretches)
	}
	if !strings.Contains(js.String(), `"class": "kitty",`+"\n"+`      "app": "Kitty-Terminal",`) {
		t.Errorf("the JSON: want \"app\" right beside \"class\"; got\n%.2000s", js.String())
	}
	if err := hostile.CheckTerminal(js.String()); err != nil {
		t.Errorf("the JSON in a terminal: %v", err)
	}

	// Text.
	var text bytes.Buffer
	if err := Text(&text, r, time.UTC, false); err != nil {
		t.Fatal(err)
	}
	for _, want := range []string{"  Kitty-Terminal ", "  GNU Emacs ", "  mpv ", inert.Terminal("Fire\x1b]0;owned\x07fox")} {
		if !strings.Contains(text.String(), want) {
			t.Errorf("the text: got\n%s\nwant %q in it", text.String(), want)
		}
	}
	if err := hostile.CheckTerminal(text.String()); err != nil {
		t.Errorf("the text in a terminal: %v", err)
	}

	// HTML.
	var page bytes.Buffer
	if err := HTML(&page, r, time.UTC); err != nil {
		t.Fatal(err)
	}
	p := page.String()
	checkSelfContained(t, p)
	pngURI := "data:image/png;base64," + base64.StdEncoding.EncodeToString(solidPNG(t, 32, iconColour))
	svgURI := "data:image/svg+xml;base64," + base64.StdEncoding.EncodeToString([]byte(scriptSVG))
	for name, want := range map[string]string{"kitty's PNG": `<img class="icon" src="` + pngURI + `"`, "Emacs's SVG": `<img class="icon" src="` + svgURI + `"`} {
		if strings.Count(html.UnescapeString(p), want) != 1 {
			t.Errorf("the page: got %s %d times, want once (Top windows)", name, strings.Count(p, want))
		}
	}
	if strings.Contains(p, "<script") || strings.Contains(p, "PWNED") || strings.Contains(p, "onerror=alert") && !strings.Contains(p, "&lt;img src=x onerror=alert(1)&gt;") {
		t.Errorf("the page: got the SVG's script or the hostile name's markup as markup")
	}
	if got := html.UnescapeString(p); !strings.Contains(got, inert.Terminal(hostileAppName)) {
		t.Errorf("the page: want the hostile name shown as the text shows it, %q", inert.Terminal(hostileAppName))
	}
	if err := hostile.CheckTerminal(p); err != nil {
		t.Errorf("the page holds a control character: %v", err)
	}
	for _, want := range []string{">Kitty-Terminal</div>", ">GNU Emacs</div>", `title="mpv"><span class="icon"></span>mpv</div>`} {
		if !strings.Contains(p, want) {
			t.Errorf("the page: got no %q, want the app named in Top windows", want)
		}
	}

	// In a real browser, offline: the icons load (nothing refused by the
	// page's policy), the SVG's script does not run, and the PNG is drawn.
	file := filepath.Join(t.TempDir(), "apps.html")
	if err := os.WriteFile(file, page.Bytes(), 0o600); err != nil {
		t.Fatal(err)
	}
	shot := filepath.Join(testenv.ArtifactsDir(t), "report-apps.png")
	got := testenv.RenderPage(t, file, shot, 900, 3400, false)
	if m := regexp.MustCompile(`.*(net::ERR_|Failed to load resource|Refused to (load|apply|execute)|Not allowed to load).*`).FindString(got.Log); m != "" {
		t.Errorf("Chromium's log: got %s, want the icons to load from data: and nothing refused", m)
	}
	if strings.Contains(got.DOM, "PWNED") {
		t.Errorf("Chromium's DOM: got PWNED, want the SVG icon's script never run")
	}
	if n := countNear(testenv.DecodePNG(t, shot), iconColour); n < 40 {
		t.Errorf("pixels of kitty's icon colour on the screenshot %s: got %d, want at least 40 (the PNG icon drawn)", shot, n)
	}
	t.Logf("screenshot: %s", shot)
}

// A window whose class is a Flatpak's app id is named by the Flatpak's
// exported entry (Name[de]) and shown with its exported icon.
func TestReportNamesAFlatpak(t *testing.T) {
	x := appsWorld(t)
	r := &Report{Period: Period{FirstDay: "2026-11-29", LastDay: "2026-11-29", Days: 1},
		Windows: []WindowTime{{Class: "org.example.Flat", OnTaskSeconds: 600, Titles: []Bucket{{Class: "org.example.Flat", Title: "doc", Seconds: 600}}}}}
	Options{Apps: x}.nameApps(r)
	if want := (App{Name: "Flach", DesktopID: "org.example.Flat", Icon: "org.example.Flat"}); r.Windows[0].App != want || r.Windows[0].Titles[0].App != want {
		t.Fatalf("the Flatpak's window: got %+v, want %+v", r.Windows[0], want)
	}
	var page bytes.Buffer
	if err := HTML(&page, r, time.UTC); err != nil {
		t.Fatal(err)
	}
	uri := "data:image/png;base64," + base64.StdEncoding.EncodeToString(solidPNG(t, 48, iconColour))
	if !strings.Contains(html.UnescapeString(page.String()), `<img class="icon" src="`+uri+`"`) || !strings.Contains(page.String(), ">Flach (org.example.Flat)</div>") {
		t.Errorf("the page: want the Flatpak named \"Flach (org.example.Flat)\" with its exported icon embedded")
	}
}
