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

// call calls a method with busctl, for the tests about busctl itself.
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
		t.Fatalf("busctl's reply: got %q, want a string reply (s \"…\")", busctlOut)
	}
	return m[1]
}

// busctl and gdbus, two clients antidrift does not share a line of code
// with, drive a whole session and read what it did.
func TestBusctlAndGdbusDriveASession(t *testing.T) {
	d := startDaemon(t)
	mon := testenv.StartMonitor(t, d.Bus, "type='signal',interface='org.freedesktop.DBus.Properties',member='PropertiesChanged',path='/org/antidrift/Session1'")

	call(t, d, "Plan")
	if got, want := gdbusProp(t, d, "State"), "(<'planning'>,)"; got != want {
		t.Fatalf("State after Plan read with gdbus: got %s, want %s", got, want)
	}
	id := unquote(t, call(t, d, "Start", "sstsas", "write the intro", "intro committed", "1500", "block", "2", "Editor", "Terminal"))
	if !regexp.MustCompile(`^[0-9a-f]{8}-[0-9a-f]{4}-7[0-9a-f]{3}-`).MatchString(id) {
		t.Fatalf("session id: got %q, want a UUIDv7", id)
	}
	// One PropertiesChanged carries every property the Start changed.
	msg := mon.WaitFor(t, id, wait)
	for _, want := range []string{`"State"`, `"active"`, `"NextAction"`, `"write the intro"`, `"Enforcement"`, `"block"`, `"AllowedClasses"`, `"Editor"`, `"Deadline"`, `"Drift"`} {
		if !strings.Contains(msg, want) {
			t.Errorf("the PropertiesChanged carrying the session id: got\n%s\nwant it to carry %s", msg, want)
		}
	}
	if got, want := gdbusProp(t, d, "SessionId"), "(<'"+id+"'>,)"; got != want {
		t.Fatalf("SessionId via gdbus: got %s, want %s", got, want)
	}

	call(t, d, "Complete")
	hash := unquote(t, call(t, d, "End"))
	if got, want := gdbusProp(t, d, "AuditHead"), "(<'"+hash+"'>,)"; got != want {
		t.Fatalf("AuditHead via gdbus: got %s, want %s (End's hash)", got, want)
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
		t.Fatalf("hash recomputed from audit.jsonl: got %s, want %s (End's), line %s", got, hash, line)
	}
	var entry map[string]any
	if err := json.Unmarshal(line, &entry); err != nil {
		t.Fatal(err)
	}
	if entry["session_id"] != id || entry["outcome"] != "completed" || entry["enforcement"] != "block" {
		t.Fatalf("audit line: got %s, want session_id %s, outcome completed, enforcement block", line, id)
	}
	if got, want := call(t, d, "VerifyAudit"), `bus true 1 ""`; got != want {
		t.Fatalf("VerifyAudit with busctl: got %s, want %s", got, want)
	}
	if got := call(t, d, "History", "u", "0"); !strings.Contains(got, id) || !strings.Contains(got, hash) {
		t.Fatalf("History with busctl: got %s, want the session %s and its hash %s", got, id, hash)
	}
}

// gdbus, unlike busctl, prints a refusal's D-Bus error name: it sees the
// names and messages a program other than ours would.
func TestGdbusSeesTheErrorNames(t *testing.T) {
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
		t.Errorf("History with an unreadable audit log: got %v, want org.antidrift.Error.Storage", err)
	}
	_, err = d.Bus.Run(t, "gdbus", "call", "--session", "--dest", "org.antidrift",
		"--object-path", "/org/antidrift/Session1", "--method", "org.antidrift.Session1.Report", "0", "3600")
	if err == nil || !strings.Contains(err.Error(), "org.antidrift.Error.Storage") || !strings.Contains(err.Error(), "could not build the report") {
		t.Errorf("Report with an unreadable audit log: got %v, want org.antidrift.Error.Storage saying it could not build the report", err)
	}
}

func TestKillNineResumesTheSameSession(t *testing.T) {
	d := startDaemon(t)
	s := d.Session(t)
	id := startSession(t, s, "fix the bug", "tests pass", 3600, "locked", "Editor")
	deadline := testenv.Prop[int64](t, s, "Deadline")
	d.Kill9(t)
	d.Start(t)
	if got := s.String(t, "SessionId"); got != id {
		t.Fatalf("SessionId after kill -9: got %q, want %q", got, id)
	}
	if got := testenv.Prop[int64](t, s, "Deadline"); got != deadline {
		t.Fatalf("Deadline after kill -9: got %d, want %d", got, deadline)
	}
	if got := s.String(t, "Enforcement"); got != "locked" {
		t.Fatalf("Enforcement after kill -9: got %q, want %q", got, "locked")
	}
	// Still locked: the restart is no way out.
	err := s.Try("Abandon", testenv.Args("restart trick"))
	if err == nil {
		t.Fatal("Abandon after restart: got success, want a refusal saying the session is locked")
	}
	if name, msg := testenv.Refused(t, err); !strings.Contains(msg, "locked") {
		t.Fatalf("Abandon after restart: got %s %q, want a refusal saying the session is locked", name, msg)
	}
}

func TestShortTimeboxExpiresIntoReview(t *testing.T) {
	d := startDaemon(t)
	s := d.Session(t)
	startSession(t, s, "tiny task", "done", 2, "")
	waitProp(t, d, "State", "review") // the 2 s timebox expired
	if got := s.String(t, "Outcome"); got != "expired" {
		t.Fatalf("Outcome: got %q, want %q", got, "expired")
	}
	s.Call(t, "Extend", testenv.Args(uint64(60)))
	if got := s.String(t, "State"); got != "active" {
		t.Fatalf("State after Extend from expired review: got %q, want %q", got, "active")
	}
}

func TestCleanStopRecordsTheDowntime(t *testing.T) {
	d := startDaemon(t)
	id := startSession(t, d.Session(t), "a", "b", 3600, "")
	d.Stop(t)
	if code := d.ExitCode(); code != 0 {
		t.Fatalf("exit code after SIGTERM: got %d, want 0\n%s", code, d.Output())
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
		t.Fatalf("last raw event: got %v, want an unavailable 'daemon stopped'", last)
	}
}

func TestSecondDaemonIsTurnedAway(t *testing.T) {
	d := startDaemon(t)
	bin := testenv.Binary(t, "antidriftd")
	// Same bus: the name is taken.
	out, err := d.Bus.Run(t, bin, "--state-dir", filepath.Join(t.TempDir(), "other"))
	if err == nil || !strings.Contains(out+err.Error(), "another antidriftd already owns org.antidrift") {
		t.Fatalf("second daemon on the same bus: got %v %s, want a refusal saying another antidriftd owns org.antidrift", err, out)
	}
	// Another bus, same state directory: the lock keeps it out.
	other := testenv.StartBus(t)
	out, err = other.Run(t, bin, "--state-dir", d.StateDir)
	if err == nil || !strings.Contains(out+err.Error(), "another antidriftd is already using") {
		t.Fatalf("second daemon on the same state dir: got %v %s, want a refusal saying another antidriftd is using it", err, out)
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
	s := d.Session(t)
	if got := s.String(t, "State"); got != "locked" {
		t.Fatalf("State: got %q, want %q", got, "locked")
	}
	problems := s.Strings(t, "Problems")
	aside, _ := filepath.Glob(filepath.Join(dir, "state.json.damaged-*"))
	if len(aside) != 1 || !strings.Contains(strings.Join(problems, "\n"), filepath.Base(aside[0])) {
		t.Fatalf("got %v set aside, Problems %q; want one file set aside, named in Problems", aside, problems)
	}
	if b, _ := os.ReadFile(aside[0]); !bytes.Equal(b, garbage) {
		t.Fatalf("the damaged file set aside: got %q, want %q", b, garbage)
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
		t.Fatal("docs/audit.md: got no python verifier, want one in a ```python block")
	}
	script := filepath.Join(t.TempDir(), "verify.py")
	if err := os.WriteFile(script, m[1], 0o600); err != nil {
		t.Fatal(err)
	}
	d := startDaemon(t)
	s := d.Session(t)
	for i := 0; i < 2; i++ {
		startSession(t, s, "task", "done", 60, "")
		completeAndEnd(t, s)
	}
	audit := filepath.Join(d.StateDir, "audit.jsonl")
	if out, err := exec.Command(python, script, audit).CombinedOutput(); err != nil || strings.TrimSpace(string(out)) != "ok 2" {
		t.Fatalf("README verifier on a good chain: got %v %q, want \"ok 2\"", err, out)
	}
	data, _ := os.ReadFile(audit)
	os.WriteFile(audit, bytes.Replace(data, []byte(`"next_action":"task"`), []byte(`"next_action":"tusk"`), 1), 0o600)
	if out, err := exec.Command(python, script, audit).CombinedOutput(); err == nil || !strings.Contains(string(out), "line 1: altered") {
		t.Fatalf("README verifier on a tampered chain: got %v %q, want a failure saying line 1: altered", err, out)
	}
}

// A panel's call: Report for today returns the JSON of `antidrift report
// --json`, with the session that just ended in it, from a second client
// (godbus) and with the figures a panel shows.
func TestReportOverTheBus(t *testing.T) {
	d := startDaemon(t)
	s := d.Session(t)
	startSession(t, s, "write the report", "it prints", 600, "observe")
	completeAndEnd(t, s)
	now := time.Now()
	midnight := time.Date(now.Year(), now.Month(), now.Day(), 0, 0, 0, 0, time.Local)
	var doc string
	s.Call(t, "Report", testenv.Args(midnight.Unix(), midnight.AddDate(0, 0, 1).Unix()), &doc)
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
		t.Fatalf("Report: got %s, want JSON (%v)", doc, err)
	}
	if r.Schema != 1 || !r.Chain.OK || r.Totals.Sessions != 1 || r.Totals.Completed != 1 || len(r.Sessions) != 1 || r.Sessions[0].NextAction != "write the report" {
		t.Errorf("Report for today: got %s, want schema 1, a good chain and the one completed session \"write the report\"", doc)
	}
}
