package main

import (
	"bytes"
	"encoding/json"
	"net"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/antidrift/antidrift/internal/testsupport/testenv"
)

// caldavTask is one calendar object holding one VTODO.
func caldavTask(uid, extra string) string {
	return "BEGIN:VCALENDAR\nVERSION:2.0\nPRODID:-//antidrift test//EN\nBEGIN:VTODO\nUID:" + uid +
		"\nDTSTAMP:20261201T100000Z\n" + extra + "END:VTODO\nEND:VCALENDAR\n"
}

// antidriftCLI runs antidrift against d's bus: its stdout, stderr and exit code.
func antidriftCLI(t *testing.T, d *testenv.Daemon, args ...string) (string, string, int) {
	t.Helper()
	cmd := exec.Command(testenv.Binary(t, "antidrift"), args...)
	cmd.Env = append(os.Environ(), "DBUS_SESSION_BUS_ADDRESS="+d.Bus.Address, "NO_COLOR=1")
	var stdout, stderr bytes.Buffer
	cmd.Stdout, cmd.Stderr = &stdout, &stderr
	err := cmd.Run()
	code := 0
	if ee, ok := err.(*exec.ExitError); ok {
		code = ee.ExitCode()
	} else if err != nil {
		t.Fatal(err)
	}
	return stdout.String(), stderr.String(), code
}

// End to end with a real Radicale: [tasks.caldav] in config.toml (the
// password in a 0600 file), antidrift tasks lists the list's open tasks,
// start --task starts from one, complete ticks it off on the server (read
// back by a second client); with the server stopped, antidrift tasks says
// why in a sentence and the daemon still answers.
func TestCalDAVTasksEndToEnd(t *testing.T) {
	testenv.Need(t, "dbus-daemon", "radicale")
	const password = "e2e-Radicale-Pa55"
	r := testenv.StartRadicale(t, "alice", password)
	url := r.MakeTaskList(t, "/alice/tasks/")
	r.Put(t, "/alice/tasks/report.ics", caldavTask("report-1", "SUMMARY:Write the Q4 report\nDUE;VALUE=DATE:20261205\nPRIORITY:1\n"))
	r.Put(t, "/alice/tasks/taxes.ics", caldavTask("taxes-2", "SUMMARY:File taxes\nPRIORITY:5\n"))
	r.Put(t, "/alice/tasks/done.ics", caldavTask("done-3", "SUMMARY:Already done\nSTATUS:COMPLETED\nCOMPLETED:20261130T090000Z\n"))

	home := t.TempDir()
	pwFile := filepath.Join(home, "caldav-password")
	if err := os.WriteFile(pwFile, []byte(password+"\n"), 0o600); err != nil {
		t.Fatal(err)
	}
	cfg := "[tasks.caldav]\nurl = \"" + url + "\"\nusername = \"alice\"\npassword_file = \"" + pwFile + "\"\n"
	if err := os.MkdirAll(filepath.Join(home, "antidrift"), 0o700); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(filepath.Join(home, "antidrift", "config.toml"), []byte(cfg), 0o600); err != nil {
		t.Fatal(err)
	}
	d := testenv.StartDaemon(t, testenv.StartBus(t), filepath.Join(t.TempDir(), "state"), "XDG_CONFIG_HOME="+home)
	s := d.Session(t)
	if problems := s.Strings(t, "Problems"); len(problems) != 0 {
		t.Fatalf("Problems: got %q, want none", problems)
	}

	out, errOut, code := antidriftCLI(t, d, "tasks", "--json")
	var listed struct {
		Tasks []struct {
			Ref, Source, Title string
			Priority           int
		}
		Failures []struct{ Source, Why string }
	}
	if err := json.Unmarshal([]byte(out), &listed); err != nil || code != 0 {
		t.Fatalf("antidrift tasks --json: exit %d, %v\n%s%s", code, err, out, errOut)
	}
	var refs []string
	for _, task := range listed.Tasks {
		refs = append(refs, task.Ref+" "+task.Title)
	}
	if got := strings.Join(refs, "; "); got != "caldav:report-1 Write the Q4 report; caldav:taxes-2 File taxes" {
		t.Fatalf("antidrift tasks: got %q, want the two open tasks, due first", got)
	}
	if len(listed.Failures) != 0 {
		t.Errorf("failures: got %+v, want none", listed.Failures)
	}

	if out, errOut, code := antidriftCLI(t, d, "start", "--task", "caldav:report-1", "--for", "25m"); code != 0 {
		t.Fatalf("antidrift start --task: exit %d\n%s%s", code, out, errOut)
	}
	testenv.WaitForValue(t, 10*time.Second, "TaskRef", "caldav:report-1", func() string { return s.String(t, "TaskRef") })
	if got := s.String(t, "NextAction"); got != "Write the Q4 report" {
		t.Errorf("NextAction: got %q, want the task's title", got)
	}
	if _, ics, _ := r.Get(t, "/alice/tasks/report.ics"); strings.Contains(ics, "STATUS:") {
		t.Errorf("starting wrote to the task:\n%s", ics)
	}

	if out, errOut, code := antidriftCLI(t, d, "complete"); code != 0 {
		t.Fatalf("antidrift complete: exit %d\n%s%s", code, out, errOut)
	}
	testenv.WaitForValue(t, 15*time.Second, "TaskResult", "done", func() string { return s.String(t, "TaskResult") })
	_, ics, _ := r.Get(t, "/alice/tasks/report.ics")
	for _, want := range []string{"STATUS:COMPLETED", "PERCENT-COMPLETE:100", "COMPLETED:"} {
		if !strings.Contains(ics, want) {
			t.Errorf("the server's copy after complete has no %q:\n%s", want, ics)
		}
	}

	// Another client renames the next task between start and complete:
	// complete leaves it as the other client wrote it, and says so.
	if out, errOut, code := antidriftCLI(t, d, "end"); code != 0 {
		t.Fatalf("antidrift end: exit %d\n%s%s", code, out, errOut)
	}
	if out, errOut, code := antidriftCLI(t, d, "start", "--task", "caldav:taxes-2", "--for", "25m"); code != 0 {
		t.Fatalf("antidrift start --task: exit %d\n%s%s", code, out, errOut)
	}
	testenv.WaitForValue(t, 10*time.Second, "TaskRef", "caldav:taxes-2", func() string { return s.String(t, "TaskRef") })
	r.Put(t, "/alice/tasks/taxes.ics", caldavTask("taxes-2", "SUMMARY:File taxes and the VAT\nPRIORITY:5\n"))
	_, theirs, _ := r.Get(t, "/alice/tasks/taxes.ics")
	if out, errOut, code := antidriftCLI(t, d, "complete"); code != 0 {
		t.Fatalf("antidrift complete: exit %d\n%s%s", code, out, errOut)
	}
	result := testenv.WaitFor(t, 15*time.Second, "TaskResult to say what happened", func() string { return s.String(t, "TaskResult") },
		func(v string) bool { return v != "" && v != "being ticked off" })
	t.Logf("TaskResult after a concurrent edit: %s", result)
	if !strings.Contains(result, "changed by another client") || !strings.Contains(result, "renamed") || strings.Contains(result, "priority") {
		t.Errorf("TaskResult after a concurrent edit: got %q, want it to say another client renamed it (and nothing else: the priority is as it was)", result)
	}
	if _, now, _ := r.Get(t, "/alice/tasks/taxes.ics"); now != theirs {
		t.Errorf("the other client's edit was overwritten:\ngot  %q\nwant %q", now, theirs)
	}

	r.Stop()
	out, errOut, code = antidriftCLI(t, d, "tasks")
	if code == 0 || !strings.Contains(errOut, "caldav could not list its tasks: the CalDAV server at") || !strings.Contains(errOut, "is not running") {
		t.Errorf("antidrift tasks with the server stopped: exit %d\n%s%s\nwant a sentence saying it is not running", code, out, errOut)
	}
	if strings.Contains(out+errOut+d.Output(), password) {
		t.Errorf("the password was shown or logged:\n%s%s\n%s", out, errOut, d.Output())
	}
	if got := s.String(t, "State"); got == "" {
		t.Error("the daemon stopped answering")
	}
}

// The daemon reads the password from a real gnome-keyring on its session
// bus when [tasks.caldav] has no password_file (the secret-tool store line
// of docs/tasks.md).
func TestCalDAVPasswordFromTheKeyringEndToEnd(t *testing.T) {
	testenv.Need(t, "dbus-daemon", "radicale", "gnome-keyring-daemon", "secret-tool")
	const password = "e2e-Keyring-Pa55"
	r := testenv.StartRadicale(t, "alice", password)
	url := r.MakeTaskList(t, "/alice/tasks/")
	r.Put(t, "/alice/tasks/a.ics", caldavTask("a-1", "SUMMARY:From the keyring\n"))
	bus := testenv.StartBus(t)
	k := testenv.StartKeyring(t, bus, "login-keyring-pass")
	k.Store(t, password, "antidrift", "service", "antidrift", "url", url, "username", "alice")

	home := t.TempDir()
	if err := os.MkdirAll(filepath.Join(home, "antidrift"), 0o700); err != nil {
		t.Fatal(err)
	}
	cfg := "[tasks.caldav]\nurl = \"" + url + "\"\nusername = \"alice\"\n"
	if err := os.WriteFile(filepath.Join(home, "antidrift", "config.toml"), []byte(cfg), 0o600); err != nil {
		t.Fatal(err)
	}
	d := testenv.StartDaemon(t, bus, filepath.Join(t.TempDir(), "state"), "XDG_CONFIG_HOME="+home)
	out, errOut, code := antidriftCLI(t, d, "tasks")
	if code != 0 || !strings.Contains(out, "caldav:a-1") || !strings.Contains(out, "From the keyring") {
		t.Fatalf("antidrift tasks: exit %d\n%s%s\nwant the keyring's list", code, out, errOut)
	}
	if strings.Contains(d.Output(), password) {
		t.Errorf("the password was logged:\n%s", d.Output())
	}
}

// A CalDAV server that accepts and never answers neither blocks the
// daemon nor antidrift tasks beyond the source's deadline: the daemon
// answers other calls meanwhile, and tasks says the server did not answer.
func TestHangingCalDAVServerLeavesTheDaemonResponsive(t *testing.T) {
	testenv.Need(t, "dbus-daemon")
	l, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { l.Close() })
	go func() {
		for {
			c, err := l.Accept()
			if err != nil {
				return
			}
			t.Cleanup(func() { c.Close() }) // held open, never answered
		}
	}()
	home := t.TempDir()
	pwFile := filepath.Join(home, "pw")
	if err := os.WriteFile(pwFile, []byte("x\n"), 0o600); err != nil {
		t.Fatal(err)
	}
	if err := os.MkdirAll(filepath.Join(home, "antidrift"), 0o700); err != nil {
		t.Fatal(err)
	}
	cfg := "[tasks.caldav]\nurl = \"http://" + l.Addr().String() + "/me/tasks/\"\nusername = \"me\"\npassword_file = \"" + pwFile + "\"\n"
	if err := os.WriteFile(filepath.Join(home, "antidrift", "config.toml"), []byte(cfg), 0o600); err != nil {
		t.Fatal(err)
	}
	d := testenv.StartDaemon(t, testenv.StartBus(t), filepath.Join(t.TempDir(), "state"), "XDG_CONFIG_HOME="+home)
	s := d.Session(t)
	type result struct {
		out, errOut string
		code        int
	}
	done := make(chan result, 1)
	began := time.Now()
	go func() {
		out, errOut, code := antidriftCLI(t, d, "tasks")
		done <- result{out, errOut, code}
	}()
	// While ListTasks waits on the server, the daemon answers.
	for i := 0; i < 5; i++ {
		if got := s.String(t, "State"); got == "" {
			t.Fatal("State: got nothing while ListTasks waited")
		}
		time.Sleep(200 * time.Millisecond)
	}
	select {
	case r := <-done:
		t.Logf("antidrift tasks answered after %v", time.Since(began).Round(100*time.Millisecond))
		if r.code == 0 || !strings.Contains(r.errOut, "caldav could not list its tasks") || !strings.Contains(r.errOut, "did not answer in time") {
			t.Errorf("antidrift tasks with a hanging server: exit %d\n%s%s\nwant a sentence saying it did not answer in time", r.code, r.out, r.errOut)
		}
	case <-time.After(30 * time.Second):
		t.Fatal("antidrift tasks still waiting after 30s on a hanging CalDAV server")
	}
}
