package main

import (
	"os"
	"path/filepath"
	"regexp"
	"strings"
	"testing"
	"time"

	"github.com/antidrift/antidrift/internal/testsupport/testenv"
)

// In review, the GNOME indicator's menu lists the changes the session's own
// evidence argues for (ReviewProposals), each as the daemon words it, and a
// click on one applies it (ApplyProposal): the sentence saying what was
// written where is shown, the row says Applied and applies nothing again,
// and the rules file has the change. Outside review nothing of it shows.
func TestGnomeIndicatorReview(t *testing.T) {
	testenv.EachRelease(t, testenv.GnomeReleases, testGnomeIndicatorReview)
}

func testGnomeIndicatorReview(t *testing.T, rel testenv.Release) {
	k := startGnomeDesktop(t, rel)
	g := k.g
	startGnomeApps(t, g)
	// The rules file goes beside config.toml: the daemon's user writes there.
	if err := os.Chown(filepath.Join(k.cfgHome, "antidrift"), testenv.ShellUID, testenv.ShellUID); err != nil {
		t.Fatal(err)
	}
	g.OpenWindow(t, editor.id, "intro.md — Text Editor")
	k.startDaemon(t, gnomeConfig)
	if _, err := k.gdbus(t, "org.antidrift.Session1.Start", "write the intro", "it is written", "uint64 600", "warn", "['"+editor.id+"']"); err != nil {
		t.Fatalf("Start: %v\n%s", err, k.daemon.Output())
	}
	gnomeWaitProp(t, k, "State", "active")
	rows := func() string {
		return g.EvalString(t, indicator+"._proposalRows.filter(i => i.visible).map(i => i._change.text).join('|')")
	}
	mustEval(t, g, indicator+".menu.open(false)")
	if got := rows(); got != "" {
		t.Errorf("the menu's proposals while active: got %q, want none", got)
	}
	mustEval(t, g, indicator+".menu.close(false)")

	// Three quick looks at the console, each outlasting the grace (1s) by
	// a little, each followed straight by the editor: the evidence of a
	// grace too short (and of a window that looks part of the task).
	for range 3 {
		w := g.OpenWindow(t, console.id, "~ — Console")
		gnomeWaitProp(t, k, "Drift", "drifting")
		time.Sleep(2 * time.Second)
		w.Close()
		gnomeWaitProp(t, k, "CurrentClass", editor.id)
	}
	if _, err := k.gdbus(t, "org.antidrift.Session1.Complete"); err != nil {
		t.Fatal(err)
	}
	gnomeWaitProp(t, k, "State", "review")
	out, err := k.gdbus(t, "org.antidrift.Session1.ReviewProposals")
	if err != nil {
		t.Fatal(err)
	}
	if !strings.Contains(out, "drift_grace") {
		t.Fatalf("ReviewProposals after three near misses: got %s, want a drift_grace proposal", out)
	}

	mustEval(t, g, indicator+".menu.open(false)")
	testenv.WaitFor(t, wait, "the menu's proposals to list the daemon's (one naming drift_grace)", rows, func(s string) bool {
		return strings.Contains(s, "drift_grace = ")
	})
	for _, change := range strings.Split(rows(), "|") {
		if !strings.Contains(out, change) {
			t.Errorf("the menu's proposal %q: not in ReviewProposals' reply %s", change, out)
		}
	}
	if got := g.EvalString(t, "String("+indicator+"._reviewHeader.visible)"); got != "true" {
		t.Errorf("the proposals' heading in review: visible %s, want true", got)
	}
	checkReachable(t, g, indicator+".menu.box", "the menu in review")
	menuShot(t, g, filepath.Join(testenv.ArtifactsDir(t), "gnome-menu-review.png"))

	// Apply the grace's proposal, as a click does.
	grace := indicator + "._proposalRows.find(i => i._change.text.startsWith('drift_grace'))"
	mustEval(t, g, grace+".activate(null)")
	applied := func() string {
		return g.EvalString(t, indicator+"._applied.visible ? "+indicator+"._applied.label.text : ''")
	}
	testenv.WaitFor(t, wait, "the menu to say what was applied (a sentence naming rules.toml)", applied, func(s string) bool {
		return strings.Contains(s, "rules.toml")
	})
	if got := g.EvalString(t, "String("+grace+".sensitive)"); got != "false" {
		t.Errorf("the applied proposal's row: sensitive %s, want false", got)
	}
	if got := g.EvalString(t, "String("+indicator+".menu.isOpen)"); got != "true" {
		t.Errorf("the menu after Apply: open %s, want true (the sentence is read there)", got)
	}
	rules, err := os.ReadFile(filepath.Join(k.cfgHome, "antidrift", "rules.toml"))
	if err != nil || !strings.Contains(string(rules), "drift_grace") {
		t.Errorf("rules.toml after Apply in the menu: got %q, %v; want drift_grace in it", rules, err)
	}
	menuShot(t, g, filepath.Join(testenv.ArtifactsDir(t), "gnome-menu-review-applied.png"))
	mustEval(t, g, indicator+".menu.close(false)")

	if _, err := k.gdbus(t, "org.antidrift.Session1.End"); err != nil {
		t.Fatal(err)
	}
	gnomeWaitProp(t, k, "State", "locked")
	mustEval(t, g, indicator+".menu.open(false)")
	if got := rows(); got != "" {
		t.Errorf("the menu's proposals after End: got %q, want none", got)
	}
	if got := applied(); got != "" {
		t.Errorf("the menu's applied sentence after End: got %q, want none", got)
	}
	if bad := regexp.MustCompile(`(?m)^.*(JS ERROR|JS WARNING|Extension antidrift@).*$`).FindAllString(g.Log(), -1); len(bad) > 0 {
		t.Errorf("the Shell's log: got\n%s\nwant no errors about the extension", strings.Join(bad, "\n"))
	}
}
