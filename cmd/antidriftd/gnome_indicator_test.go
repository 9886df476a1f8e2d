package main

import (
	"image"
	"image/png"
	"os"
	"path/filepath"
	"regexp"
	"strconv"
	"strings"
	"testing"

	"github.com/antidrift/antidrift/internal/testenv"
)

// indicator is the JavaScript name of the panel indicator in the Shell.
const indicator = "Main.panel.statusArea['antidrift@antidrift.github.io']"

// The GNOME panel indicator, driven as a person would (through Eval) on
// real GNOME Shell 48 beside the real daemon: it appears with the state's
// icon, starts a session from its dialog with the typed values, counts the
// last minute down in seconds, shows drift in its icon, completes and seals
// the session from its menu, and survives the daemon being killed and
// started again. It is photographed: the panel, the open menu, the dialog.
func TestGnomeIndicator(t *testing.T) {
	k := startGnomeDesktop(t)
	k.startDaemon(t, "evidence = \"gnome-shell\"\ndrift_grace = \"1s\"\nnudge_repeat = \"10m\"\nidle_after = \"1h\"\n")
	g := k.g
	shots := testenv.ArtifactsDir(t)
	icon := func() string { return g.EvalString(t, indicator+"?._icon.icon_name ?? ''") }
	waitIcon := func(want string) {
		t.Helper()
		testenv.WaitUntil(t, wait, "the indicator's icon to be "+want, func() bool { return icon() == want })
	}
	waitIcon("changes-prevent-symbolic") // locked: a padlock
	if bad := regexp.MustCompile(`(?m)^.*(JS ERROR|JS WARNING|Extension antidrift@).*$`).FindAllString(g.Log(), -1); len(bad) > 0 {
		t.Fatalf("the Shell logged errors about the extension:\n%s", strings.Join(bad, "\n"))
	}
	if g.EvalString(t, "String("+indicator+"._label.visible)") != "false" {
		t.Error("the label shows while locked; the icon alone should")
	}
	panelShot(t, g, filepath.Join(shots, "gnome-panel-locked.png"))

	// The dialog, filled in and submitted as a person would; the running
	// work app is offered as a chip.
	g.OpenWindow(t, "org.antidrift.Work", "main.go - editor")
	dialog := indicator + "._dialog"
	mustEval(t, g, indicator+"._openStart()")
	mustEval(t, g, dialog+"._next.set_text('write the intro')")
	mustEval(t, g, dialog+"._done.set_text('the intro is committed')")
	mustEval(t, g, dialog+"._duration.set_text('55s')")
	mustEval(t, g, dialog+"._level.buttons.find(b => b._value === 'warn').emit('clicked', 1)")
	mustEval(t, g, dialog+"._apps.buttons.find(b => b._value === 'org.antidrift.Work').checked = true")
	g.Screenshot(t, filepath.Join(shots, "gnome-start-dialog.png"))
	// A refusal is shown beside its field, in the daemon's words.
	mustEval(t, g, dialog+"._next.set_text('  ')")
	mustEval(t, g, dialog+"._start()")
	testenv.WaitUntil(t, wait, "the daemon's refusal beside Next action", func() bool {
		return strings.HasPrefix(g.EvalString(t, dialog+"._errors.next_action.visible ? "+dialog+"._errors.next_action.text : ''"), "next_action must not be empty")
	})
	mustEval(t, g, dialog+"._next.set_text('write the intro')")
	mustEval(t, g, dialog+"._start()")
	k.waitProp(t, "State", "(<'active'>,)", false)
	for name, want := range map[string]string{
		"NextAction": "(<'write the intro'>,)", "SuccessCondition": "(<'the intro is committed'>,)",
		"TimeboxSeconds": "(<uint64 55>,)", "Enforcement": "(<'warn'>,)", "AllowedClasses": "(<['org.antidrift.Work']>,)",
	} {
		if got := k.prop(t, name); got != want {
			t.Errorf("%s = %s after the dialog, want %s", name, got, want)
		}
	}

	// The label counts the last minute down in seconds.
	label := func() int {
		text := g.EvalString(t, indicator+"._label.visible ? "+indicator+"._label.text : ''")
		n, err := strconv.Atoi(strings.TrimSuffix(text, "s"))
		if err != nil || !strings.HasSuffix(text, "s") {
			return -1
		}
		return n
	}
	first := -1
	testenv.WaitUntil(t, wait, "the label to show seconds left", func() bool { first = label(); return first > 0 })
	testenv.WaitUntil(t, wait, "the label to count down", func() bool { n := label(); return n >= 0 && n < first })

	// Drift shows in the icon.
	waitIcon("alarm-symbolic")
	g.OpenWindow(t, "org.antidrift.Drift", "cat videos")
	waitIcon("dialog-warning-symbolic")
	mustEval(t, g, indicator+".menu.open()")
	g.Screenshot(t, filepath.Join(shots, "gnome-menu-drifting.png"))
	mustEval(t, g, indicator+".menu.close()")
	panelShot(t, g, filepath.Join(shots, "gnome-panel-drifting.png"))

	// The menu drives the session: +10 min, Complete, End & seal.
	action := func(label string) {
		t.Helper()
		mustEval(t, g, indicator+"._actions.find(a => a.action.label === '"+label+"').item.activate(null)")
	}
	action("+10 min")
	k.waitProp(t, "TimeboxSeconds", "(<uint64 655>,)", false)
	action("Complete")
	k.waitProp(t, "State", "(<'review'>,)", false)
	waitIcon("object-select-symbolic")
	if g.EvalString(t, "String("+indicator+"._actions.find(a => a.action.label === 'Complete').item.visible)") != "false" {
		t.Error("Complete is still offered in review")
	}
	action("End & seal")
	k.waitProp(t, "State", "(<'locked'>,)", false)
	waitIcon("changes-prevent-symbolic")
	// Today's totals come from the daemon's Report, read as the menu opens.
	mustEval(t, g, indicator+".menu.open()")
	testenv.WaitUntil(t, wait, "the menu to count today's session", func() bool {
		return strings.HasSuffix(g.EvalString(t, indicator+"._today.label.text"), "focused, 1 session")
	})
	mustEval(t, g, indicator+".menu.close()")

	// The daemon killed: the indicator says so; started again: back.
	k.daemon.Stop()
	waitIcon("action-unavailable-symbolic")
	k.startDaemon(t, "evidence = \"gnome-shell\"\n")
	waitIcon("changes-prevent-symbolic")
}

func mustEval(t *testing.T, g *testenv.GnomeShell, js string) {
	t.Helper()
	if _, err := g.Eval(js); err != nil {
		t.Fatal(err)
	}
}

// panelShot saves the top bar's right end, where the indicator sits.
func panelShot(t *testing.T, g *testenv.GnomeShell, path string) {
	t.Helper()
	full := path + ".full.png"
	g.Screenshot(t, full)
	defer os.Remove(full)
	img := testenv.DecodePNG(t, full)
	height, _ := strconv.Atoi(g.EvalString(t, "String(Main.panel.height)"))
	b := img.Bounds()
	crop := image.Rect(b.Max.X*5/8, 0, b.Max.X, max(height, 24))
	sub, ok := img.(interface {
		SubImage(image.Rectangle) image.Image
	})
	if !ok {
		t.Fatalf("a %T cannot be cropped", img)
	}
	out, err := os.Create(path)
	if err != nil {
		t.Fatal(err)
	}
	defer out.Close()
	if err := png.Encode(out, sub.SubImage(crop)); err != nil {
		t.Fatal(err)
	}
}
