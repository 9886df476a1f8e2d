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
	s := k.d.Session(t)
	const refusal = `allowed_classes entry 2 "Distraction:[docs" is not a valid entry`
	err := s.Try("Start", testenv.Args("write code", "tests pass", uint64(600), "block", []string{"Editor", "Distraction:[docs"}))
	if err == nil {
		t.Fatalf("Start with a bad pattern: got success, want a refusal saying %s", refusal)
	}
	if name, msg := testenv.Refused(t, err); !strings.Contains(msg, refusal) {
		t.Fatalf("Start with a bad pattern: got %s %q, want a refusal saying %s", name, msg, refusal)
	}
	if got := s.String(t, "State"); got != "locked" {
		t.Fatalf("State after a refused Start: got %q, want %q", got, "locked")
	}

	startSession(t, s, "write code", "tests pass", 600, "block", "Editor", "Distraction:*docs*")
	k.x.SetTitle(t, k.distraction, "project docs")
	k.x.Activate(t, k.distraction)
	waitProp(t, k.d, "DriftReason", "matches allowed Distraction:*docs*")

	// The same class, another title: a configured distraction (the
	// iconify hands focus back at once, so the Nudge signal tells).
	k.x.SetTitle(t, k.distraction, "cat videos")
	nudges.WaitFor(t, `string "matches distraction *:*videos*"`, wait)
	notify := mon.WaitFor(t, "Drifting: Distraction", wait)
	waitFor(t, wait, "the distraction to be iconified", func() (bool, string) {
		state := k.x.WMState(t, k.distraction)
		return state == "Iconic", fmt.Sprintf("WM_STATE %s, MinimizeCount %d, Drift %q\n%s", state, s.Uint32(t, "MinimizeCount"), s.String(t, "Drift"), k.d.Output())
	})
	if !strings.Contains(notify, `"not_distraction"`) || !strings.Contains(notify, `"Not a distraction"`) {
		t.Fatalf("the nudge: got\n%s\nwant it to offer Not a distraction", notify)
	}

	k.dunst.ChooseNext("Not a distraction")
	k.dunst.OpenMenu(t)
	rawLog := filepath.Join(k.d.StateDir, "sessions", s.String(t, "SessionId")+".jsonl")
	testenv.WaitFor(t, wait, `the raw log to record Not a distraction ("mark":"not_distraction" of "title":"cat videos")`, func() string {
		data, _ := os.ReadFile(rawLog)
		return string(data)
	}, func(data string) bool {
		return strings.Contains(data, `"mark":"not_distraction"`) && strings.Contains(data, `"title":"cat videos"`)
	})
	k.x.Activate(t, k.distraction)
	waitProp(t, k.d, "DriftReason", "you marked this Distraction window as not a distraction")
	if got := s.String(t, "Drift"); got != "on_task" {
		t.Fatalf("Drift on the exempted window: got %q, want %q", got, "on_task")
	}

	// A restarted daemon replays the exemption from the raw log.
	k.x.Activate(t, k.editor)
	waitProp(t, k.d, "CurrentClass", "Editor")
	k.d.Stop(t)
	k.d.Start(t)
	waitProp(t, k.d, "CurrentClass", "Editor")
	k.x.Activate(t, k.distraction)
	waitProp(t, k.d, "DriftReason", "you marked this Distraction window as not a distraction")
	before := len(nudges.Messages())
	k.x.SetTitle(t, k.distraction, "dog videos")
	testenv.WaitFor(t, wait, fmt.Sprintf("another title of the class to be a distraction again (a Nudge signal after the %d before)", before),
		func() []string { return nudges.Messages() }, func(got []string) bool { return len(got) > before })
}
