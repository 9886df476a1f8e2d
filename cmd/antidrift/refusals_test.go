package main

import (
	"errors"
	"io"
	"log/slog"
	"path/filepath"
	"reflect"
	"regexp"
	"strconv"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/godbus/dbus/v5"

	"github.com/antidrift/antidrift/dbusapi"
	"github.com/antidrift/antidrift/internal/testsupport/testenv"
	"github.com/antidrift/antidrift/persist"
	"github.com/antidrift/antidrift/service"
)

// Every method of the interface a person can call has a command, so every
// refusal can name one.
func TestEveryMethodHasACommand(t *testing.T) {
	// Session1's methods are the person's; Evidence1's are the compositor's
	// and the browsers' native hosts', ErrorData1's a client's.
	session1 := regexp.MustCompile(`(?s)<interface name="org\.antidrift\.Session1">.*?</interface>`).FindString(distXML(t))
	if session1 == "" {
		t.Fatal("the interface XML: got no org.antidrift.Session1, want it")
	}
	for _, m := range regexp.MustCompile(`<method name="(\w+)"`).FindAllStringSubmatch(session1, -1) {
		if commandOf(m[1]) == nil {
			t.Errorf("the command calling %s: got none, want one, or a refusal of it could not be said in commands", m[1])
		}
	}
}

func distXML(t *testing.T) string { return distFile(t, "org.antidrift.Session1.xml") }

// core is the daemon's core in this process, on real files, with a
// break-glass hold of an hour: what the walk below refuses calls against,
// without a bus.
func core(t *testing.T) *service.Service {
	t.Helper()
	store, _, err := persist.Open(filepath.Join(t.TempDir(), "state"))
	if err != nil {
		t.Fatal(err)
	}
	quiet := slog.New(slog.NewTextHandler(io.Discard, nil))
	svc := service.New(service.Options{Store: store, Logger: quiet, BreakGlassHold: time.Hour})
	if err := svc.Recover(service.Snapshot{}); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { svc.Shutdown(); store.Close() })
	return svc
}

// try is one command of the walk: what the person types, and the call of
// the core it makes.
type try struct {
	args []string
	call func(*service.Service) error
}

// said is what the CLI says for a failed call of the core by the command
// args[0]: the core's error, as a connection that asked for error data
// receives it on the bus (dbusapi.ErrorWithData), through callError.
func said(args []string, err error) result {
	c := commandByName(args[0])
	e := callError(c.method, *dbusapi.ErrorWithData(c.method, err))
	var x *exitError
	if !errors.As(e, &x) {
		return result{args: args, code: -1, stderr: e.Error()}
	}
	return result{args: args, code: x.code, stderr: x.msg + "\n"}
}

func commandByName(name string) *command {
	for _, c := range commands {
		if c.name == name {
			return c
		}
	}
	return nil
}

// TestEveryRefusalOfThePermissionTableSpeaksCLI walks every state and level
// the permission table (service/permissions.go) tells apart, tries every
// command in each against the core itself (no bus: the data crossing it is
// TestRefusalDataCrossesTheBus's), and checks each refusal: exit 1, the
// command named as typed, what works now as commands, and no D-Bus method
// or argument name.
func TestEveryRefusalOfThePermissionTableSpeaksCLI(t *testing.T) {
	svc := core(t)
	noErr := func(err error) error { return err }
	tries := []try{
		{[]string{"plan"}, func(s *service.Service) error { return s.Plan() }},
		{[]string{"cancel-plan"}, func(s *service.Service) error { return s.CancelPlan() }},
		{[]string{"start", "other", "--done-when", "y", "--for", "1m"}, func(s *service.Service) error {
			_, err := s.Start("other", "y", 60, "", nil)
			return err
		}},
		{[]string{"complete"}, func(s *service.Service) error { return s.Complete() }},
		{[]string{"abandon", "bored"}, func(s *service.Service) error { return s.Abandon("bored") }},
		{[]string{"extend", "1m"}, func(s *service.Service) error { return s.Extend(60) }},
		{[]string{"end"}, func(s *service.Service) error { _, err := s.End(); return err }},
		{[]string{"refocus"}, func(s *service.Service) error { return s.Refocus() }},
		{[]string{"allow", "Gimp"}, func(s *service.Service) error { return s.Allow("Gimp") }},
		{[]string{"enforce", "observe"}, func(s *service.Service) error { return s.SetEnforcement("observe") }},
		{[]string{"enforce", "locked"}, func(s *service.Service) error { return s.SetEnforcement("locked") }},
		{[]string{"break-glass", "fire"}, func(s *service.Service) error { _, err := s.BreakGlass("fire"); return err }},
		{[]string{"history"}, func(s *service.Service) error { _, err := s.History(0); return err }},
		{[]string{"verify"}, func(s *service.Service) error { _, err := s.VerifyAudit(); return noErr(err) }},
	}
	must := func(err error) {
		t.Helper()
		if err != nil {
			t.Fatal(err)
		}
	}
	start := func(level string, timebox uint64) {
		_, err := svc.Start("write the intro", "committed", timebox, level, nil)
		must(err)
	}
	states := []struct {
		name  string
		setup func()
	}{
		{"no session", func() {}},
		{"planning", func() { must(svc.Plan()) }},
		{"active at observe", func() { start("observe", 3600) }},
		{"active at warn", func() { start("warn", 3600) }},
		{"active at block", func() { start("block", 3600) }},
		{"active at locked", func() { start("locked", 3600) }},
		{"active at locked, hold running", func() {
			start("locked", 3600)
			_, err := svc.BreakGlass("need to go")
			must(err)
		}},
		{"review, completed", func() { start("warn", 3600); must(svc.Complete()) }},
		{"review, abandoned", func() { start("warn", 3600); must(svc.Abandon("")) }},
		{"review, expired", func() {
			start("warn", 1)
			testenv.WaitForValue(t, wait, "the 1s session's outcome", service.OutcomeExpired,
				func() service.Outcome { return svc.View().Outcome })
		}},
	}
	// back ends whatever a try started, so the next try finds the state again.
	back := func() {
		switch svc.View().State {
		case service.StatePlanning:
			must(svc.CancelPlan())
		case service.StateActive:
			must(svc.Complete())
			_, err := svc.End()
			must(err)
		case service.StateReview:
			_, err := svc.End()
			must(err)
		}
	}
	var all []string
	for _, st := range states {
		st.setup()
		for _, tr := range tries {
			err := tr.call(svc)
			if err == nil {
				back()
				st.setup()
				continue
			}
			r := said(tr.args, err)
			if r.code != exitRefused {
				t.Errorf("%s: %s: got exit %d, want a refusal (exit 1): %v", st.name, strings.Join(tr.args, " "), r.code, r)
				continue
			}
			contains(t, st.name+": "+strings.Join(tr.args, " "), r.stderr,
				"antidrift "+tr.args[0]+": not now: ", "retrying will not help", "What works now: antidrift ")
			speaksCLI(t, r)
			all = append(all, r.stderr)
		}
		back()
	}
	// The walk reached every kind of refusal the table gives, so the check
	// above saw them all, said as they always were.
	seen := strings.Join(all, "\n")
	for _, want := range []string{
		"antidrift complete: not now: there is no session, and antidrift complete works only when a session is active.\n" +
			"That is the session's state refusing, not a fault: retrying will not help.\n" +
			"What works now: antidrift plan, antidrift start, antidrift verify, antidrift history, antidrift report, antidrift tasks.\n",
		"a session is being planned, and antidrift plan works only when there is no session",
		"works only when there is no session or planning",
		"refuses antidrift abandon before the deadline; a break-glass hold (antidrift break-glass REASON) permits it",
		"at enforcement level locked and its break-glass hold has ",
		"which refuses anything that widens",
		"which refuses lowering the level",
		"no glass to break: antidrift abandon works as it is",
		"in review with outcome completed; only an expired session can be extended back to active",
		"a session is in review, and antidrift complete works only when a session is active",
	} {
		if !strings.Contains(seen, want) {
			t.Errorf("no refusal said %q; the walk missed a row of the table, or its words changed. It saw:\n%s", want, seen)
		}
	}
	if len(all) < 60 {
		t.Errorf("got %d refusals in the walk, want at least 60", len(all))
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
			t.Errorf("got %v, want exit 3", r)
		}
		contains(t, "stderr", r.stderr, "did not answer within 1s", "It is stopped", "kill -CONT "+strconv.Itoa(pid))
		if strings.Contains(r.stderr, "systemctl --user start") {
			t.Errorf("stderr: got\n%s\nwant no advice to start a daemon that is stopped", r.stderr)
		}
	}
	syscall.Kill(pid, syscall.SIGCONT)
	s.ok(t, "status")
}

// The data crosses the bus, end to end: over a private bus to a real
// daemon the CLI words a refusal from it; busctl and gdbus, independent
// clients that did not ask for data, show the daemon's message as it is;
// and a client that asked gets the same message first and the data after.
func TestRefusalDataCrossesTheBus(t *testing.T) {
	testenv.Need(t, "busctl", "gdbus")
	s := startDaemon(t, "")
	const message = "Complete is not permitted: antidrift is locked, and Complete works only when it is active. " +
		"It is the session's state refusing, not a fault, so retrying will not help. What works now: Plan, Start, StartTask, Coach, SetQuiet, VerifyAudit, History, Report, ReportDevice, ListTasks."

	r := s.run(t, "complete")
	if want := "antidrift complete: not now: there is no session, and antidrift complete works only when a session is active.\n" +
		"That is the session's state refusing, not a fault: retrying will not help.\n" +
		"What works now: antidrift plan, antidrift start, antidrift verify, antidrift history, antidrift report, antidrift tasks.\n"; r.code != 1 || r.stderr != want {
		t.Errorf("the CLI: got exit %d and\n%s\nwant exit 1 and\n%s", r.code, r.stderr, want)
	}

	// Interoperability: busctl (sd-bus) and gdbus (GDBus) as they are.
	if _, err := s.d.Busctl(t, "call", "Complete"); err == nil || !strings.Contains(err.Error(), "Call failed: "+message) {
		t.Errorf("busctl: got %v, want it to say %q", err, message)
	}
	_, err := s.d.Bus.Run(t, "gdbus", "call", "--session", "--dest", dbusapi.BusName, "--object-path", string(dbusapi.ObjectPath),
		"--method", dbusapi.Interface+".Complete")
	if err == nil || !strings.Contains(err.Error(), "GDBus.Error:org.antidrift.Error.NotPermitted: "+message) {
		t.Errorf("gdbus: got %v, want it to say %q", err, message)
	}

	// A client that asked for the data.
	conn, err := dbus.Connect(s.d.Bus.Address)
	if err != nil {
		t.Fatal(err)
	}
	defer conn.Close()
	obj := conn.Object(dbusapi.BusName, dbusapi.ObjectPath)
	if err := obj.Call(dbusapi.ErrorDataInterface+".Enable", 0).Err; err != nil {
		t.Fatal(err)
	}
	var e dbus.Error
	if !errors.As(obj.Call(dbusapi.Interface+".Complete", 0).Err, &e) || len(e.Body) != 2 || e.Body[0] != message {
		t.Fatalf("got %v, want %q and the data", e.Body, message)
	}
	data := e.Body[1].(map[string]dbus.Variant)
	for key, want := range map[string]any{"method": "Complete", "state": "locked", "because": "state", "works_in": []string{"active"}} {
		if got := data[key].Value(); !reflect.DeepEqual(got, want) {
			t.Errorf("data %s: got %#v, want %#v", key, got, want)
		}
	}
}

// Every rule an argument can break is said in the CLI's words, from the
// data (no bus): the flag or placeholder the person typed, durations as
// typed, exit 2 with the usage line.
func TestEveryArgumentRuleSpeaksCLI(t *testing.T) {
	start := func(next string, secs uint64, level string, allowed ...string) func(*service.Service) error {
		return func(s *service.Service) error { _, err := s.Start(next, "y", secs, level, allowed); return err }
	}
	many := func(n int) []string {
		out := make([]string, n)
		for i := range out {
			out[i] = "Class" + strconv.Itoa(i)
		}
		return out
	}
	for _, c := range []struct {
		command string
		setup   func(*service.Service) error // nil: none
		call    func(*service.Service) error
		says    string
	}{
		{"start", nil, start("\xff", 60, ""), "antidrift start: NEXT_ACTION must be valid UTF-8\n"},
		{"start", nil, start("   ", 60, ""), "antidrift start: NEXT_ACTION must not be empty (1–500 characters after trimming)\n"},
		{"start", nil, start(strings.Repeat("x", 501), 60, ""), "antidrift start: NEXT_ACTION is 501 characters; at most 500 are allowed\n"},
		{"start", nil, start("a\tb", 60, ""), "antidrift start: NEXT_ACTION must not contain control characters (newlines, tabs, escapes)\n"},
		{"start", nil, start("x", 0, ""), "antidrift start: --for must be between 1 second and 24 hours (24h); got 0s\n"},
		{"start", nil, start("x", 60, "loose"), `antidrift start: --enforce must be one of observe, warn, block, locked; got "loose"` + "\n"},
		{"start", nil, start("x", 60, "", "Emacs", "firefox:*[GitHub"),
			`antidrift start: --allow "firefox:*[GitHub" is not a valid entry: the title pattern has a [ that is never closed`},
		{"start", nil, start("x", 60, "", many(65)...), "antidrift start: --allow is given 65 times; at most 64 are allowed\n"},
		{"extend", start("x", 23*3600, ""), func(s *service.Service) error { return s.Extend(7200) },
			"antidrift extend: DURATION: extending by 2h would make the timebox 25h; a session is at most 24 hours\n"},
		{"allow", start("x", 60, "", many(64)...), func(s *service.Service) error { return s.Allow("Gimp") },
			"antidrift allow: CLASS: this session already allows 64 classes, the most there can be\n"},
		{"allow", start("x", 60, ""), func(s *service.Service) error { return s.Allow("firefox:") },
			`antidrift allow: CLASS "firefox:" is not a valid entry: the title pattern after ':' is empty`},
		{"history", nil, func(s *service.Service) error { _, err := s.History(5000); return err },
			"antidrift history: --limit must be at most 1000; got 5000\n"},
	} {
		svc := core(t)
		if c.setup != nil {
			if err := c.setup(svc); err != nil {
				t.Fatalf("%s: setting up: %v", c.command, err)
			}
		}
		err := c.call(svc)
		if err == nil {
			t.Errorf("%s: got no error, want %q", c.command, c.says)
			continue
		}
		r := said([]string{c.command}, err)
		if r.code != exitUsage || !strings.HasPrefix(r.stderr, c.says) || !strings.Contains(r.stderr, "usage: antidrift "+c.command) {
			t.Errorf("%s: got exit %d and\n%s\nwant exit 2, the usage line and\n%s", c.command, r.code, r.stderr, c.says)
		}
		speaksCLI(t, r)
	}
}
