package main

import (
	"bufio"
	"bytes"
	"crypto/sha256"
	"encoding/hex"
	"encoding/json"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"strings"
	"testing"
	"time"

	"github.com/antidrift/antidrift/internal/testsupport/testenv"
)

func TestMain(m *testing.M) { os.Exit(testenv.Main(m)) }

const wait = 30 * time.Second

func startDaemon(t *testing.T) *testenv.Daemon {
	t.Helper()
	testenv.Need(t, "dbus-daemon", "busctl", "gdbus", "dbus-monitor", "dbus-send")
	bus := testenv.StartBus(t)
	return testenv.StartDaemon(t, bus, filepath.Join(t.TempDir(), "state"))
}

func call(t *testing.T, d *testenv.Daemon, args ...string) string {
	t.Helper()
	out, err := d.Busctl(t, "call", args...)
	if err != nil {
		t.Fatalf("busctl call %v: %v\n%s", args, err, d.Output())
	}
	return out
}

// gdbusProp reads one property with gdbus, the second independent client.
func gdbusProp(t *testing.T, d *testenv.Daemon, name string) string {
	t.Helper()
	out, err := d.Bus.Run(t, "gdbus", "call", "--session", "--dest", "org.antidrift",
		"--object-path", "/org/antidrift/Session1", "--method", "org.freedesktop.DBus.Properties.Get",
		"org.antidrift.Session1", name)
	if err != nil {
		t.Fatalf("gdbus Get %s: %v", name, err)
	}
	return strings.TrimSpace(out)
}

func unquote(t *testing.T, busctlOut string) string {
	t.Helper()
	// busctl prints e.g.: s "0192..."
	m := regexp.MustCompile(`^s "(.*)"$`).FindStringSubmatch(busctlOut)
	if m == nil {
		t.Fatalf("not a busctl string reply: %q", busctlOut)
	}
	return m[1]
}

func TestSessionOverTheBus(t *testing.T) {
	d := startDaemon(t)
	mon := testenv.StartMonitor(t, d.Bus, "type='signal',interface='org.freedesktop.DBus.Properties',member='PropertiesChanged',path='/org/antidrift/Session1'")

	call(t, d, "Plan")
	if got := gdbusProp(t, d, "State"); got != "(<'planning'>,)" {
		t.Fatalf("State after Plan read with gdbus: %s", got)
	}
	id := unquote(t, call(t, d, "Start", "sstsas", "write the intro", "intro committed", "1500", "block", "2", "Editor", "Terminal"))
	if !regexp.MustCompile(`^[0-9a-f]{8}-[0-9a-f]{4}-7[0-9a-f]{3}-`).MatchString(id) {
		t.Fatalf("session id %q is not a UUIDv7", id)
	}
	// One PropertiesChanged carries every property the Start changed.
	msg := mon.WaitFor(t, id, wait)
	for _, want := range []string{`"State"`, `"active"`, `"NextAction"`, `"write the intro"`, `"Enforcement"`, `"block"`, `"AllowedClasses"`, `"Editor"`, `"Deadline"`, `"Drift"`} {
		if !strings.Contains(msg, want) {
			t.Errorf("the PropertiesChanged carrying the session id lacks %s:\n%s", want, msg)
		}
	}
	if got := gdbusProp(t, d, "SessionId"); got != "(<'"+id+"'>,)" {
		t.Fatalf("SessionId via gdbus: %s", got)
	}

	call(t, d, "Complete")
	hash := unquote(t, call(t, d, "End"))
	if got := gdbusProp(t, d, "AuditHead"); got != "(<'"+hash+"'>,)" {
		t.Fatalf("AuditHead %s, End returned %s", got, hash)
	}

	// The hash, recomputed from audit.jsonl's bytes by the documented rule.
	data, err := os.ReadFile(filepath.Join(d.StateDir, "audit.jsonl"))
	if err != nil {
		t.Fatal(err)
	}
	line := bytes.TrimSuffix(data, []byte("\n"))
	i := bytes.LastIndex(line, []byte(`"hash":"`))
	emptied := append(append([]byte{}, line[:i]...), []byte(`"hash":""}`)...)
	sum := sha256.Sum256(append([]byte(strings.Repeat("0", 64)), emptied...))
	if got := hex.EncodeToString(sum[:]); got != hash {
		t.Fatalf("recomputed %s, End returned %s, line %s", got, hash, line)
	}
	var entry map[string]any
	if err := json.Unmarshal(line, &entry); err != nil {
		t.Fatal(err)
	}
	if entry["session_id"] != id || entry["outcome"] != "completed" || entry["enforcement"] != "block" {
		t.Fatalf("audit line %s", line)
	}
	if out := call(t, d, "VerifyAudit"); out != `bus true 1 ""` {
		t.Fatalf("VerifyAudit: %s", out)
	}
	if out := call(t, d, "History", "u", "0"); !strings.Contains(out, id) || !strings.Contains(out, hash) {
		t.Fatalf("History: %s", out)
	}
}

func TestErrorNames(t *testing.T) {
	d := startDaemon(t)
	// gdbus, unlike busctl, prints the D-Bus error name.
	for _, c := range []struct {
		method string
		args   []string
		name   string
		says   string
	}{
		{"End", nil, "org.antidrift.Error.NotPermitted", "retrying will not help"},
		{"Start", []string{"' '", "'done'", "uint64 60", "''", "@as []"}, "org.antidrift.Error.InvalidArgument", "next_action"},
		{"Start", []string{"'a'", "'done'", "uint64 0", "''", "@as []"}, "org.antidrift.Error.InvalidArgument", "timebox_secs"},
		{"History", []string{"uint32 5000"}, "org.antidrift.Error.InvalidArgument", "limit"},
		{"Report", []string{"int64 100", "int64 100"}, "org.antidrift.Error.InvalidArgument", "until_unix must be after since_unix"},
		{"Report", []string{"int64 0", "int64 99999999"}, "org.antidrift.Error.InvalidArgument", "at most 400 days"},
	} {
		out, err := d.Bus.Run(t, "gdbus", append([]string{"call", "--session", "--dest", "org.antidrift",
			"--object-path", "/org/antidrift/Session1", "--method", "org.antidrift.Session1." + c.method}, c.args...)...)
		if err == nil || !strings.Contains(err.Error(), c.name) || !strings.Contains(err.Error(), c.says) {
			t.Errorf("%s%v: got %q / %v, want %s saying %q", c.method, c.args, out, err, c.name, c.says)
		}
	}
	// A storage failure: the audit log cannot be read.
	audit := filepath.Join(d.StateDir, "audit.jsonl")
	os.Remove(audit)
	if err := os.Mkdir(audit, 0o700); err != nil {
		t.Fatal(err)
	}
	_, err := d.Bus.Run(t, "gdbus", "call", "--session", "--dest", "org.antidrift",
		"--object-path", "/org/antidrift/Session1", "--method", "org.antidrift.Session1.History", "0")
	if err == nil || !strings.Contains(err.Error(), "org.antidrift.Error.Storage") {
		t.Errorf("History with an unreadable audit log: %v", err)
	}
	_, err = d.Bus.Run(t, "gdbus", "call", "--session", "--dest", "org.antidrift",
		"--object-path", "/org/antidrift/Session1", "--method", "org.antidrift.Session1.Report", "0", "3600")
	if err == nil || !strings.Contains(err.Error(), "org.antidrift.Error.Storage") || !strings.Contains(err.Error(), "could not build the report") {
		t.Errorf("Report with an unreadable audit log: %v", err)
	}
}

func TestKillNineResumesTheSameSession(t *testing.T) {
	d := startDaemon(t)
	id := unquote(t, call(t, d, "Start", "sstsas", "fix the bug", "tests pass", "3600", "locked", "1", "Editor"))
	deadline, _ := d.Busctl(t, "get-property", "Deadline")
	d.Kill9(t)
	d.Start(t)
	if got := unquote(t, mustProp(t, d, "SessionId")); got != id {
		t.Fatalf("after kill -9 the session is %q, want %q", got, id)
	}
	if got, _ := d.Busctl(t, "get-property", "Deadline"); got != deadline {
		t.Fatalf("deadline %s, was %s", got, deadline)
	}
	if got := unquote(t, mustProp(t, d, "Enforcement")); got != "locked" {
		t.Fatalf("level after restart: %s", got)
	}
	// Still locked: the restart is no way out.
	if _, err := d.Busctl(t, "call", "Abandon", "s", "restart trick"); err == nil || !strings.Contains(err.Error(), "locked") {
		t.Fatalf("Abandon after restart: %v", err)
	}
}

func mustProp(t *testing.T, d *testenv.Daemon, name string) string {
	t.Helper()
	out, err := d.Busctl(t, "get-property", name)
	if err != nil {
		t.Fatalf("get-property %s: %v", name, err)
	}
	return out
}

func TestShortTimeboxExpiresIntoReview(t *testing.T) {
	d := startDaemon(t)
	call(t, d, "Start", "sstsas", "tiny task", "done", "2", "", "0")
	testenv.WaitUntil(t, wait, "the 2 s timebox to expire into review", func() bool {
		return mustProp(t, d, "State") == `s "review"`
	})
	if got := mustProp(t, d, "Outcome"); got != `s "expired"` {
		t.Fatalf("outcome %s", got)
	}
	call(t, d, "Extend", "t", "60")
	if got := mustProp(t, d, "State"); got != `s "active"` {
		t.Fatalf("Extend from expired review: %s", got)
	}
}

func TestCleanStopRecordsTheDowntime(t *testing.T) {
	d := startDaemon(t)
	id := unquote(t, call(t, d, "Start", "sstsas", "a", "b", "3600", "", "0"))
	d.Stop(t)
	if code := d.ExitCode(); code != 0 {
		t.Fatalf("exit code %d after SIGTERM\n%s", code, d.Output())
	}
	f, err := os.Open(filepath.Join(d.StateDir, "sessions", id+".jsonl"))
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	var last map[string]any
	for sc := bufio.NewScanner(f); sc.Scan(); {
		last = nil
		if err := json.Unmarshal(sc.Bytes(), &last); err != nil {
			t.Fatal(err)
		}
	}
	if last["reason"] != "daemon stopped" || last["available"] != false {
		t.Fatalf("last raw event %v, want an unavailable 'daemon stopped'", last)
	}
}

func TestSecondDaemonIsTurnedAway(t *testing.T) {
	d := startDaemon(t)
	bin := testenv.Binary(t, "antidriftd")
	// Same bus: the name is taken.
	out, err := d.Bus.Run(t, bin, "--state-dir", filepath.Join(t.TempDir(), "other"))
	if err == nil || !strings.Contains(out+err.Error(), "another antidriftd already owns org.antidrift") {
		t.Fatalf("second daemon on the same bus: %v %s", err, out)
	}
	// Another bus, same state directory: the lock keeps it out.
	other := testenv.StartBus(t)
	out, err = other.Run(t, bin, "--state-dir", d.StateDir)
	if err == nil || !strings.Contains(out+err.Error(), "another antidriftd is already using") {
		t.Fatalf("second daemon on the same state dir: %v %s", err, out)
	}
}

func TestDamagedStateIsSetAsideAndNamed(t *testing.T) {
	testenv.Need(t, "dbus-daemon", "busctl", "dbus-send")
	dir := filepath.Join(t.TempDir(), "state")
	if err := os.MkdirAll(dir, 0o700); err != nil {
		t.Fatal(err)
	}
	garbage := []byte("{\"state\": \"act")
	if err := os.WriteFile(filepath.Join(dir, "state.json"), garbage, 0o600); err != nil {
		t.Fatal(err)
	}
	d := testenv.StartDaemon(t, testenv.StartBus(t), dir)
	if got := mustProp(t, d, "State"); got != `s "locked"` {
		t.Fatalf("state %s", got)
	}
	problems := mustProp(t, d, "Problems")
	aside, _ := filepath.Glob(filepath.Join(dir, "state.json.damaged-*"))
	if len(aside) != 1 || !strings.Contains(problems, filepath.Base(aside[0])) {
		t.Fatalf("set aside %v, Problems %s", aside, problems)
	}
	if b, _ := os.ReadFile(aside[0]); !bytes.Equal(b, garbage) {
		t.Fatalf("the damaged bytes were not kept: %q", b)
	}
}

// The ten lines of Python in docs/audit.md verify a real chain and catch a
// tampered one: the rule is usable without antidrift.
func TestREADMEVerifierWorks(t *testing.T) {
	python, err := exec.LookPath("python3")
	if err != nil {
		t.Skip("python3 is not installed; the README verifier cannot be run")
	}
	readme, err := os.ReadFile("../../docs/audit.md")
	if err != nil {
		t.Fatal(err)
	}
	m := regexp.MustCompile("(?s)```python\n(.*?)```").FindSubmatch(readme)
	if m == nil {
		t.Fatal("docs/audit.md has no python verifier")
	}
	script := filepath.Join(t.TempDir(), "verify.py")
	if err := os.WriteFile(script, m[1], 0o600); err != nil {
		t.Fatal(err)
	}
	d := startDaemon(t)
	for i := 0; i < 2; i++ {
		call(t, d, "Start", "sstsas", "task", "done", "60", "", "0")
		call(t, d, "Complete")
		call(t, d, "End")
	}
	audit := filepath.Join(d.StateDir, "audit.jsonl")
	if out, err := exec.Command(python, script, audit).CombinedOutput(); err != nil || strings.TrimSpace(string(out)) != "ok 2" {
		t.Fatalf("README verifier on a good chain: %v %s", err, out)
	}
	data, _ := os.ReadFile(audit)
	os.WriteFile(audit, bytes.Replace(data, []byte(`"next_action":"task"`), []byte(`"next_action":"tusk"`), 1), 0o600)
	if out, err := exec.Command(python, script, audit).CombinedOutput(); err == nil || !strings.Contains(string(out), "line 1: altered") {
		t.Fatalf("README verifier on a tampered chain: %v %s", err, out)
	}
}

// A panel's call: Report for today returns the JSON of `antidrift report
// --json`, with the session that just ended in it, from a second client
// (godbus) and with the figures a panel shows.
func TestReportOverTheBus(t *testing.T) {
	d := startDaemon(t)
	call(t, d, "Start", "sstsas", "write the report", "it prints", "600", "observe", "0")
	call(t, d, "Complete")
	call(t, d, "End")
	now := time.Now()
	midnight := time.Date(now.Year(), now.Month(), now.Day(), 0, 0, 0, 0, time.Local)
	var doc string
	obj := d.Bus.Dial(t).Object("org.antidrift", "/org/antidrift/Session1")
	if err := obj.Call("org.antidrift.Session1.Report", 0, midnight.Unix(), midnight.AddDate(0, 0, 1).Unix()).Store(&doc); err != nil {
		t.Fatalf("Report: %v", err)
	}
	var r struct {
		Schema int `json:"schema"`
		Chain  struct {
			OK bool `json:"ok"`
		} `json:"chain"`
		Totals struct {
			Sessions  int `json:"sessions"`
			Completed int `json:"completed"`
		} `json:"totals"`
		Sessions []struct {
			NextAction string `json:"next_action"`
		} `json:"sessions"`
	}
	if err := json.Unmarshal([]byte(doc), &r); err != nil {
		t.Fatalf("Report returned no JSON (%v): %s", err, doc)
	}
	if r.Schema != 1 || !r.Chain.OK || r.Totals.Sessions != 1 || r.Totals.Completed != 1 || len(r.Sessions) != 1 || r.Sessions[0].NextAction != "write the report" {
		t.Errorf("Report for today: %s", doc)
	}
}
