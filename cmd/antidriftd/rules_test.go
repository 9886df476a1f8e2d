package main

import (
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/antidrift/antidrift/internal/testsupport/testenv"
)

// Rules through the bus, the config and the nudge: a title pattern allows
// part of a class, a configured distraction beats it, and "Not a
// distraction" in dunst's menu exempts the window, also after a restart.
func TestTitleRulesDistractionsAndNotADistractionOnADesktop(t *testing.T) {
	k := startDesktop(t, true, driftConfig+`distractions = ["*:*videos*"]`+"\n")
	mon := testenv.StartMonitor(t, k.bus, "type='method_call',interface='org.freedesktop.Notifications',member='Notify'")
	nudges := testenv.StartMonitor(t, k.bus, "type='signal',member='Nudge',path='/org/antidrift/Session1'")

	// A bad pattern is refused, naming the entry and the rule.
	_, err := k.d.Busctl(t, "call", "Start", "sstsas", "write code", "tests pass", "600", "block", "2", "Editor", "Distraction:[docs")
	if err == nil || !strings.Contains(err.Error(), `allowed_classes entry 2 "Distraction:[docs" is not a valid entry`) {
		t.Fatalf("a bad pattern: %v", err)
	}
	if got := k.prop(t, "State"); got != `s "locked"` {
		t.Fatalf("a refused Start changed the state: %s", got)
	}

	call(t, k.d, "Start", "sstsas", "write code", "tests pass", "600", "block", "2", "Editor", "Distraction:*docs*")
	k.x.SetTitle(t, k.distraction, "project docs")
	k.x.Activate(t, k.distraction)
	k.waitProp(t, "DriftReason", `s "matches allowed Distraction:*docs*"`)

	// The same class, another title: a configured distraction (the
	// iconify hands focus back at once, so the Nudge signal tells).
	k.x.SetTitle(t, k.distraction, "cat videos")
	nudges.WaitFor(t, `string "matches distraction *:*videos*"`, wait)
	notify := mon.WaitFor(t, "Drifting: Distraction", wait)
	waitFor(t, wait, "the distraction to be iconified", func() (bool, string) {
		state := k.x.WMState(t, k.distraction)
		return state == "Iconic", fmt.Sprintf("%s, MinimizeCount %s, Drift %s\n%s", state, k.prop(t, "MinimizeCount"), k.prop(t, "Drift"), k.d.Output())
	})
	if !strings.Contains(notify, `"not_distraction"`) || !strings.Contains(notify, `"Not a distraction"`) {
		t.Fatalf("the nudge lacks Not a distraction:\n%s", notify)
	}

	k.dunst.ChooseNext("Not a distraction")
	k.dunst.OpenMenu(t)
	testenv.WaitUntil(t, wait, "the raw log to record Not a distraction", func() bool {
		id := unquote(t, k.prop(t, "SessionId"))
		data, _ := os.ReadFile(filepath.Join(k.d.StateDir, "sessions", id+".jsonl"))
		return strings.Contains(string(data), `"mark":"not_distraction"`) && strings.Contains(string(data), `"title":"cat videos"`)
	})
	k.x.Activate(t, k.distraction)
	k.waitProp(t, "DriftReason", `s "you marked this Distraction window as not a distraction"`)
	if got := k.prop(t, "Drift"); got != `s "on_task"` {
		t.Fatalf("Drift on the exempted window: %s", got)
	}

	// A restarted daemon replays the exemption from the raw log.
	k.x.Activate(t, k.editor)
	k.waitProp(t, "CurrentClass", `s "Editor"`)
	k.d.Stop(t)
	k.d.Start(t)
	k.waitProp(t, "CurrentClass", `s "Editor"`)
	k.x.Activate(t, k.distraction)
	k.waitProp(t, "DriftReason", `s "you marked this Distraction window as not a distraction"`)
	before := len(nudges.Messages())
	k.x.SetTitle(t, k.distraction, "dog videos")
	testenv.WaitUntil(t, wait, "another title of the class to be a distraction again", func() bool {
		return len(nudges.Messages()) > before
	})
}
