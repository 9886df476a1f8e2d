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

	call(t, k.d, "Start", "sstsas", "write code", "tests pass", "600", "block", "1", "Editor")
	k.waitProp(t, "DriftReason", `s "Editor is allowed in this session"`)
	k.x.Activate(t, k.distraction)
	props.WaitFor(t, `string "judging…"`, wait)
	testenv.WaitUntil(t, judgeWait, "the model's verdict to iconify the window", func() bool { return k.x.WMState(t, k.distraction) == "Iconic" })
	k.waitProp(t, "MinimizeCount", "u 1")
	notes.WaitFor(t, "Drifting: Distraction", wait)
	nudge := nudges.WaitFor(t, `string "Distraction"`, wait)
	if strings.Contains(nudge, "allowlist") || strings.Contains(nudge, "judging") {
		t.Fatalf("the nudge's reason is not the model's:\n%s", nudge)
	}

	// The server dies; a window it has not judged reads why, in words.
	srv.Kill()
	k.x.SetTitle(t, k.distraction, "something else entirely")
	k.x.Activate(t, k.distraction)
	k.waitProp(t, "DriftReason", `s "judge unreachable: connection refused"`)
	if got := k.prop(t, "Drift"); got != `s "unknown"` {
		t.Fatalf("Drift with the judge down: %s", got)
	}
	if got := k.x.WMState(t, k.distraction); got != "Normal" {
		t.Fatalf("a window was enforced on no verdict: %s", got)
	}

	// Back up: the judge's retry judges the still-current window, late.
	srv.Start(t)
	testenv.WaitUntil(t, judgeWait, "the retried verdict to iconify the window", func() bool { return k.x.WMState(t, k.distraction) == "Iconic" })
	k.waitProp(t, "MinimizeCount", "u 2")
	if out := k.d.Output(); strings.Count(out, "the LLM judge failed") != 1 || strings.Contains(out, "something else entirely") {
		t.Fatalf("the outage was not logged exactly once, without titles:\n%s", out)
	}
}
