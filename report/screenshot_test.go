package report

import (
	"bytes"
	"os"
	"path/filepath"
	"testing"
	"time"

	"github.com/antidrift/antidrift/apps"
	"github.com/antidrift/antidrift/internal/testsupport/statefixture"
	"github.com/antidrift/antidrift/internal/testsupport/testenv"
	"github.com/antidrift/antidrift/persist"
)

// TestDocsScreenshot rewrites docs/report-week.png, the README's picture
// of the HTML report, under -update: a clean week (an intact chain,
// nothing pending) of generated sessions in an editor, a terminal and a
// browser, every one with its raw log so each has its timeline, the apps
// named by desktop entries with icons (docsApps), rendered
// by headless Chromium as TestHTMLInHeadlessChromium renders the golden
// week. Look at it before committing it.
func TestDocsScreenshot(t *testing.T) {
	if !*update {
		t.Skip("rewrites ../docs/report-week.png only with -update")
	}
	dir := filepath.Join(t.TempDir(), "state")
	if _, err := statefixture.Write(dir, statefixture.Spec{
		Seed: 21, Sessions: 26, First: time.Date(2026, 11, 17, 0, 0, 0, 0, time.UTC),
		Slots:            []time.Duration{9 * time.Hour, 14*time.Hour + 30*time.Minute},
		EventsPerSession: 40, KeepRawLogs: 12,
	}); err != nil {
		t.Fatal(err)
	}
	o := fixtureOptions
	o.Apps = docsApps(t)
	r, err := Build(persist.NewReader(dir), LastDays(fixtureNow, 7, 0), o)
	if err != nil {
		t.Fatal(err)
	}
	if !r.Chain.OK || r.Pending != 0 || r.Totals.Sessions == 0 {
		t.Fatalf("the week: got chain %+v, %d pending, %d sessions; want a clean week (chain OK, none pending, some sessions)", r.Chain, r.Pending, r.Totals.Sessions)
	}
	var page bytes.Buffer
	if err := HTML(&page, r, time.UTC); err != nil {
		t.Fatal(err)
	}
	file := filepath.Join(t.TempDir(), "week.html")
	if err := os.WriteFile(file, page.Bytes(), 0o600); err != nil {
		t.Fatal(err)
	}
	shot := filepath.Join("..", "docs", "report-week.png")
	got := testenv.RenderPage(t, file, shot, 900, 2250, false)
	if got.DOM == "" {
		t.Fatal("Chromium's DOM: got nothing, want the rendered page")
	}
	t.Logf("wrote %s: look at it", shot)
}

// docsApps is a session with desktop entries for the fixture's editor,
// terminal, browser and chat, each with a plain SVG icon of its own (drawn
// here: no project's icon is copied), and none for mpv and KeePassXC.
func docsApps(t *testing.T) *apps.Index {
	root := t.TempDir()
	data := filepath.Join(root, "data")
	t.Setenv("HOME", filepath.Join(root, "home"))
	t.Setenv("XDG_DATA_HOME", data)
	t.Setenv("XDG_DATA_DIRS", filepath.Join(root, "usr", "share"))
	t.Setenv("XDG_CONFIG_HOME", filepath.Join(root, "config"))
	t.Setenv("LC_ALL", "C")
	icon := func(fill, inner string) []byte {
		return []byte(`<svg xmlns="http://www.w3.org/2000/svg" width="32" height="32" viewBox="0 0 32 32"><rect x="2" y="2" width="28" height="28" rx="7" fill="` + fill + `"/>` + inner + `</svg>`)
	}
	for _, a := range []struct {
		id, entry string
		svg       []byte
	}{
		{"org.gnu.emacs", "Name=GNU Emacs\nStartupWMClass=Emacs\n", icon("#7a4fd6", `<path d="M10 9h12M10 16h9M10 23h12M10 9v14" stroke="#fff" stroke-width="3" fill="none" stroke-linecap="round"/>`)},
		{"kitty", "Name=kitty\n", icon("#33363b", `<path d="M9 11l6 5-6 5M17 22h7" stroke="#e8e8e8" stroke-width="2.6" fill="none" stroke-linecap="round" stroke-linejoin="round"/>`)},
		{"firefox", "Name=Firefox\n", icon("#e66a2c", `<circle cx="16" cy="16" r="8" fill="none" stroke="#fff" stroke-width="3"/><circle cx="16" cy="16" r="2.5" fill="#fff"/>`)},
		{"slack", "Name=Slack\nStartupWMClass=Slack\n", icon("#3f9e8f", `<path d="M12 9v14M20 9v14M9 13h14M9 19h14" stroke="#fff" stroke-width="2.6" stroke-linecap="round"/>`)},
	} {
		writeFile(t, filepath.Join(data, "applications", a.id+".desktop"), []byte("[Desktop Entry]\nType=Application\nExec=true\nIcon="+a.id+"\n"+a.entry))
		writeFile(t, filepath.Join(data, "icons", "hicolor", "scalable", "apps", a.id+".svg"), a.svg)
	}
	x, err := apps.Open("")
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { x.Close() })
	return x
}
