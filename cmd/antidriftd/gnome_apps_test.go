package main

import (
	"path/filepath"
	"regexp"
	"strings"
	"testing"
	"time"

	"github.com/antidrift/antidrift/internal/testsupport/testenv"
)

// The GNOME indicator's menu names the window in front, and the windows
// the time went to, by their apps' names and icons (CurrentAppName,
// CurrentAppIcon, BucketApps: the daemon's reading of the desktop entries
// the Shell reads too): a theme icon as a Gio.ThemedIcon, an absolute path
// as a Gio.FileIcon, a window without a desktop entry by its class and no
// icon. A hostile name (markup, a right-to-left override, a name too long
// to read) is shown as inert text. Photographed.
func TestGnomeIndicatorNamesApps(t *testing.T) {
	testenv.EachRelease(t, testenv.GnomeReleases, testGnomeIndicatorNamesApps)
}

func testGnomeIndicatorNamesApps(t *testing.T, rel testenv.Release) {
	k := startGnomeDesktop(t, rel)
	g := k.g
	startGnomeApps(t, g)
	const pictured = "org.example.Pictured"
	g.AddApp(t, pictured, "Pictured", "/usr/share/pixmaps/debian-logo.png")
	const hostile = "org.example.Hostile"
	g.AddApp(t, hostile, "<i>Evil</i> &amp; \u202egnp.exe", "../../etc/passwd")
	g.OpenWindow(t, editor.id, "intro.md — Text Editor")
	k.startDaemon(t, gnomeConfig)
	if _, err := k.gdbus(t, "org.antidrift.Session1.Start", "write the intro", "it is written", "uint64 600", "observe", "['"+editor.id+"']"); err != nil {
		t.Fatalf("Start: %v\n%s", err, k.daemon.Output())
	}
	gnomeWaitProp(t, k, "CurrentAppName", editor.name)

	// row is what the menu's row js shows: its text, and its icon (the
	// kind of GIcon and what it names) when the icon is visible.
	row := func(js string) string { return g.EvalString(t, "("+rowJS+")("+js+")") }
	app := indicator + "._app"
	testenv.WaitForValue(t, wait, "the menu's window in front", "In front: Text Editor | themed "+editor.icon, func() string { return row(app) })
	time.Sleep(5 * time.Second) // the editor and the picture lead the buckets

	g.OpenWindow(t, pictured, "a picture")
	testenv.WaitForValue(t, wait, "the menu's window in front with an icon file", "In front: Pictured | file /usr/share/pixmaps/debian-logo.png", func() string { return row(app) })
	time.Sleep(3 * time.Second)

	// A window without a desktop entry: its class, no icon.
	g.OpenWindow(t, "org.example.Unlisted", "no entry")
	gnomeWaitProp(t, k, "CurrentClass", "org.example.Unlisted")
	testenv.WaitForValue(t, wait, "the menu's window in front without a desktop entry", "In front: org.example.Unlisted | no icon", func() string { return row(app) })

	// A hostile name: markup shown as the characters it is, the override
	// as a space, the icon path going up refused.
	g.OpenWindow(t, hostile, "hostile")
	gnomeWaitProp(t, k, "CurrentClass", hostile)
	testenv.WaitForValue(t, wait, "the menu's window in front with a hostile name", "In front: <i>Evil</i> &amp;  gnp.exe | no icon", func() string { return row(app) })
	if got := g.EvalString(t, "String("+app+".label.clutter_text.use_markup)"); got != "false" {
		t.Errorf("the row's label: use_markup %s, want false", got)
	}

	// The buckets: each window by its app's name and icon.
	g.OpenWindow(t, console.id, "~ — Console")
	mustEval(t, g, indicator+".menu.open(false)")
	buckets := func() string {
		return g.EvalString(t, "JSON.stringify("+indicator+"._buckets.map(b => ("+rowJS+")(b)))")
	}
	testenv.WaitFor(t, wait, "the menu's buckets to name Text Editor and Pictured with their icons", buckets, func(s string) bool {
		return strings.Contains(s, "Text Editor · intro.md — Text Editor | themed "+editor.icon) &&
			strings.Contains(s, "Pictured · a picture | file /usr/share/pixmaps/debian-logo.png")
	})
	menuShot(t, g, filepath.Join(testenv.ArtifactsDir(t), "gnome-menu-apps.png"))
	mustEval(t, g, indicator+".menu.close(false)")
	if bad := regexp.MustCompile(`(?m)^.*(JS ERROR|JS WARNING|Extension antidrift@).*$`).FindAllString(g.Log(), -1); len(bad) > 0 {
		t.Errorf("the Shell's log: got\n%s\nwant no errors about the extension", strings.Join(bad, "\n"))
	}
}

// rowJS is a JavaScript function of a menu row naming an app: its text and
// its icon, as testGnomeIndicatorNamesApps compares them.
const rowJS = `item => {
	if (!item?.visible)
		return '(hidden)';
	const icon = item.get_children().find(c => c.has_style_class_name?.('antidrift-app-icon'));
	const gicon = icon?.gicon ?? null;
	const what = !gicon ? 'no icon'
		: gicon.get_names ? 'themed ' + gicon.get_names()[0]
		: gicon.get_file ? 'file ' + gicon.get_file().get_path() : 'other';
	return item.label.text + ' | ' + what;
}`
