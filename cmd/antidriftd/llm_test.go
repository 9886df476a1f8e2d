package main

import (
	"fmt"
	"strings"
	"testing"
	"time"

	"github.com/antidrift/antidrift/internal/testsupport/testenv"
)

// judgeWait bounds waiting for a model's verdict: a random model writes a
// 200-character reason token by token, slowly on a busy machine, and a
// retry after an outage comes after the backoff.
const judgeWait = 2 * time.Minute

// The LLM judge end to end: antidriftd on a real desktop asks a real
// llama-server (steered to say off task) about a window no rule decides;
// the verdict arrives after the window got focus, and drift is confirmed
// late, nudged in dunst and enforced at block exactly as a rule's verdict.
// Then the server dies mid-session, the window reads why, and once the
// server is back the retry's verdict lands.
func TestLateModelVerdictNudgesAndIconifiesAndSurvivesAServerCrash(t *testing.T) {
	srv := testenv.StartLlamaServer(t, "false")
	cfg := driftConfig + fmt.Sprintf("\n[judge]\nkind = \"llm\"\nendpoint = %q\ntimeout = \"60s\"\n", srv.URL)
	k := startDesktop(t, true, cfg)
	props := testenv.StartMonitor(t, k.bus, "type='signal',member='PropertiesChanged',path='/org/antidrift/Session1'")
	notes := testenv.StartMonitor(t, k.bus, "type='method_call',interface='org.freedesktop.Notifications',member='Notify'")
	nudges := testenv.StartMonitor(t, k.bus, "type='signal',member='Nudge',path='/org/antidrift/Session1'")

	s := k.d.Session(t)
	startSession(t, s, "write code", "tests pass", 600, "block", "Editor")
	waitProp(t, k.d, "DriftReason", "Editor is allowed in this session")
	k.x.Activate(t, k.distraction)
	props.WaitFor(t, `string "judging…"`, wait)
	// The model's verdict iconifies the window.
	testenv.WaitForValue(t, judgeWait, "WM_STATE of the distraction", "Iconic", func() string { return k.x.WMState(t, k.distraction) })
	waitProp(t, k.d, "MinimizeCount", uint32(1))
	notes.WaitFor(t, "Drifting: Distraction", wait)
	nudge := nudges.WaitFor(t, `string "Distraction"`, wait)
	if strings.Contains(nudge, "allowlist") || strings.Contains(nudge, "judging") {
		t.Fatalf("the nudge: got\n%s\nwant the model's reason, not the allowlist's or judging…", nudge)
	}

	// The server dies; a window it has not judged reads why, in words.
	srv.Kill()
	k.x.SetTitle(t, k.distraction, "something else entirely")
	k.x.Activate(t, k.distraction)
	waitProp(t, k.d, "DriftReason", "judge unreachable: connection refused")
	if got := s.String(t, "Drift"); got != "unknown" {
		t.Fatalf("Drift with the judge down: got %q, want %q", got, "unknown")
	}
	if got := k.x.WMState(t, k.distraction); got != "Normal" {
		t.Fatalf("WM_STATE of a window with no verdict: got %s, want Normal (not enforced)", got)
	}

	// Back up: the judge's retry judges the still-current window, late.
	srv.Start(t)
	testenv.WaitForValue(t, judgeWait, "WM_STATE of the distraction (the retried verdict)", "Iconic", func() string { return k.x.WMState(t, k.distraction) })
	waitProp(t, k.d, "MinimizeCount", uint32(2))
	if out := k.d.Output(); strings.Count(out, "the LLM judge failed") != 1 || strings.Contains(out, "something else entirely") {
		t.Fatalf("the daemon's log: got\n%s\nwant the outage logged exactly once, without titles", out)
	}
}
