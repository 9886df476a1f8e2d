package main

import (
	"regexp"
	"strconv"
	"strings"
	"syscall"
	"testing"

	"github.com/antidrift/antidrift/internal/testsupport/testenv"
)

// Every method of the interface a person can call has a command, so every
// refusal can name one.
func TestEveryMethodHasACommand(t *testing.T) {
	for _, m := range regexp.MustCompile(`<method name="(\w+)"`).FindAllStringSubmatch(distXML(t), -1) {
		if m[1] == "ReportFocus" || m[1] == "Enable" { // Evidence1's, the compositor's; ErrorData1's, a client's
			continue
		}
		if commandOf(m[1]) == nil {
			t.Errorf("no command calls %s: a refusal of it could not be said in commands", m[1])
		}
	}
}

func distXML(t *testing.T) string { return distFile(t, "org.antidrift.Session1.xml") }

// TestEveryRefusalOfThePermissionTableSpeaksCLI walks every state and level
// the permission table (service/permissions.go) tells apart, tries every
// command in each, and checks each refusal: exit 1, the command named as
// typed, what works now as commands, and no D-Bus method or argument name.
func TestEveryRefusalOfThePermissionTableSpeaksCLI(t *testing.T) {
	s := startDaemon(t, "break_glass_hold = \"1h\"\n")
	tries := [][]string{
		{"plan"}, {"cancel-plan"}, {"start", "other", "--done-when", "y", "--for", "1m"}, {"complete"},
		{"abandon", "bored"}, {"extend", "1m"}, {"end"}, {"refocus"}, {"allow", "Gimp"}, {"enforce", "observe"},
		{"enforce", "locked"}, {"break-glass", "fire"}, {"history"}, {"verify"},
	}
	start := func(level string, timebox string) {
		s.ok(t, "start", "write the intro", "--done-when", "committed", "--for", timebox, "--enforce", level)
	}
	states := []struct {
		name  string
		setup func()
	}{
		{"no session", func() {}},
		{"planning", func() { s.ok(t, "plan") }},
		{"active at observe", func() { start("observe", "1h") }},
		{"active at warn", func() { start("warn", "1h") }},
		{"active at block", func() { start("block", "1h") }},
		{"active at locked", func() { start("locked", "1h") }},
		{"active at locked, hold running", func() { start("locked", "1h"); s.ok(t, "break-glass", "need to go") }},
		{"review, completed", func() { start("warn", "1h"); s.ok(t, "complete") }},
		{"review, abandoned", func() { start("warn", "1h"); s.ok(t, "abandon") }},
		{"review, expired", func() {
			start("warn", "1s")
			testenv.WaitUntil(t, wait, "the 1s session to expire", func() bool { return s.status(t)["outcome"] == "expired" })
		}},
	}
	// back ends whatever a try started, so the next try finds the state again.
	back := func() {
		switch s.status(t)["state"] {
		case "planning":
			s.ok(t, "cancel-plan")
		case "active":
			s.ok(t, "complete")
			s.ok(t, "end")
		case "review":
			s.ok(t, "end")
		}
	}
	var said []string
	for _, st := range states {
		st.setup()
		for _, args := range tries {
			r := s.run(t, args...)
			if r.code == 0 {
				back()
				st.setup()
				continue
			}
			if r.code != 1 || r.stdout != "" {
				t.Errorf("%s: want a refusal (exit 1, nothing on stdout), got %v", st.name, r)
				continue
			}
			contains(t, st.name+": "+strings.Join(args, " "), r.stderr,
				"antidrift "+args[0]+": not now: ", "retrying will not help", "What works now: antidrift ")
			speaksCLI(t, r)
			said = append(said, r.stderr)
		}
		back()
	}
	// The walk reached every kind of refusal the table gives, so the check
	// above saw them all.
	all := strings.Join(said, "\n")
	for _, want := range []string{
		"there is no session, and antidrift complete works only when a session is active",
		"a session is being planned, and antidrift plan works only when there is no session",
		"works only when there is no session or planning",
		"refuses antidrift abandon before the deadline; a break-glass hold (antidrift break-glass REASON) permits it",
		"at enforcement level locked and its break-glass hold has ",
		"which refuses anything that widens",
		"which refuses lowering the level",
		"no glass to break: antidrift abandon works as it is",
		"only an expired session can be extended back to active",
		"a session is in review, and antidrift complete works only when a session is active",
	} {
		if !strings.Contains(all, want) {
			t.Errorf("no refusal said %q; the walk missed a row of the table, or its words changed. It saw:\n%s", want, all)
		}
	}
	if len(said) < 60 {
		t.Errorf("only %d refusals in the walk", len(said))
	}
}

// A daemon that owns its name but does not answer is not "not running":
// the advice is to resume or restart it, not to start it.
func TestAHungDaemonGetsAdviceForAHungDaemon(t *testing.T) {
	s := startDaemon(t, "")
	pid := s.d.PID()
	if err := syscall.Kill(pid, syscall.SIGSTOP); err != nil {
		t.Fatal(err)
	}
	defer syscall.Kill(pid, syscall.SIGCONT)
	env := append(s.d.Bus.Env(), "ANTIDRIFT_TIMEOUT=1s")
	for _, args := range [][]string{{"status"}, {"complete"}} {
		r := cli(t, env, args...)
		if r.code != 3 {
			t.Errorf("want exit 3, got %v", r)
		}
		contains(t, "stderr", r.stderr, "did not answer within 1s", "It is stopped", "kill -CONT "+strconv.Itoa(pid))
		if strings.Contains(r.stderr, "systemctl --user start") {
			t.Errorf("a stopped daemon is told to start:\n%s", r.stderr)
		}
	}
	syscall.Kill(pid, syscall.SIGCONT)
	s.ok(t, "status")
}
