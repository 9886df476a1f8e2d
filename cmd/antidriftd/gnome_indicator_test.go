package main

import (
	"encoding/json"
	"fmt"
	"image"
	"maps"
	"os"
	"path/filepath"
	"regexp"
	"slices"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/godbus/dbus/v5"

	"github.com/antidrift/antidrift/internal/testsupport/testenv"
)

// indicator is the JavaScript name of the panel indicator in the Shell.
const indicator = "Main.panel.statusArea['antidrift@antidrift.github.io']"

// Apps as a person has them: a browser, an editor, a terminal, installed
// with their names (the dialog's chips show them) and run as GTK windows
// with their application ids.
var (
	firefox = app{"org.mozilla.firefox", "Firefox", "web-browser-symbolic"}
	editor  = app{"org.gnome.TextEditor", "Text Editor", "text-editor-symbolic"}
	console = app{"org.gnome.Console", "Console", "utilities-terminal-symbolic"}
)

type app struct{ id, name, icon string }

func startGnomeApps(t *testing.T, g *testenv.GnomeShell) {
	t.Helper()
	for _, a := range []app{firefox, editor, console} {
		g.AddApp(t, a.id, a.name, a.icon)
		testenv.WaitForValue(t, wait, "the Shell's name of "+a.id, a.name, func() string {
			return g.EvalString(t, "imports.gi.Shell.AppSystem.get_default().lookup_app('"+a.id+".desktop')?.get_name() ?? ''")
		})
	}
}

// The GNOME panel indicator, installed from its zip with gnome-extensions
// install and driven as a person would (through Eval) on real GNOME Shell
// 48 beside the real daemon: it appears with the state's icon, starts a
// session from its dialog with the typed values, counts the last minute
// down in seconds, shows drift in its icon, completes and seals the session
// from its menu, and survives the daemon being killed and started again.
// Every row and control of the menu and the dialog takes keyboard focus and
// has a name for a screen reader; its text meets WCAG AA contrast in the
// dark and the light style. It is photographed in both styles, and in
// German.
func TestGnomeIndicator(t *testing.T) {
	testenv.EachRelease(t, testenv.GnomeReleases, testGnomeIndicator)
}

func testGnomeIndicator(t *testing.T, rel testenv.Release) {
	k := startGnomeDesktop(t, rel)
	g := k.g
	startGnomeApps(t, g)
	k.startDaemon(t, "evidence = \"gnome-shell\"\ndrift_grace = \"1s\"\nnudge_repeat = \"10m\"\nidle_after = \"1h\"\n")
	shots := testenv.ArtifactsDir(t)
	icon := func() string { return g.EvalString(t, indicator+"?._icon.icon_name ?? ''") }
	waitIcon := func(want string) {
		t.Helper()
		testenv.WaitForValue(t, wait, "the indicator's icon", want, icon)
	}
	waitIcon("changes-prevent-symbolic") // locked: a padlock
	if bad := regexp.MustCompile(`(?m)^.*(JS ERROR|JS WARNING|Extension antidrift@).*$`).FindAllString(g.Log(), -1); len(bad) > 0 {
		t.Fatalf("the Shell's log: got\n%s\nwant no errors about the extension", strings.Join(bad, "\n"))
	}
	if got := g.EvalString(t, "String("+indicator+"._label.visible)"); got != "false" {
		t.Errorf("the label's visible while locked: got %s, want false (the icon alone shows)", got)
	}
	if name := accessibleName(t, g, indicator); name != "antidrift: No session" {
		t.Errorf("the panel button's accessible name: got %q, want %q", name, "antidrift: No session")
	}

	// The dialog, filled in and submitted as a person would; the running
	// apps are offered as chips, by their names.
	g.OpenWindow(t, firefox.id, "Rust by Example — Mozilla Firefox")
	g.OpenWindow(t, console.id, "~/src/book — Console")
	g.OpenWindow(t, editor.id, "intro.md — Text Editor")
	dialog := indicator + "._dialog"
	mustEval(t, g, indicator+"._openStart()")
	mustEval(t, g, dialog+"._next.set_text('write the intro')")
	mustEval(t, g, dialog+"._done.set_text('the intro is committed')")
	mustEval(t, g, dialog+"._presets.buttons[0].emit('clicked', 1)") // 25 min, for the picture
	mustEval(t, g, dialog+"._level.buttons.find(b => b._value === 'warn').emit('clicked', 1)")
	for _, a := range []app{editor, console} {
		mustEval(t, g, dialog+"._apps.buttons.find(b => b._value === '"+a.id+"').checked = true")
	}
	checkReachable(t, g, dialog+".dialogLayout", "the start dialog")
	quietTray(t, g)
	chips := g.EvalString(t, dialog+"._apps.buttons.map(b => b.accessible_name).sort().join(', ')")
	if chips != "Console, Firefox, Text Editor" {
		t.Errorf("the app chips' names: got %q, want %q", chips, "Console, Firefox, Text Editor")
	}
	g.Screenshot(t, filepath.Join(shots, "gnome-start-dialog.png"))
	mustEval(t, g, dialog+"._duration.set_text('55s')") // short enough to watch the last minute
	// A refusal is shown beside its field, in the daemon's words.
	mustEval(t, g, dialog+"._next.set_text('  ')")
	mustEval(t, g, dialog+"._start()")
	testenv.WaitFor(t, wait, "the daemon's refusal beside Next action (next_action …)", func() string {
		return g.EvalString(t, dialog+"._errors.next_action.visible ? "+dialog+"._errors.next_action.text : ''")
	}, func(text string) bool { return strings.HasPrefix(text, "next_action") })
	checkContrast(t, g, dialog+"._errors.next_action", dialog+".dialogLayout._dialog", "the dialog's refusal (dark)")
	mustEval(t, g, dialog+"._next.set_text('write the intro')")
	mustEval(t, g, dialog+"._start()")
	gnomeWaitProp(t, k, "State", "active")
	p := k.props()
	for name, want := range map[string]string{
		"NextAction": "write the intro", "SuccessCondition": "the intro is committed", "Enforcement": "warn",
	} {
		if got := p.String(t, name); got != want {
			t.Errorf("%s after the dialog: got %q, want %q", name, got, want)
		}
	}
	if got := gnomeProp[uint64](t, k, "TimeboxSeconds"); got != 55 {
		t.Errorf("TimeboxSeconds after the dialog: got %d, want 55", got)
	}
	if got, want := gnomeProp[[]string](t, k, "AllowedClasses"), []string{editor.id, console.id}; !slices.Equal(got, want) {
		t.Errorf("AllowedClasses after the dialog: got %q, want %q", got, want)
	}
	// The dialog closed itself; the indicator forgot it (no stale pointer
	// to a disposed actor).
	testenv.WaitForValue(t, wait, "the indicator's dialog once closed", "null", func() string { return g.EvalString(t, "String("+dialog+")") })

	// The label counts the last minute down in seconds.
	label := func() int {
		text := g.EvalString(t, indicator+"._label.visible ? "+indicator+"._label.text : ''")
		n, err := strconv.Atoi(strings.TrimSuffix(text, "s"))
		if err != nil || !strings.HasSuffix(text, "s") {
			return -1
		}
		return n
	}
	first := testenv.WaitFor(t, wait, "the label to show seconds left (-1: not in seconds)", label, func(n int) bool { return n > 0 })
	testenv.WaitFor(t, wait, fmt.Sprintf("the label to count down from %ds", first), label, func(n int) bool { return n >= 0 && n < first })
	action := func(method string) {
		t.Helper()
		mustEval(t, g, indicator+"._actions.find(a => a.action.method === '"+method+"').item.activate(null)")
	}
	action("Extend")
	gnomeWaitProp(t, k, "TimeboxSeconds", uint64(655))
	// Time for the pictures: a 35-minute timebox, as a person would pick.
	if _, err := k.gdbus(t, "org.antidrift.Session1.Extend", "uint64 1445"); err != nil {
		t.Fatalf("Extend: %v", err)
	}
	gnomeWaitProp(t, k, "TimeboxSeconds", uint64(2100))
	quietTray(t, g)

	// Drift shows in the icon; the menu's rows are all reachable, named
	// and readable, and its buckets follow on their own while it is open.
	waitIcon("alarm-symbolic")
	g.OpenWindow(t, firefox.id, "YouTube — Mozilla Firefox")
	waitIcon("dialog-warning-symbolic")
	mustEval(t, g, indicator+".menu.open()")
	testenv.WaitForValue(t, wait, "the menu's first bucket visible (where the time went)", "true", func() string {
		return g.EvalString(t, "String("+indicator+"._buckets[0].visible)")
	})
	bucket := func() string { return g.EvalString(t, indicator+"._buckets.map(b => b.label.text).join('|')") }
	before := bucket()
	testenv.WaitFor(t, wait, fmt.Sprintf("the open menu's buckets to grow on their own from %q", before), bucket, func(b string) bool { return b != before })
	checkReachable(t, g, indicator+".menu.box", "the menu")
	if name := accessibleName(t, g, indicator); !strings.HasPrefix(name, "antidrift: write the intro · ") || !strings.HasSuffix(name, "Drifting") {
		t.Errorf("the panel button's accessible name: got %q, want the action, the time left and the drift", name)
	}
	checkContrast(t, g, indicator+"._doneWhen.label", indicator+".menu.box", "Done when (dark)")
	checkContrast(t, g, indicator+"._buckets[0].label", indicator+".menu.box", "a bucket (dark)")
	menuShot(t, g, filepath.Join(shots, "gnome-menu.png"))
	mustEval(t, g, indicator+".menu.close()")
	panelShot(t, g, filepath.Join(shots, "gnome-panel.png"))

	// The light style: the same text, still readable.
	mustEval(t, g, "new (imports.gi.Gio.Settings)({schema_id: 'org.gnome.desktop.interface'}).set_string('color-scheme', 'prefer-light')")
	testenv.WaitForValue(t, wait, "the Shell's style variant", "light", func() string { return g.EvalString(t, "String(Main.getStyleVariant())") })
	mustEval(t, g, indicator+".menu.open()")
	checkContrast(t, g, indicator+"._doneWhen.label", indicator+".menu.box", "Done when (light)")
	checkContrast(t, g, indicator+"._buckets[0].label", indicator+".menu.box", "a bucket (light)")
	checkContrast(t, g, indicator+"._nextAction.label", indicator+".menu.box", "the next action (light)")
	menuShot(t, g, filepath.Join(shots, "gnome-menu-light.png"))
	mustEval(t, g, indicator+".menu.close()")
	panelShot(t, g, filepath.Join(shots, "gnome-panel-light.png"))
	mustEval(t, g, indicator+"._openStart()")
	mustEval(t, g, dialog+"._next.set_text('review chapter two')")
	mustEval(t, g, dialog+"._start()")
	testenv.WaitForValue(t, wait, "a refusal visible in the light dialog", "true", func() string {
		return g.EvalString(t, "String("+dialog+"?._errors.other.visible || "+dialog+"?._errors.success_condition.visible)")
	})
	checkContrast(t, g, "Object.values("+dialog+"._errors).find(l => l.visible)", dialog+".dialogLayout._dialog", "the dialog's refusal (light)")
	mustEval(t, g, dialog+".close()")
	mustEval(t, g, "new (imports.gi.Gio.Settings)({schema_id: 'org.gnome.desktop.interface'}).set_string('color-scheme', 'default')")

	// The menu drives the session: Complete, End & seal.
	action("Complete")
	gnomeWaitProp(t, k, "State", "review")
	waitIcon("object-select-symbolic")
	if got := g.EvalString(t, "String("+indicator+"._actions.find(a => a.action.method === 'Complete').item.visible)"); got != "false" {
		t.Errorf("Complete's visible in review: got %s, want false", got)
	}
	action("End")
	gnomeWaitProp(t, k, "State", "locked")
	waitIcon("changes-prevent-symbolic")
	// Today's totals come from the daemon's Report, read as the menu opens.
	mustEval(t, g, indicator+".menu.open()")
	testenv.WaitFor(t, wait, "the menu to count today's session (… focused, 1 session)", func() string {
		return g.EvalString(t, indicator+"._today.label.text")
	}, func(text string) bool { return strings.HasSuffix(text, "focused, 1 session") })
	mustEval(t, g, indicator+".menu.close()")

	// The daemon killed: the indicator says so, and opening the menu does
	// not start it (only the person does, with "Start antidrift").
	k.daemon.Stop()
	waitIcon("action-unavailable-symbolic")
	mustEval(t, g, indicator+".menu.open()")
	mustEval(t, g, indicator+".menu.close()")
	if g.EvalString(t, "String("+indicator+"._startDaemon.visible || "+indicator+"._status.label.text)") == "" {
		t.Error("the menu with the daemon stopped: got nothing said of it, want Start antidrift or a status")
	}
	k.startDaemon(t, "evidence = \"gnome-shell\"\n")
	waitIcon("changes-prevent-symbolic")
	if bad := regexp.MustCompile(`(?m)^.*(JS ERROR|JS WARNING|Extension antidrift@|antidrift@antidrift.github.io).*$`).FindAllString(g.Log(), -1); len(bad) > 0 {
		t.Fatalf("the Shell's log: got\n%s\nwant no errors about the extension", strings.Join(bad, "\n"))
	}

	// In German: the Shell started again in a German locale; the
	// extension's own translation (packed in its zip) speaks.
	g.Stop()
	g.ExtraEnv = testenv.GermanLocale(t)
	g.Start(t)
	waitIcon("changes-prevent-symbolic")
	g.OpenWindow(t, editor.id, "intro.md — Texteditor")
	mustEval(t, g, indicator+"._openStart()")
	if title := g.EvalString(t, dialog+".contentLayout.get_first_child().title"); title != "Sitzung starten" {
		t.Errorf("the dialog's title in German: got %q, want %q", title, "Sitzung starten")
	}
	mustEval(t, g, dialog+"._next.set_text('Einleitung schreiben')")
	mustEval(t, g, dialog+"._done.set_text('die Einleitung ist eingecheckt')")
	quietTray(t, g)
	g.Screenshot(t, filepath.Join(shots, "gnome-start-dialog-de.png"))
	mustEval(t, g, dialog+".close()")
}

// quietTray withdraws the Shell's own notices (a headless session says the
// screen lock is off), so the pictures show only what antidrift shows. It
// withdraws them again while it waits: a notice the Shell posts a moment
// later (a "System" one, on a loaded machine) would otherwise stay for
// its banner's whole timeout.
func quietTray(t *testing.T, g *testenv.GnomeShell) {
	t.Helper()
	testenv.WaitForValue(t, wait, "the Shell's banner", "null", func() string {
		mustEval(t, g, "Main.messageTray.getSources().forEach(s => s.notifications.slice().forEach(n => n.destroy()))")
		return g.EvalString(t, "String(Main.messageTray._banner ?? null)")
	})
}

// accessibleName is what a screen reader says of actor js: St's accessible
// name, or its label actor's text.
func accessibleName(t *testing.T, g *testenv.GnomeShell, js string) string {
	t.Helper()
	return g.EvalString(t, "(a => a.accessible_name || a.label_actor?.text || '')("+js+")")
}

// checkReachable checks every visible control and row under actor js: it
// takes keyboard focus (or is insensitive on purpose: an action the
// daemon does not permit now) and has an accessible name.
func checkReachable(t *testing.T, g *testenv.GnomeShell, js, what string) {
	t.Helper()
	walk := `(root => {
		const bad = [];
		let n = 0;
		const visit = a => {
			if (!a.visible)
				return;
			const menuItem = a._activatable !== undefined; // a PopupBaseMenuItem
			const control = a instanceof imports.gi.St.Button || a instanceof imports.gi.St.Entry || menuItem;
			if (control && !a.constructor.name.includes('Separator')) {
				n++;
				const name = a.accessible_name || a.label_actor?.text || a.label?.text ||
					(typeof a.label === 'string' ? a.label : '');
				const insensitive = menuItem && !a.sensitive && a._activatable;
				if (!name)
					bad.push('no accessible name: ' + a.constructor.name + ' ' + (a.style_class ?? ''));
				if (!a.can_focus && !insensitive && !(a instanceof imports.gi.St.Entry))
					bad.push('no keyboard focus: ' + name);
				return;
			}
			for (const c of a.get_children())
				visit(c);
		};
		visit(root);
		return JSON.stringify({n, bad});
	})(` + js + `)`
	var got struct {
		N   int
		Bad []string
	}
	if err := json.Unmarshal([]byte(g.EvalString(t, walk)), &got); err != nil {
		t.Fatal(err)
	}
	if got.N < 4 {
		t.Fatalf("%s: got %d controls, want at least 4", what, got.N)
	}
	for _, b := range got.Bad {
		t.Errorf("%s: got a control with %s, want every control named and focusable", what, b)
	}
}

// checkContrast checks the WCAG contrast ratio of label js's text against
// the first opaque background at or above bg js: at least 4.5:1 (AA).
func checkContrast(t *testing.T, g *testenv.GnomeShell, js, bg, what string) {
	t.Helper()
	const ratio = `((label, bgActor) => {
		const lum = c => {
			const ch = v => { v /= 255; return v <= 0.03928 ? v / 12.92 : ((v + 0.055) / 1.055) ** 2.4; };
			return 0.2126 * ch(c.red) + 0.7152 * ch(c.green) + 0.0722 * ch(c.blue);
		};
		let a = bgActor, back = null;
		while (a && !back) {
			if (a instanceof imports.gi.St.Widget) {
				const c = a.get_theme_node().get_background_color();
				if (c.alpha > 200)
					back = c;
			}
			a = a.get_parent();
		}
		const fg = label.get_theme_node().get_foreground_color();
		const [l1, l2] = [lum(fg), lum(back)].sort((x, y) => y - x);
		return String((l1 + 0.05) / (l2 + 0.05));
	})(`
	got, err := strconv.ParseFloat(g.EvalString(t, ratio+js+", "+bg+")"), 64)
	if err != nil {
		t.Fatal(err)
	}
	if got < 4.5 {
		t.Errorf("%s: contrast %.2f:1, want at least 4.5:1", what, got)
	}
}

// The extension enabled and disabled 50 times with the daemon running a
// session (so the indicator counts it down), its menu open at every other
// disable: after the last disable the Shell holds as many actors, panel
// menus and status-area entries as before the first, nothing is left on
// the bus (the hands unexported, the Shell's match rules and names as
// before), every signal handler and GLib source the extension made (the
// Shell's code working for it included) is gone, and the Shell logged
// nothing about it. Enabled once more, it works. Broken (its compiled
// settings schema deleted), its enable() fails and leaves nothing behind.
func TestGnomeExtensionEnableDisable(t *testing.T) {
	testenv.EachRelease(t, testenv.GnomeReleases, testGnomeExtensionEnableDisable)
}

func testGnomeExtensionEnableDisable(t *testing.T, rel testenv.Release) {
	k := startGnomeDesktop(t, rel)
	g := k.g
	k.startDaemon(t, gnomeConfig)
	if _, err := k.gdbus(t, "org.antidrift.Session1.Start", "write the intro", "the intro is committed", "uint64 3600", "", "[]"); err != nil {
		t.Fatalf("Start: %v\n%s", err, k.daemon.Output())
	}
	gnomeWaitProp(t, k, "State", "active")
	ext := g.Conn.Object("org.gnome.Shell", "/org/gnome/Shell")
	const uuid = "antidrift@antidrift.github.io"
	toggle := func(method string, wantState float64) {
		t.Helper()
		if err := ext.Call("org.gnome.Shell.Extensions."+method, 0, uuid).Err; err != nil {
			t.Fatal(err)
		}
		testenv.WaitForValue(t, wait, "the extension's state after "+method, wantState, func() float64 {
			var info map[string]dbus.Variant
			if err := ext.Call("org.gnome.Shell.Extensions.GetExtensionInfo", 0, uuid).Store(&info); err != nil {
				t.Fatal(err)
			}
			s, _ := info["state"].Value().(float64)
			return s
		})
	}
	var shellName string
	if err := g.Conn.BusObject().Call("org.freedesktop.DBus.GetNameOwner", 0, "org.gnome.Shell").Store(&shellName); err != nil {
		t.Fatal(err)
	}
	type counts struct {
		Actors, Menus, Status int
		Rules, Names          uint32
		Hands                 bool
	}
	// Left out of the counts: what the Shell fills and empties by itself,
	// never the extension: the message tray, the Overview (its app grid
	// is built a while after starting) and the notification list in the
	// date menu (a notification there expires mid-test: once, on GNOME
	// 51, that was 32 actors fewer by the end).
	const leftOut = `[Main.messageTray, Main.layoutManager.overviewGroup,
		Main.panel.statusArea.dateMenu?._messageList].includes(a)`
	// kinds counts the actors on the stage by what they are (constructor
	// and name), so a failure says which ones the Shell holds more or
	// fewer of; their sum is the count compared.
	kinds := func() map[string]int {
		t.Helper()
		js := `JSON.stringify((function n(a, m) {
			if (` + leftOut + `)
				return m;
			const k = a.constructor.name + (a.name ? '#' + a.name : '');
			m[k] = (m[k] || 0) + 1;
			a.get_children().forEach(c => n(c, m));
			return m;
		})(global.stage, {}))`
		var m map[string]int
		if err := json.Unmarshal([]byte(g.EvalString(t, js)), &m); err != nil {
			t.Fatal(err)
		}
		return m
	}
	count := func() counts {
		t.Helper()
		var c counts
		js := `JSON.stringify({
			Menus: Main.panel.menuManager._menus.length,
			Status: Object.keys(Main.panel.statusArea).length,
		})`
		if err := json.Unmarshal([]byte(g.EvalString(t, js)), &c); err != nil {
			t.Fatal(err)
		}
		for _, n := range kinds() {
			c.Actors += n
		}
		var stats map[string]dbus.Variant
		if err := g.Conn.BusObject().Call("org.freedesktop.DBus.Debug.Stats.GetConnectionStats", 0, shellName).Store(&stats); err != nil {
			t.Fatalf("the bus's connection stats: %v", err)
		}
		c.Rules, _ = stats["MatchRules"].Value().(uint32)
		c.Names, _ = stats["BusNames"].Value().(uint32)
		var xml string
		if err := g.Conn.Object("org.gnome.Shell", "/org/antidrift").Call("org.freedesktop.DBus.Introspectable.Introspect", 0).Store(&xml); err == nil {
			c.Hands = strings.Contains(xml, `<node name="Shell"`)
		}
		return c
	}
	toggle("DisableExtension", 2)
	// The base is taken once the Shell has settled: the garbage of the
	// enable at start-up collected (a collected proxy's match rules leave
	// the bus a moment later), four counts in a row, over a second, the
	// same.
	var base counts
	var recent [4]counts
	testenv.WaitFor(t, wait, "the Shell to settle after the first disable (the last four counts the same)", func() [4]counts {
		time.Sleep(250 * time.Millisecond)
		mustEval(t, g, "imports.system.gc()")
		base = count()
		recent = [4]counts{recent[1], recent[2], recent[3], base}
		return recent
	}, func(c [4]counts) bool { return c[0] == c[1] && c[1] == c[2] && c[2] == c[3] })
	if base.Hands {
		t.Fatal("the hands with the extension disabled: got exported, want gone")
	}
	baseKinds := kinds()
	// The indicator shows the session: its proxy is connected, its
	// countdown timeout set.
	counting := func(what string) {
		t.Helper()
		testenv.WaitForValue(t, wait, what+" (its label shown and not empty)", "true", func() string {
			return g.EvalString(t, "String("+indicator+"?._label.visible && "+indicator+"._label.text !== '')")
		})
	}
	probe := installLeakProbe(t, g, uuid)
	for i := 0; i < 50; i++ {
		toggle("EnableExtension", 1)
		if i == 0 {
			if c := count(); !c.Hands {
				t.Fatal("the hands with the extension enabled: got not exported, want exported")
			}
		}
		counting("the indicator to count the session down")
		if i%2 == 1 {
			// Open as a person sees it: laid out on the screen. (GNOME
			// Shell 48 itself trips over any panel button destroyed in
			// the same frame its menu opened: Clutter then lays out the
			// disposed menu.)
			mustEval(t, g, indicator+".menu.open()")
			testenv.WaitForValue(t, wait, "the open menu's has_allocation()", "true", func() string {
				return g.EvalString(t, "String("+indicator+".menu.actor.has_allocation())")
			})
		}
		toggle("DisableExtension", 2)
	}
	var after counts
	t.Cleanup(func() {
		if !t.Failed() {
			return
		}
		t.Logf("before: %+v\nafter:  %+v", base, after)
		now := kinds()
		either := maps.Clone(baseKinds)
		maps.Copy(either, now)
		for _, k := range slices.Sorted(maps.Keys(either)) {
			if baseKinds[k] != now[k] {
				t.Logf("actors %s: before %d, now %d", k, baseKinds[k], now[k])
			}
		}
	})
	testenv.WaitFor(t, wait, fmt.Sprintf("the Shell to hold what it held before the first enable, %+v", base), func() counts {
		mustEval(t, g, "imports.system.gc()")
		after = count()
		return after
	}, func(c counts) bool { return c == base })
	// The probe saw what the extension makes each time (else it proves
	// nothing): the focus handler, the countdown, the open menu's reads.
	seen := probe.checkNothingLeft(t, "after 50 enables and disables").Seen
	for what, least := range map[string]int{
		"MetaDisplay notify::focus-window": 50,
		"timeout_add from _tick":           50,
		"timeout_add from _refreshBuckets": 25,
	} {
		if seen[what] < least {
			t.Errorf("the probe's count of %s over 50 rounds: got %d, want at least %d; it saw %v", what, seen[what], least, seen)
		}
	}
	toggle("EnableExtension", 1)
	counting("the indicator after 50 rounds")

	if bad := regexp.MustCompile(`(?m)^.*(JS ERROR|JS WARNING|antidrift@|antidrift:|disposed).*$`).FindAllString(g.Log(), -1); len(bad) > 0 {
		t.Fatalf("the Shell's log over 50 enables and disables: got\n%s\nwant nothing about the extension", strings.Join(bad, "\n"))
	}

	// A broken install (its compiled settings schema gone): enable() fails,
	// and what it had made is gone with it (the Shell calls no disable()
	// then).
	toggle("DisableExtension", 2)
	compiled := filepath.Join(g.Home, ".local/share/gnome-shell/extensions", uuid, "schemas", "gschemas.compiled")
	if err := os.Remove(compiled); err != nil {
		t.Fatalf("gnome-extensions install compiled no schema: %v", err)
	}
	toggle("EnableExtension", 3) // ERROR
	testenv.WaitFor(t, wait, fmt.Sprintf("the Shell to hold what it held before the failed enable, %+v", base), func() counts {
		after = count()
		return after
	}, func(c counts) bool { return c == base })
	probe.checkNothingLeft(t, "after the failed enable")
	probe.remove(t)
}

func mustEval(t *testing.T, g *testenv.GnomeShell, js string) {
	t.Helper()
	if _, err := g.Eval(js); err != nil {
		t.Fatal(err)
	}
}

// panelShot saves the whole top bar.
func panelShot(t *testing.T, g *testenv.GnomeShell, path string) {
	t.Helper()
	height, _ := strconv.Atoi(g.EvalString(t, "String(Main.panel.height)"))
	cropShot(t, g, path, func(b image.Rectangle) image.Rectangle {
		return image.Rect(b.Min.X, 0, b.Max.X, max(height, 24))
	})
}

// menuShot saves the right part of the screen down to below the open menu.
func menuShot(t *testing.T, g *testenv.GnomeShell, path string) {
	t.Helper()
	var box struct{ X, Y, W, H float64 }
	js := `(([x, y], [w, h]) => JSON.stringify({X: x, Y: y, W: w, H: h}))(` + indicator + `.menu.box.get_transformed_position(), ` + indicator + `.menu.box.get_transformed_size())`
	if err := json.Unmarshal([]byte(g.EvalString(t, js)), &box); err != nil {
		t.Fatal(err)
	}
	cropShot(t, g, path, func(b image.Rectangle) image.Rectangle {
		return image.Rect(max(0, int(box.X)-200), 0, b.Max.X, min(b.Max.Y, int(box.Y+box.H)+40))
	})
}

// cropShot saves the part of a screenshot that pick picks of its bounds.
func cropShot(t *testing.T, g *testenv.GnomeShell, path string, pick func(image.Rectangle) image.Rectangle) {
	t.Helper()
	full := path + ".full.png"
	g.Screenshot(t, full)
	defer os.Remove(full)
	img := testenv.DecodePNG(t, full)
	savePNG(t, path, crop(img, pick(img.Bounds())))
}
