package main

import (
	"bytes"
	"encoding/json"
	"fmt"
	"os"
	"path/filepath"
	"regexp"
	"slices"
	"strings"
	"syscall"
	"testing"

	"github.com/antidrift/antidrift/dist"
	"github.com/antidrift/antidrift/internal/testsupport/testenv"
)

var (
	uuidV7  = regexp.MustCompile(`^[0-9a-f]{8}-[0-9a-f]{4}-7[0-9a-f]{3}-[0-9a-f]{4}-[0-9a-f]{12}$`)
	sha256x = regexp.MustCompile(`^[0-9a-f]{64}$`)
)

// num reads a JSON number out of a decoded status or history entry.
func num(t *testing.T, m map[string]any, key string) int64 {
	t.Helper()
	f, ok := m[key].(float64)
	if !ok {
		t.Fatalf("%s: got %T %v in %v, want a number", key, m[key], m[key], m)
	}
	return int64(f)
}

func strs(m map[string]any, key string) []string {
	var out []string
	items, _ := m[key].([]any)
	for _, it := range items {
		s, _ := it.(string)
		out = append(out, s)
	}
	return out
}

// TestFullCycle walks one session through every everyday command:
// plan → start → status → allow → enforce → extend → complete → end →
// history → verify.
func TestFullCycle(t *testing.T) {
	s := startDaemon(t, "")

	contains(t, "plan", s.ok(t, "plan"), "Planning")
	if st := s.status(t); st["state"] != "planning" {
		t.Fatalf("after plan, status --json state: got %v, want planning", st["state"])
	}
	contains(t, "enforce in planning", s.ok(t, "enforce", "block"), "next start: block")

	// Flags after the next action, as people type them.
	started := okJSON[map[string]string](t, s, "start", "write the intro", "--done-when", "intro is committed", "--for", "25m",
		"--allow", "Editor", "--enforce", "warn")
	id := started["session_id"]
	if !uuidV7.MatchString(id) {
		t.Fatalf("start --json session_id: got %q, want a UUIDv7", id)
	}
	st := s.status(t)
	for key, want := range map[string]any{"state": "active", "session_id": id, "next_action": "write the intro",
		"success_condition": "intro is committed", "enforcement": "warn", "drift": "unknown"} {
		if st[key] != want {
			t.Errorf("status --json %s: got %v, want %v", key, st[key], want)
		}
	}
	if got := strs(st, "allowed_classes"); !slices.Equal(got, []string{"Editor"}) {
		t.Errorf("status --json allowed_classes: got %v, want [Editor]", got)
	}
	deadline := num(t, st, "deadline")
	if box := num(t, st, "timebox_seconds"); box != 1500 || deadline-num(t, st, "started_at") != 1500 {
		t.Errorf("--for 25m: got timebox %d s, deadline %d s after the start; want 1500 s for both", box, deadline-num(t, st, "started_at"))
	}
	// Every property is there, snake_case.
	for _, key := range []string{"current_class", "current_title", "switch_count", "buckets", "audit_head", "problems", "version", "break_glass_at"} {
		if _, ok := st[key]; !ok {
			t.Errorf("status --json: got %v, want a key %s", st, key)
		}
	}

	text := s.ok(t, "status")
	contains(t, "status", text, "active", "write the intro", "done when", "intro is committed", "time left",
		"of 25m", "drift", "enforcement", "warn; allowed: Editor", "window", "switches")
	if strings.Contains(text, "\x1b[") {
		t.Errorf("status on a pipe: got %q, want no colour (no ESC [)", text)
	}

	contains(t, "allow", s.ok(t, "allow", "Terminal"), "Editor, Terminal")
	if got := strs(s.status(t), "allowed_classes"); !slices.Equal(got, []string{"Editor", "Terminal"}) {
		t.Errorf("after allow Terminal, allowed_classes: got %v, want [Editor Terminal]", got)
	}
	contains(t, "enforce", s.ok(t, "enforce", "locked"), "Enforcement: locked")
	contains(t, "extend", s.ok(t, "extend", "10m"), "Extended", "left")
	st = s.status(t)
	if st["enforcement"] != "locked" || num(t, st, "timebox_seconds") != 2100 || num(t, st, "deadline") != deadline+600 {
		t.Errorf("after enforce locked and extend 10m: got %v, want enforcement locked, timebox_seconds 2100, deadline %d", st, deadline+600)
	}

	contains(t, "complete", s.ok(t, "complete"), "Completed: write the intro", "antidrift end")
	if st := s.status(t); st["state"] != "review" || st["outcome"] != "completed" {
		t.Fatalf("after complete: got state %v, outcome %v; want review, completed", st["state"], st["outcome"])
	}
	contains(t, "status in review", s.ok(t, "status"), "review", "completed", "antidrift end")

	ended := okJSON[map[string]any](t, s, "end")
	hash, _ := ended["audit_hash"].(string)
	if !sha256x.MatchString(hash) || ended["sealed"] != true {
		t.Fatalf("end --json: got %v, want sealed true and a SHA-256 audit_hash", ended)
	}
	if st := s.status(t); st["state"] != "locked" || st["audit_head"] != hash {
		t.Fatalf("after end: got state %v, audit_head %v; want locked, %s (what end said)", st["state"], st["audit_head"], hash)
	}

	history := okJSON[[]map[string]any](t, s, "history")
	if len(history) != 1 {
		t.Fatalf("history --json: got %d entries %v, want 1", len(history), history)
	}
	h := history[0]
	if h["session_id"] != id || h["hash"] != hash || h["outcome"] != "completed" || h["next_action"] != "write the intro" ||
		h["enforcement"] != "locked" || num(t, h, "seq") != 1 {
		t.Errorf("history --json entry: got %v, want seq 1, session_id %s, hash %s, outcome completed, next_action \"write the intro\", enforcement locked", h, id, hash)
	}
	contains(t, "history", s.ok(t, "history"), "SEQ", "OUTCOME", "NEXT ACTION", "completed", "locked", "write the intro")

	verify := okJSON[map[string]any](t, s, "verify")
	if verify["ok"] != true || num(t, verify, "entries") != 1 || verify["problem"] != "" {
		t.Errorf("verify --json: got %v, want ok true, entries 1, problem \"\"", verify)
	}
	contains(t, "verify", s.ok(t, "verify"), "intact", "1 entry")
}

func TestAbandon(t *testing.T) {
	s := startDaemon(t, "")
	// Flags first, and a next action typed without quotes.
	s.ok(t, "start", "--for", "10m", "--done-when", "tests pass", "fix", "the", "flaky", "test")
	if got := s.status(t)["next_action"]; got != "fix the flaky test" {
		t.Fatalf("status --json next_action: got %q, want \"fix the flaky test\"", got)
	}
	contains(t, "abandon", s.ok(t, "abandon", "the", "phone", "rang"), "Abandoned: fix the flaky test")
	if st := s.status(t); st["state"] != "review" || st["outcome"] != "abandoned" {
		t.Fatalf("after abandon: got state %v, outcome %v; want review, abandoned", st["state"], st["outcome"])
	}
	s.ok(t, "end")
	if h := okJSON[[]map[string]any](t, s, "history"); len(h) != 1 || h[0]["outcome"] != "abandoned" {
		t.Fatalf("history after abandoning: got %v, want one entry, outcome abandoned", h)
	}
}

func TestBreakGlassAtLocked(t *testing.T) {
	s := startDaemon(t, "break_glass_hold = \"1s\"\n")
	s.ok(t, "start", "deep work", "--done-when", "chapter drafted", "--for", "1h", "--enforce", "locked")

	for _, args := range [][]string{{"abandon", "bored"}, {"enforce", "warn"}, {"allow", "Firefox"}} {
		r := s.run(t, args...)
		if r.code != 1 || !strings.Contains(r.stderr, "not now") || !strings.Contains(r.stderr, "locked") {
			t.Errorf("at level locked: got %v, want exit 1 saying \"not now\" and \"locked\"", r)
		}
	}
	contains(t, "break-glass", s.ok(t, "break-glass", "the", "building", "is", "on", "fire"), "abandon")
	testenv.WaitFor(t, wait, "abandon to be permitted once the 1 s hold has elapsed", func() result {
		return s.run(t, "abandon", "emergency")
	}, func(r result) bool { return r.code == 0 })
	if st := s.status(t); st["outcome"] != "abandoned" || num(t, st, "break_glass_at") == 0 {
		t.Fatalf("after break-glass and abandon: got outcome %v, break_glass_at %v; want abandoned and a time", st["outcome"], st["break_glass_at"])
	}
}

func TestBreakGlassJSONReportsTheWait(t *testing.T) {
	s := startDaemon(t, "break_glass_hold = \"1h\"\n")
	s.ok(t, "start", "deep work", "--done-when", "drafted", "--for", "2h", "--enforce", "locked")
	got := okJSON[map[string]any](t, s, "break-glass", "need to leave")
	if w := num(t, got, "wait_secs"); w < 3500 || w > 3600 {
		t.Fatalf("break-glass --json with a 1h hold: got wait_secs %d in %v, want 3500 to 3600", w, got)
	}
	contains(t, "status", s.ok(t, "status"), "break-glass", "hold started")
}

// A refused call exits 1, a refused argument 2, and both are said in the
// CLI's words: commands, flags and durations as typed, never the D-Bus
// method or argument names the daemon's message uses for programs.
func TestRefusalsAreSaidInCommandsAndFlags(t *testing.T) {
	s := startDaemon(t, "")
	for _, c := range []struct {
		args []string
		code int
		says []string
	}{
		{[]string{"end"}, 1, []string{"antidrift end: not now: there is no session, and antidrift end works only when a session is in review.",
			"retrying will not help", "What works now: antidrift plan, antidrift start, antidrift verify, antidrift history, antidrift report, antidrift tasks."}},
		{[]string{"complete"}, 1, []string{"antidrift complete: not now: there is no session", "works only when a session is active"}},
		{[]string{"start", "   ", "--done-when", "y", "--for", "1m"}, 2, []string{"NEXT_ACTION must not be empty"}},
		{[]string{"history", "--limit", "5000"}, 2, []string{"--limit must be at most 1000; got 5000"}},
		{[]string{"start", "x", "--done-when", "y", "--for", "1m", "--allow", "Emacs", "--allow", "firefox:*[GitHub"}, 2,
			[]string{`--allow "firefox:*[GitHub" is not a valid entry: the title pattern has a [ that is never closed`, "CLASS:TITLE-GLOB"}},
		{[]string{"allow", "firefox:"}, 2, []string{`CLASS "firefox:" is not a valid entry: the title pattern after ':' is empty`}},
	} {
		r := s.run(t, c.args...)
		if r.code != c.code || r.stdout != "" {
			t.Errorf("got %v, want exit %d and nothing on stdout", r, c.code)
		}
		contains(t, "stderr of "+strings.Join(c.args, " "), r.stderr, c.says...)
		speaksCLI(t, r)
	}

	s.ok(t, "start", "write the intro", "--done-when", "committed", "--for", "23h")
	r := s.run(t, "extend", "2h")
	if r.code != 2 {
		t.Errorf("extending past 24h: got %v, want exit 2", r)
	}
	contains(t, "extend past 24h", r.stderr, "DURATION: extending by 2h would make the timebox 25h; a session is at most 24 hours")
	speaksCLI(t, r)

	// A program gets the precise names. (TestRefusalDataCrossesTheBus
	// has busctl and gdbus say it.)
	s.ok(t, "complete")
	s.ok(t, "end")
	if name, message := testenv.Refused(t, s.d.Session(t).Try("End", nil)); !strings.Contains(message, "End is not permitted") {
		t.Errorf("End with no session: got %s %q, want a message saying \"End is not permitted\"", name, message)
	}
}

// speaksCLI fails if r's output names a D-Bus method of the daemon's
// interface or one of their arguments.
func speaksCLI(t *testing.T, r result) {
	t.Helper()
	out := r.stdout + r.stderr
	for _, name := range interfaceNames(t) {
		if regexp.MustCompile(`\b` + name + `\b`).MatchString(out) {
			t.Errorf("got %v\nwhich names %s, a D-Bus name; want commands and flags only", r, name)
		}
	}
	if strings.Contains(out, "org.antidrift") {
		t.Errorf("got %v\nwhich names the bus interface; want commands and flags only", r)
	}
}

// interfaceNames are the methods of the interface XML and those of their
// arguments no English sentence would use: snake_case, and secs
// (reason, level and limit are words too).
func interfaceNames(t *testing.T) []string {
	t.Helper()
	var names []string
	for _, m := range regexp.MustCompile(`<(method|arg) name="(\w+)"`).FindAllStringSubmatch(dist.InterfaceXML, -1) {
		if m[1] == "method" || strings.Contains(m[2], "_") || m[2] == "secs" {
			names = append(names, m[2])
		}
	}
	if len(names) < 15 {
		t.Fatalf("names in the interface XML: got %d %v, want at least 15", len(names), names)
	}
	return names
}

// Usage errors exit 2 before anything is sent: the bus here is a dead
// socket, which would be exit 3.
func TestUsageErrorsExit2(t *testing.T) {
	env := append(os.Environ(), "DBUS_SESSION_BUS_ADDRESS=unix:path="+filepath.Join(t.TempDir(), "no-bus"))
	for _, c := range []struct {
		args []string
		says string
	}{
		{nil, "no command given"},
		{[]string{"frobnicate"}, `unknown command "frobnicate"`},
		{[]string{"start", "write", "--done-when", "x"}, "missing --for DURATION"},
		{[]string{"start", "write intro"}, "missing --done-when TEXT (how will you know it is done?) and --for DURATION (the timebox, e.g. --for 25m)"},
		{[]string{"start"}, "missing NEXT_ACTION (what you will do), --done-when TEXT"},
		{[]string{"start", "write", "--done-when", "x", "--for", "banana"}, "--for banana: not a duration"},
		{[]string{"start", "write", "--done-when", "x", "--for", "300ms"}, "--for 300ms: too short: at least 1s"},
		{[]string{"start", "write", "--done-when", "x", "--for", "99h"}, "--for 99h: too long: a session is at most 24h"},
		{[]string{"start", "write", "--done-when", "x", "--for"}, "--for needs a value: --for DURATION"},
		{[]string{"start", "--done-when", "x", "--for", "25m"}, "missing NEXT_ACTION"},
		{[]string{"start", "write", "--for", "25m"}, "missing --done-when TEXT"},
		{[]string{"start", "x", "--done-when", "y", "--timebox", "25m"}, "unknown flag --timebox (did you mean --for?)"},
		{[]string{"start", "x", "-done-whn", "y", "--for", "25m"}, "unknown flag --done-whn (did you mean --done-when?)"},
		{[]string{"start", "write", "--done-when", "x", "--for", "25m", "--enforce", "strict"}, `level "strict": want one of observe, warn, block, locked`},
		{[]string{"extend"}, "missing DURATION"},
		{[]string{"extend", "ten minutes"}, `DURATION ten minutes: not a duration`},
		{[]string{"extend", "30h"}, "DURATION 30h: too long: a session is at most 24h"},
		{[]string{"enforce", "loud"}, `level "loud"`},
		{[]string{"allow"}, "missing CLASS"},
		{[]string{"break-glass"}, "missing REASON"},
		{[]string{"complete", "now"}, `unexpected argument "now"`},
		{[]string{"status", "--format", "xml"}, `--format "xml"`},
		{[]string{"status", "--json", "--format", "waybar"}, "disagree"},
		{[]string{"status", "--bogus"}, "unknown flag --bogus (the flags are --follow, --format, --json, --wait-change)"},
		{[]string{"history", "--limit", "many"}, `invalid value "many" for flag --limit`},
		{[]string{"help", "frobnicate"}, `unknown command "frobnicate"`},
	} {
		r := cli(t, env, c.args...)
		if r.code != 2 || r.stdout != "" || !strings.Contains(r.stderr, c.says) || !strings.Contains(r.stderr, "usage: antidrift") {
			t.Errorf("got %v, want exit 2 saying %q and the usage line", r, c.says)
		}
		if strings.Contains(r.stderr, " -") && regexp.MustCompile(`(^|\s)-[a-z]{2,}`).MatchString(r.stderr) {
			t.Errorf("%v: got a flag named with one dash:\n%s\nwant two dashes", c.args, r.stderr)
		}
	}
}

func TestHelpAndVersion(t *testing.T) {
	env := append(os.Environ(), "DBUS_SESSION_BUS_ADDRESS=unix:path="+filepath.Join(t.TempDir(), "no-bus"))
	for _, c := range []struct {
		args  []string
		wants []string
	}{
		{[]string{"--help"}, []string{"usage: antidrift COMMAND", "start NEXT_ACTION|--task REF --done-when TEXT --for DURATION", "break-glass REASON", "Exit codes"}},
		{[]string{"help"}, []string{"usage: antidrift COMMAND"}},
		{[]string{"help", "start"}, []string{"usage: antidrift start", "--done-when TEXT", "--allow CLASS", "--enforce LEVEL", "--json"}},
		{[]string{"status", "--help"}, []string{"usage: antidrift status", "--follow", "--format FORMAT", "waybar"}},
		{[]string{"--version"}, []string{"antidrift dev"}},
	} {
		r := cli(t, env, c.args...)
		if r.code != 0 {
			t.Errorf("got %v, want exit 0", r)
		}
		contains(t, "antidrift "+strings.Join(c.args, " "), r.stdout, c.wants...)
	}
}

// Exit 3, with how to start the daemon, when it cannot be reached.
func TestUnreachableExits3(t *testing.T) {
	testenv.Need(t, "dbus-daemon")
	deadSocket := append(os.Environ(), "DBUS_SESSION_BUS_ADDRESS=unix:path="+filepath.Join(t.TempDir(), "no-bus"))
	noDaemon := testenv.StartBus(t).Env() // a bus, but no antidriftd and no activation file
	failing := testenv.StartBus(t)        // activation runs a daemon that fails at once
	writeFile(t, filepath.Join(failing.ServiceDir, "org.antidrift.service"), "[D-BUS Service]\nName=org.antidrift\nExec=/bin/false\n")
	for name, env := range map[string][]string{"dead socket": deadSocket, "no daemon": noDaemon, "activation fails": failing.Env()} {
		for _, args := range [][]string{{"status"}, {"status", "--json"}, {"start", "x", "--done-when", "y", "--for", "1m"}, {"complete"}, {"verify"}} {
			r := cli(t, env, args...)
			if r.code != 3 || r.stdout != "" {
				t.Errorf("%s: got %v, want exit 3 and nothing on stdout", name, r)
			}
			contains(t, name+": stderr", r.stderr, "cannot reach antidriftd", "systemctl --user start antidrift")
		}
	}
	if r := cli(t, noDaemon, "status"); !strings.Contains(r.stderr, "org.freedesktop.DBus.Error.ServiceUnknown") {
		t.Errorf("no daemon: got stderr\n%s\nwant the bus's reason, org.freedesktop.DBus.Error.ServiceUnknown", r.stderr)
	}
	if r := cli(t, failing.Env(), "status"); !strings.Contains(r.stderr, "org.freedesktop.DBus.Error.Spawn.") {
		t.Errorf("activation fails: got stderr\n%s\nwant the bus's reason, org.freedesktop.DBus.Error.Spawn.*", r.stderr)
	}
}

// The first call starts the daemon through bus activation.
func TestStatusStartsTheDaemonThroughActivation(t *testing.T) {
	testenv.Need(t, "dbus-daemon", "dbus-send")
	// The activated daemon inherits the bus's environment: isolate it as
	// StartDaemon would.
	bus := testenv.StartBus(t, "DISPLAY=", "XDG_CONFIG_HOME="+t.TempDir(), "DBUS_SYSTEM_BUS_ADDRESS=unix:path=/nonexistent/antidrift-test")
	service := fmt.Sprintf("[D-BUS Service]\nName=org.antidrift\nExec=%s --state-dir %s\n",
		testenv.Binary(t, "antidriftd"), filepath.Join(t.TempDir(), "state"))
	writeFile(t, filepath.Join(bus.ServiceDir, "org.antidrift.service"), service)
	if pid := bus.OwnerPID(t, "org.antidrift"); pid != 0 {
		t.Fatalf("owner of org.antidrift before any call: got pid %d, want none", pid)
	}
	r := cli(t, bus.Env(), "status")
	if r.code != 0 || !strings.HasPrefix(r.stdout, "no session") {
		t.Fatalf("status on a bus that can activate antidriftd: got %v, want exit 0 and \"no session\"", r)
	}
	if bus.OwnerPID(t, "org.antidrift") == 0 {
		t.Fatal("owner of org.antidrift after status succeeded: got none, want the activated antidriftd")
	}
}

// verify exits 1 and names the line once audit.jsonl has been edited.
func TestVerifyCatchesATamperedAuditLog(t *testing.T) {
	s := startDaemon(t, "")
	s.ok(t, "start", "write the intro", "--done-when", "committed", "--for", "10m")
	s.ok(t, "complete")
	s.ok(t, "end")
	contains(t, "verify before tampering", s.ok(t, "verify"), "intact")

	path := filepath.Join(s.d.StateDir, "audit.jsonl")
	data, err := os.ReadFile(path)
	if err != nil {
		t.Fatal(err)
	}
	key := []byte(`"next_action":"write`)
	i := bytes.Index(data, key)
	if i < 0 {
		t.Fatalf("audit.jsonl: got %s, want a next_action \"write…", data)
	}
	data[i+len(key)-5] = 'W' // "write" → "Write"
	if err := os.WriteFile(path, data, 0o600); err != nil {
		t.Fatal(err)
	}

	r := s.run(t, "verify")
	if r.code != 1 || !strings.Contains(r.stderr, "broken") || !strings.Contains(r.stderr, "line 1") || !strings.Contains(r.stderr, "altered") {
		t.Errorf("verify of a tampered log: got %v, want exit 1 saying broken, line 1, altered", r)
	}
	r = s.run(t, "verify", "--json")
	var v struct {
		OK      *bool  `json:"ok"`
		Entries *int   `json:"entries"`
		Problem string `json:"problem"`
	}
	if err := json.Unmarshal([]byte(r.stdout), &v); err != nil || r.code != 1 {
		t.Fatalf("verify --json of a tampered log: got %v (%v), want exit 1 and JSON", r, err)
	}
	if v.OK == nil || *v.OK || v.Entries == nil || *v.Entries != 0 || !strings.Contains(v.Problem, "line 1") {
		t.Errorf("verify --json of a tampered log: got %s, want ok false, entries 0 and a problem naming line 1", r.stdout)
	}
}

// waybar decodes one waybar line, failing the test if it is not the shape
// waybar's "return-type": "json" wants.
func waybar(t *testing.T, line string) (text, tooltip string, class []string, percentage int) {
	t.Helper()
	var w struct {
		Text       *string  `json:"text"`
		Tooltip    *string  `json:"tooltip"`
		Class      []string `json:"class"`
		Percentage *float64 `json:"percentage"`
	}
	if err := json.Unmarshal([]byte(line), &w); err != nil || w.Text == nil || w.Tooltip == nil || len(w.Class) == 0 || w.Percentage == nil {
		t.Fatalf("waybar line: got %s (%v), want JSON with text, tooltip, class and percentage", line, err)
	}
	if *w.Percentage < 0 || *w.Percentage > 100 {
		t.Fatalf("waybar percentage: got %v in %s, want 0 to 100", *w.Percentage, line)
	}
	return *w.Text, *w.Tooltip, w.Class, int(*w.Percentage)
}

func TestFollowWaybarAcrossADaemonRestart(t *testing.T) {
	s := startDaemon(t, "")
	f := startFollow(t, s.d.Bus.Env(), "--format", "waybar")
	hasClass := func(want string) func(string) bool {
		return func(line string) bool {
			_, _, class, _ := waybar(t, line)
			return slices.Contains(class, want)
		}
	}
	line := f.next(t, "the first line", func(string) bool { return true })
	if text, _, class, pct := waybar(t, line); !slices.Contains(class, "locked") || text != "no session" || pct != 0 {
		t.Fatalf("first line: got %s, want class locked, text \"no session\", percentage 0", line)
	}

	s.ok(t, "start", "write the intro", "--done-when", "committed", "--for", "25m")
	line = f.next(t, "a line with class active after start", hasClass("active"))
	text, tooltip, _, _ := waybar(t, line)
	contains(t, "waybar text", text, "25m", "write the intro")
	contains(t, "waybar tooltip", tooltip, "write the intro", "committed", "time left")

	s.d.Kill9(t)
	f.next(t, "a line with class offline after kill -9", hasClass("offline"))
	s.d.Start(t)
	line = f.next(t, "a line with class active once the daemon is back", hasClass("active"))
	if text, _, _, _ := waybar(t, line); !strings.Contains(text, "write the intro") {
		t.Fatalf("after the restart: got %s, want text with \"write the intro\"", line)
	}

	if code := f.stop(t, syscall.SIGINT); code != 0 {
		t.Fatalf("status --follow on SIGINT: got exit %d, want 0; stderr:\n%s", code, f.stderr)
	}
}

func TestFollowWaitsForTheDaemonToAppear(t *testing.T) {
	testenv.Need(t, "dbus-daemon", "dbus-send")
	bus := testenv.StartBus(t) // no daemon yet, no activation file
	f := startFollow(t, bus.Env(), "--format", "polybar")
	f.next(t, "an offline line", func(l string) bool { return l == "antidrift offline" })
	testenv.StartDaemon(t, bus, filepath.Join(t.TempDir(), "state"))
	f.next(t, "a line once the daemon owns its name", func(l string) bool { return l == "no session" })
	if code := f.stop(t, syscall.SIGTERM); code != 0 {
		t.Fatalf("status --follow on SIGTERM: got exit %d, want 0; stderr:\n%s", code, f.stderr)
	}
}

func TestFollowFormats(t *testing.T) {
	s := startDaemon(t, "")
	env := s.d.Bus.Env()
	jsonF, polybarF, textF := startFollow(t, env, "--json"), startFollow(t, env, "--format", "polybar"), startFollow(t, env)
	state := func(line string) string {
		var m map[string]any
		if err := json.Unmarshal([]byte(line), &m); err != nil {
			t.Fatalf("status --follow --json: got a line that is not JSON (%v): %s", err, line)
		}
		s, _ := m["state"].(string)
		return s
	}
	jsonF.next(t, "a locked line", func(l string) bool { return state(l) == "locked" })
	polybarF.next(t, "a locked line", func(l string) bool { return l == "no session" })
	textF.next(t, "a locked line", func(l string) bool { return strings.HasPrefix(l, "no session") })

	s.ok(t, "start", "50% of the %{F#f00}draft", "--done-when", "drafted", "--for", "90m")
	jsonF.next(t, "an active line", func(l string) bool { return state(l) == "active" })
	// Polybar would read %{…} as a formatting tag (and %%{ too: it has no
	// escape); it must come out as text polybar reads no tag in.
	polybarF.next(t, "an active line", func(l string) bool { return l == "1h30m · 50% of the % {F#f00}draft" })
	textF.next(t, "an active line", func(l string) bool {
		return strings.HasPrefix(l, "active · 50% of the %{F#f00}draft · 1h30m left · drift unknown · window")
	})
	for _, f := range []*follower{jsonF, polybarF, textF} {
		if code := f.stop(t, syscall.SIGTERM); code != 0 {
			t.Errorf("on SIGTERM: got exit %d, want 0; stderr:\n%s", code, f.stderr)
		}
	}
}

func TestAllowTakesTitlePatternsFromFlagsCommandAndConfig(t *testing.T) {
	s := startDaemon(t, "allowed_classes = [\"Emacs\", \"firefox:*GitHub*\"]\ndistractions = [\"*:*YouTube*\"]\n")
	s.ok(t, "start", "write", "--done-when", "done", "--for", "10m")
	if got := strs(s.status(t), "allowed_classes"); strings.Join(got, " ") != "Emacs firefox:*GitHub*" {
		t.Fatalf("the config's patterns: got %v, want [Emacs firefox:*GitHub*]", got)
	}
	s.ok(t, "allow", "*:*antidrift*")
	if got := strs(s.status(t), "allowed_classes"); strings.Join(got, " ") != "Emacs firefox:*GitHub* *:*antidrift*" {
		t.Fatalf("after allow: got %v, want [Emacs firefox:*GitHub* *:*antidrift*]", got)
	}
	s.ok(t, "complete")
	s.ok(t, "end")
	s.ok(t, "start", "write", "--done-when", "done", "--for", "10m", "--allow", "xterm:*make*")
	if got := strs(s.status(t), "allowed_classes"); strings.Join(got, " ") != "xterm:*make*" {
		t.Fatalf("--allow: got %v, want [xterm:*make*]", got)
	}
}
