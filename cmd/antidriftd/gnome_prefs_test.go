package main

import (
	"encoding/json"
	"image"
	"os"
	"path/filepath"
	"regexp"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/antidrift/antidrift/internal/testsupport/testenv"
)

// The extension's preferences as a person opens them: gnome-extensions
// prefs asks the Shell, and GNOME Shell's extensions service shows the real
// prefs.js of the installed zip, in GTK 4 and libadwaita, on the Shell's
// display; the keyboard drives it. Choosing a level in "Default
// enforcement" writes default-level (gsettings reads it back); a level set
// from outside (gsettings set) shows in the combo at once; the window
// opened again shows the level set while it was closed. The window's
// handler of the setting is connected while it is open and gone once it is
// closed (seen in the service's own dialog code, run in a gjs of its own).
// The window is photographed with the levels open.
func TestGnomePrefsDefaultEnforcementFollowsSetting(t *testing.T) {
	testenv.EachRelease(t, testenv.GnomeReleases, testGnomePrefsDefaultEnforcementFollowsSetting)
}

func testGnomePrefsDefaultEnforcementFollowsSetting(t *testing.T, rel testenv.Release) {
	g := testenv.StartGnomeShellRelease(t, rel, testenv.AntidriftExtensionDir())
	quietTray(t, g)
	g.AttachKeyboard(t)
	app := g.StartExtensionsApp(t)
	const uuid = "antidrift@antidrift.github.io"
	schemas := filepath.Join(g.Home, ".local/share/gnome-shell/extensions", uuid, "schemas")
	gsettings := func(args ...string) string {
		t.Helper()
		argv := append([]string{"gsettings", "--schemadir", schemas}, args...)
		out, err := g.RunProgram(argv...)
		if err != nil {
			t.Fatalf("%s: %v\n%s", strings.Join(argv, " "), err, out)
		}
		return strings.TrimSpace(out)
	}
	const key = "org.gnome.shell.extensions.antidrift"
	waitLevel := func(want string) {
		t.Helper()
		waitFor(t, wait, "default-level to be '"+want+"'", func() (bool, string) {
			got := gsettings("get", key, "default-level")
			return got == "'"+want+"'", got
		})
	}

	const window = "global.display.list_all_windows().find(w => w.get_wm_class() === 'org.gnome.Shell.Extensions' && w.get_title() === 'antidrift')"
	const popup = "global.display.list_all_windows().find(w => w.window_type === imports.gi.Meta.WindowType.DROPDOWN_MENU)"
	openPrefs := func() {
		t.Helper()
		if out, err := g.RunProgram("gnome-extensions", "prefs", uuid); err != nil {
			t.Fatalf("gnome-extensions prefs: %v\n%s\n%s", err, out, app.Output())
		}
		testenv.WaitForValue(t, wait, "the preferences window's has_focus()", "true", func() string {
			return g.EvalString(t, "String("+window+"?.has_focus() ?? false)")
		})
	}
	popupShown := func(shown bool) {
		t.Helper()
		testenv.WaitForValue(t, wait, "the levels' popover shown", strconv.FormatBool(shown), func() string {
			return g.EvalString(t, "String(!!"+popup+")")
		})
	}
	// rectOf is where rectangle js (an Mtk.Rectangle) is on the screen.
	rectOf := func(js string) image.Rectangle {
		t.Helper()
		var r struct{ X, Y, Width, Height int }
		if err := json.Unmarshal([]byte(g.EvalString(t, "(r => JSON.stringify({x: r.x, y: r.y, width: r.width, height: r.height}))("+js+")")), &r); err != nil {
			t.Fatal(err)
		}
		return image.Rect(r.X, r.Y, r.X+r.Width, r.Y+r.Height)
	}
	windowRect := window + ".get_frame_rect()"
	// screen is what is shown now in rectangle js with margin around it,
	// as seen from its corner.
	shots := t.TempDir()
	artifacts := testenv.ArtifactsDir(t)
	t.Cleanup(func() {
		if t.Failed() && os.Getenv(testenv.ArtifactsEnv) != "" {
			if err := os.Rename(shots, filepath.Join(artifacts, "gnome-prefs-shots")); err == nil {
				t.Logf("the pictures compared are in %s", filepath.Join(artifacts, "gnome-prefs-shots"))
			}
		}
	})
	n := 0
	screen := func(js string, margin int) image.Image {
		t.Helper()
		n++
		path := filepath.Join(shots, strconv.Itoa(n)+".png")
		g.Screenshot(t, path)
		img := testenv.DecodePNG(t, path)
		return crop(img, rectOf(js).Inset(-margin).Intersect(img.Bounds()))
	}
	// settled is screen once it is still: GTK draws the keyboard focus
	// only for 3 s after the last key (VISIBLE_FOCUS_DURATION), so it is
	// taken well after that and once two pictures in a row agree.
	var lastKey time.Time
	press := func(keys ...string) {
		t.Helper()
		g.PressKeys(t, keys...)
		lastKey = time.Now()
	}
	settled := func(js string, margin int) image.Image {
		t.Helper()
		var prev, got image.Image
		testenv.WaitUntil(t, wait, "the preferences window to settle (two screenshots 500 ms apart the same, 6 s after the last key)", func() bool {
			time.Sleep(500 * time.Millisecond)
			got = screen(js, margin)
			same := prev != nil && sameIn(got, prev, got.Bounds())
			prev = got
			return same && time.Since(lastKey) > 6*time.Second
		})
		return got
	}

	openPrefs()
	// From the first row (the label's switch, focused as the window
	// opens) past the duration to the combo.
	press("Tab", "Tab")
	choose := func(row int, want string) {
		t.Helper()
		press("Return")
		popupShown(true)
		keys := []string{"Home"}
		for range row {
			keys = append(keys, "Down")
		}
		press(append(keys, "Return")...)
		popupShown(false)
		waitLevel(want)
	}
	// The rows: the daemon's default, observe, warn, block, locked.
	choose(2, "warn")
	warn := settled(windowRect, 0)
	// For the picture: the levels open, warn checked.
	press("Return")
	popupShown(true)
	savePNG(t, filepath.Join(artifacts, "gnome-prefs.png"), settled(windowRect+".union("+popup+".get_frame_rect())", 24))
	press("Escape")
	popupShown(false)
	choose(3, "block")
	block := settled(windowRect, 0)
	// What differs between the two is the combo's text: where a level set
	// from outside must show.
	text := diffIn(warn, block)
	if text.Empty() || text.Dy() > 40 {
		t.Fatalf("the preferences window with warn and with block chosen: got them different in %v, want one line of text (see %s)", text, shots)
	}
	// shows waits until the combo shows what it showed in ref. The
	// pointer moves over the combo and away to the window's empty lower
	// part meanwhile, as a person's would, and the picture is taken with it
	// away: this headless compositor sometimes leaves a window's new frame
	// unshown until something else moves, and GNOME Shell 50's sometimes
	// leaves a part of the old text (the ascenders of "block" over "warn")
	// until the row is drawn again, as hovering and leaving it does.
	shows := func(ref image.Image, what string) {
		t.Helper()
		r := rectOf(windowRect)
		combo := r.Min.Add(text.Min.Add(text.Max).Div(2))
		i := 0
		waitFor(t, wait, what, func() (bool, string) {
			i++
			g.MovePointer(t, combo.X, combo.Y)
			time.Sleep(200 * time.Millisecond)
			g.MovePointer(t, r.Min.X+40+i%2*20, r.Max.Y-40)
			time.Sleep(300 * time.Millisecond)
			return sameIn(screen(windowRect, 0), ref, text), "default-level is " + gsettings("get", key, "default-level")
		})
	}
	gsettings("set", key, "default-level", "warn")
	shows(warn, "the combo to show warn, set from outside")

	// Closed, as its close button does; a change made meanwhile shows when
	// it opens again, and nothing of the closed window heard it.
	mustEval(t, g, window+".delete(global.get_current_time())")
	testenv.WaitForValue(t, wait, "the preferences window open", "false", func() string { return g.EvalString(t, "String(!!"+window+")") })
	gsettings("set", key, "default-level", "block")
	openPrefs()
	shows(block, "the window opened again to show block, set while it was closed")
	if bad := regexp.MustCompile(`(?m)^.*(CRITICAL|JS ERROR|JS WARNING|disposed).*$`).FindAllString(app.Output(), -1); len(bad) > 0 {
		t.Errorf("the extensions service's log: got\n%s\nwant no criticals, JS errors or warnings", strings.Join(bad, "\n"))
	}

	// What the window cannot show: its handler of default-level's changes
	// is connected while it is open and gone once it is closed. The
	// service's own ExtensionPrefsDialog, in a gjs of its own on the same
	// display, with the installed extension.
	var handlers struct {
		Settings         int
		WhileOpen, After []bool
		Error            string
	}
	out := runPrefsProbe(t, g, uuid)
	if err := json.Unmarshal([]byte(lastLine(out)), &handlers); err != nil || handlers.Error != "" {
		t.Fatalf("the prefs probe: %v %s\n%s", err, handlers.Error, out)
	}
	if handlers.Settings != 1 || len(handlers.WhileOpen) != 1 || !handlers.WhileOpen[0] {
		t.Errorf("the open window follows default-level: got %d settings objects with handlers connected %v, want one, with one\n%s", handlers.Settings, handlers.WhileOpen, out)
	} else if handlers.After[0] {
		t.Error("the closed window's handler of default-level's changes: got connected, want disconnected")
	}
}

// prefsProbe opens an extension's preferences as GNOME Shell's extensions
// service does (from its own resources — the file must be named as the
// service is, for imports.package to find them: the extension as the
// Shell describes it, in the service's ExtensionPrefsDialog), notes every
// Gio.Settings the extension's prefs.js gets and every handler of
// changed::default-level connected on them, and says whether each is
// connected while the window is shown and after it is closed.
const prefsProbe = `import {programArgs} from 'system';

imports.package.init({name: 'gnome-shell', prefix: '/usr', libdir: '/usr/lib'});
const {default: Adw} = await import('gi://Adw?version=1');
const {default: Gio} = await import('gi://Gio');
const {default: GLib} = await import('gi://GLib');
const {default: GObject} = await import('gi://GObject');
const {loadInterfaceXML} = await import(imports.package.moduledir + '/misc/dbusUtils.js');
const {ExtensionBase} = await import(imports.package.moduledir + '/extensions/sharedInternals.js');
const {extensionManager} = await import(imports.package.moduledir + '/extensionsService.js');
const {ExtensionPrefsDialog} = await import(imports.package.moduledir + '/extensionPrefsDialog.js');
Adw.init();

const made = [];
const handlers = [];
const getSettings = ExtensionBase.prototype.getSettings;
ExtensionBase.prototype.getSettings = function (...args) {
    const settings = getSettings.apply(this, args);
    made.push(settings);
    return settings;
};
const connect = GObject.Object.prototype.connect;
GObject.Object.prototype.connect = function (signal, ...rest) {
    const id = connect.call(this, signal, ...rest);
    if (made.includes(this) && signal === 'changed::default-level')
        handlers.push({settings: this, id});
    return id;
};
const following = () => handlers.map(h => GObject.signal_handler_is_connected(h.settings, h.id));

const Shell = Gio.DBusProxy.makeProxyWrapper(loadInterfaceXML('org.gnome.Shell.Extensions'));
const [serialized] = await new Shell(Gio.DBus.session, 'org.gnome.Shell', '/org/gnome/Shell').GetExtensionInfoAsync(programArgs[0]);
const window = new ExtensionPrefsDialog(extensionManager.createExtensionObject(serialized));
const loop = new GLib.MainLoop(null, false);
const result = {Settings: 0, WhileOpen: [], After: [], Error: ''};
window.connect('loaded', () => window.present());
window.connect('map', () => {
    result.Settings = made.length;
    result.WhileOpen = following();
    window.close();
    GLib.idle_add(GLib.PRIORITY_DEFAULT, () => {
        result.After = following();
        loop.quit();
        return GLib.SOURCE_REMOVE;
    });
});
GLib.timeout_add_seconds(GLib.PRIORITY_DEFAULT, 30, () => {
    result.Error = 'the window was not shown in 30 s';
    loop.quit();
    return GLib.SOURCE_REMOVE;
});
await loop.runAsync();
print(JSON.stringify(result));
`

// runPrefsProbe runs prefsProbe for extension uuid on g's display and
// returns what it printed.
func runPrefsProbe(t *testing.T, g *testenv.GnomeShell, uuid string) string {
	t.Helper()
	script := filepath.Join(g.Rootfs.TempDir(t), "org.gnome.Shell.Extensions")
	if err := os.WriteFile(script, []byte(prefsProbe), 0o644); err != nil {
		t.Fatal(err)
	}
	out, err := g.RunProgram("env", "GTK_A11Y=none", "gjs", "-m", script, uuid)
	if err != nil {
		t.Fatalf("the prefs probe: %v\n%s", err, out)
	}
	return out
}

// lastLine is the last line of out.
func lastLine(out string) string {
	lines := strings.Split(strings.TrimSpace(out), "\n")
	return lines[len(lines)-1]
}
