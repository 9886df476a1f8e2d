package main

import (
	"encoding/json"
	"path/filepath"
	"strings"
	"testing"

	"github.com/antidrift/antidrift/internal/testsupport/testenv"
)

// drawnTexts is, as JSON, what Pango drew of every Clutter.Text under the
// actor js: its layout's text, which is the text with any markup it read
// taken out.
func drawnTexts(t *testing.T, g *testenv.GnomeShell, js string) []string {
	t.Helper()
	var out []string
	walk := `(root => { const out = []; const walk = a => { if (a instanceof imports.gi.Clutter.Text) out.push(a.get_layout().get_text()); a.get_children().forEach(walk); }; walk(root); return JSON.stringify(out); })(` + js + `)`
	if err := json.Unmarshal([]byte(g.EvalString(t, walk)), &out); err != nil {
		t.Fatal(err)
	}
	return out
}

func drawnWith(texts []string, substr string) string {
	for _, s := range texts {
		if strings.Contains(s, substr) {
			return s
		}
	}
	return ""
}

// On each GNOME Shell, the indicator's menu and the Shell's own notification
// (its server advertises body-markup) show a next action, a success
// condition and a window title with markup in them as the text they are:
// what Pango draws of each is the text, no tag read.
func TestGnomeShowsMarkupAsText(t *testing.T) {
	testenv.EachRelease(t, testenv.GnomeReleases, testGnomeShowsMarkupAsText)
}

func testGnomeShowsMarkupAsText(t *testing.T, rel testenv.Release) {
	k := startGnomeDesktop(t, rel)
	g := k.g
	g.OpenWindow(t, "org.antidrift.Work", "main.go - editor")
	k.startDaemon(t, gnomeConfig)
	gnomeWaitProp(t, k, "CurrentClass", "org.antidrift.Work")
	g.StartNotifications(t)

	next := `<b>x</b> & y <img src="x.png"> <a href="http://evil.example/">click me</a>`
	done := `<i>done</i> &amp; dusted`
	title := `<span foreground="red">red</span> & <b>bold</b>`
	// GVariant text: single-quoted strings (a bare <…> would be a variant).
	if _, err := k.gdbus(t, "org.antidrift.Session1.Start", "'"+next+"'", "'"+done+"'", "uint64 600", "warn", "['org.antidrift.Work']"); err != nil {
		t.Fatalf("Start: %v\n%s", err, k.daemon.Output())
	}
	g.OpenWindow(t, "org.antidrift.Drift", title)
	gnomeWaitProp(t, k, "Drift", "drifting")

	// The nudge, as the message list draws it.
	const drifting = "Main.messageTray.getSources().flatMap(s => s.notifications).find(n => n.title.startsWith('Drifting'))"
	testenv.WaitFor(t, wait, "the nudge in the message tray (a title)", func() string {
		out, err := g.Eval("String(" + drifting + "?.title ?? '')")
		if err != nil {
			return err.Error()
		}
		return out
	}, func(out string) bool { return strings.HasPrefix(out, `"`) && out != `""` })
	const dateMenu = "Main.panel.statusArea.dateMenu.menu"
	mustEval(t, g, dateMenu+".open()")
	var body string
	testenv.WaitFor(t, wait, "the message list to draw the nudge (a text with Next:)", func() []string { return drawnTexts(t, g, dateMenu+".box") },
		func(texts []string) bool { body = drawnWith(texts, "Next:"); return body != "" })
	g.Screenshot(t, filepath.Join(testenv.ArtifactsDir(t), "gnome-markup-nudge.png"))
	mustEval(t, g, dateMenu+".close()")
	// (The list draws the body on one line.)
	for _, want := range []string{"Next: " + next, "Done when: " + done} {
		if !strings.Contains(body, want) {
			t.Errorf("the nudge's body as the Shell draws it: got %q, want it to show %q", body, want)
		}
	}

	// The indicator's menu: the next action, done when, and the bucket
	// of the window's (folded) title.
	mustEval(t, g, indicator+".menu.open()")
	testenv.WaitForValue(t, wait, "the menu's first bucket visible (where the time went)", "true", func() string {
		return g.EvalString(t, "String("+indicator+"._buckets[0].visible)")
	})
	menuShot(t, g, filepath.Join(testenv.ArtifactsDir(t), "gnome-markup-menu.png"))
	drawn := drawnTexts(t, g, indicator+".menu.box")
	mustEval(t, g, indicator+".menu.close()")
	for _, want := range []string{next, "Done when: " + done, "org.antidrift.Drift · " + title} {
		if drawnWith(drawn, want) == "" {
			t.Errorf("the menu: got %q drawn, want %q among them", drawn, want)
		}
	}
}
