package main

import (
	"encoding/json"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/godbus/dbus/v5"

	"github.com/antidrift/antidrift/internal/testsupport/testenv"
)

// twHarness is a real Taskwarrior (Debian's task) with its own TASKRC
// and TASKDATA in a temp dir, antidrift's on-modify hook enabled in its
// hooks directory as docs/tasks.md says, and the CLI on PATH for the hook.
type twHarness struct {
	env  []string // TASKRC, TASKDATA, PATH, and the bus
	bus  *testenv.Bus
	hook string // the hooks directory
}

func newTaskwarrior(t *testing.T, bus *testenv.Bus) *twHarness {
	t.Helper()
	testenv.Need(t, "task", "dbus-daemon", "busctl")
	dir := t.TempDir()
	hooks := filepath.Join(dir, "hooks")
	bin := filepath.Join(dir, "bin")
	for _, d := range []string{hooks, bin} {
		if err := os.MkdirAll(d, 0o700); err != nil {
			t.Fatal(err)
		}
	}
	cli := testenv.Binary(t, "antidrift")
	// The hook as make install fills it in, with the CLI just built.
	src, err := os.ReadFile(filepath.Join("..", "..", "dist", "taskwarrior", "on-modify.antidrift.in"))
	if err != nil {
		t.Fatal(err)
	}
	hook := strings.NewReplacer("@BINDIR@", filepath.Dir(cli), "@DATADIR@", "/usr/share").Replace(string(src))
	if err := os.WriteFile(filepath.Join(hooks, "on-modify.antidrift"), []byte(hook), 0o700); err != nil {
		t.Fatal(err)
	}
	rc := filepath.Join(dir, "taskrc")
	if err := os.WriteFile(rc, []byte("hooks.location="+hooks+"\nconfirmation=off\n"), 0o600); err != nil {
		t.Fatal(err)
	}
	env := append(bus.Env(), "TASKRC="+rc, "TASKDATA="+filepath.Join(dir, "data"), "PATH="+bin+":"+os.Getenv("PATH"))
	return &twHarness{env: env, bus: bus, hook: hooks}
}

// task runs task as the person would (hooks on), within 20s.
func (tw *twHarness) task(t *testing.T, args ...string) string {
	t.Helper()
	out, err := tw.tryTask(args...)
	if err != nil {
		t.Fatalf("task %s: %v\n%s", strings.Join(args, " "), err, out)
	}
	return out
}

func (tw *twHarness) tryTask(args ...string) (string, error) {
	if args[0] != "rc.verbose=on" {
		args = append([]string{"rc.verbose=nothing"}, args...)
	}
	cmd := exec.Command("task", args...)
	cmd.Env = tw.env
	cmd.WaitDelay = time.Second
	done := make(chan struct{})
	timer := time.AfterFunc(20*time.Second, func() { cmd.Process.Kill(); close(done) })
	defer timer.Stop()
	out, err := cmd.CombinedOutput()
	return string(out), err
}

// get is one attribute of the task with uuid.
func (tw *twHarness) get(t *testing.T, uuid, attr string) string {
	t.Helper()
	return strings.TrimSpace(tw.task(t, "rc.hooks=off", "uuid:"+uuid, "_unique", attr))
}

func (tw *twHarness) uuid(t *testing.T, id string) string {
	t.Helper()
	return strings.TrimSpace(tw.task(t, "rc.hooks=off", "_get", id+".uuid"))
}

// cli runs the antidrift CLI on the test's bus.
func (tw *twHarness) cli(t *testing.T, args ...string) (string, error) {
	t.Helper()
	cmd := exec.Command(testenv.Binary(t, "antidrift"), args...)
	cmd.Env = tw.env
	out, err := cmd.CombinedOutput()
	return string(out), err
}

func (tw *twHarness) startDaemon(t *testing.T, configTOML string) *testenv.Daemon {
	t.Helper()
	var pass []string
	for _, kv := range tw.env {
		if strings.HasPrefix(kv, "TASKRC=") || strings.HasPrefix(kv, "TASKDATA=") {
			pass = append(pass, kv)
		}
	}
	return testenv.StartDaemon(t, tw.bus, filepath.Join(t.TempDir(), "state"), append(pass, "XDG_CONFIG_HOME="+configHome(t, configTOML))...)
}

// From Taskwarrior, end to end: antidrift tasks lists the pending tasks,
// start --task starts a session with one (and starts it in Taskwarrior),
// complete ticks it off, abandon leaves it pending and stopped, and a task
// changed by another task call meanwhile is a named conflict, not an
// overwrite.
func TestTaskwarriorTasks(t *testing.T) {
	bus := testenv.StartBus(t)
	tw := newTaskwarrior(t, bus)
	tw.task(t, "add", "Write the report", "due:2030-01-02", "priority:H")
	tw.task(t, "add", "Buy milk")
	tw.task(t, "add", "Tidy the desk", "priority:L")
	d := tw.startDaemon(t, "[tasks.taskwarrior]\n")
	s := d.Session(t)
	report, milk, desk := tw.uuid(t, "1"), tw.uuid(t, "2"), tw.uuid(t, "3")

	out, err := tw.cli(t, "tasks", "--json")
	if err != nil {
		t.Fatalf("antidrift tasks --json: %v\n%s", err, out)
	}
	var listed struct {
		Tasks    []map[string]any `json:"tasks"`
		Failures []map[string]any `json:"failures"`
	}
	if err := json.Unmarshal([]byte(out), &listed); err != nil {
		t.Fatalf("antidrift tasks --json: %v\n%s", err, out)
	}
	var refs []string
	for _, r := range listed.Tasks {
		refs = append(refs, r["ref"].(string))
	}
	if want := []string{"taskwarrior:" + report, "taskwarrior:" + desk, "taskwarrior:" + milk}; strings.Join(refs, " ") != strings.Join(want, " ") || len(listed.Failures) != 0 {
		t.Fatalf("antidrift tasks --json: got refs %v and failures %v, want %v (due first, then priority) and none", refs, listed.Failures, want)
	}
	if out, _ := tw.cli(t, "tasks"); !strings.Contains(out, "taskwarrior:1") || !strings.Contains(out, "Write the report") {
		t.Errorf("antidrift tasks: got\n%s\nwant taskwarrior:1 and its title", out)
	}

	// Start from task 1, complete: ticked off.
	if out, err := tw.cli(t, "start", "--task", "taskwarrior:1", "--for", "25m"); err != nil {
		t.Fatalf("antidrift start --task: %v\n%s", err, out)
	}
	if got := s.String(t, "NextAction"); got != "Write the report" {
		t.Errorf("NextAction = %q, want the task's title", got)
	}
	if got := s.String(t, "TaskRef"); got != "taskwarrior:"+report {
		t.Errorf("TaskRef = %q, want taskwarrior:%s", got, report)
	}
	testenv.WaitFor(t, wait, "Taskwarrior to have task 1 started", func() string { return tw.get(t, report, "start") }, func(v string) bool { return v != "" })
	if out, err := tw.cli(t, "complete"); err != nil {
		t.Fatalf("antidrift complete: %v\n%s", err, out)
	}
	testenv.WaitForProp(t, wait, s, "TaskResult", "done")
	if got := tw.get(t, report, "status"); got != "completed" {
		t.Errorf("task 1 after complete: status %q, want completed", got)
	}
	if out, _ := tw.cli(t, "status"); !strings.Contains(out, "taskwarrior:"+report+": done") {
		t.Errorf("status after complete: want the task line with its result, got\n%s", out)
	}
	out, _ = tw.cli(t, "status", "--json")
	if !strings.Contains(out, `"task_result": "done"`) && !strings.Contains(out, `"task_result":"done"`) {
		t.Errorf("status --json after complete: want task_result done, got\n%s", out)
	}
	tw.cli(t, "end")
	// The sealed summary keeps the task and what became of it.
	var history []map[string]dbus.Variant
	s.Call(t, "History", testenv.Args(uint32(1)), &history)
	if len(history) != 1 || history[0]["task_ref"].Value() != "taskwarrior:"+report || history[0]["task_result"].Value() != "done" {
		t.Errorf("History after end: got %v, want task_ref taskwarrior:%s and task_result done", history, report)
	}

	// Abandon: pending, and stopped again (antidrift started it).
	if out, err := tw.cli(t, "start", "--task", "taskwarrior:"+milk, "--for", "25m", "--done-when", "milk in the fridge"); err != nil {
		t.Fatalf("antidrift start --task uuid: %v\n%s", err, out)
	}
	testenv.WaitFor(t, wait, "Taskwarrior to have the milk started", func() string { return tw.get(t, milk, "start") }, func(v string) bool { return v != "" })
	if out, err := tw.cli(t, "abandon", "later"); err != nil {
		t.Fatalf("antidrift abandon: %v\n%s", err, out)
	}
	testenv.WaitFor(t, wait, "Taskwarrior to have the milk stopped", func() string { return tw.get(t, milk, "start") }, func(v string) bool { return v == "" })
	if got := tw.get(t, milk, "status"); got != "pending" {
		t.Errorf("the milk after abandon: status %q, want pending", got)
	}
	testenv.WaitForProp(t, wait, s, "TaskResult", "left open")
	tw.cli(t, "end")

	// Changed by another task call between start and complete: told, and
	// the other change stands.
	if out, err := tw.cli(t, "start", "--task", "taskwarrior:"+desk, "--for", "25m"); err != nil {
		t.Fatalf("antidrift start --task: %v\n%s", err, out)
	}
	testenv.WaitFor(t, wait, "Taskwarrior to have the desk started", func() string { return tw.get(t, desk, "start") }, func(v string) bool { return v != "" })
	time.Sleep(1100 * time.Millisecond) // Taskwarrior's modified counts seconds
	tw.task(t, "rc.hooks=off", "uuid:"+desk, "modify", "priority:H", "+home")
	tw.cli(t, "complete")
	result := testenv.WaitFor(t, wait, "TaskResult to say the task changed", func() string { return s.String(t, "TaskResult") },
		func(v string) bool { return v != "" && v != "being ticked off" })
	if !strings.Contains(result, "changed by another client") || !strings.Contains(result, "task "+desk+" done") {
		t.Errorf("TaskResult = %q, want it to name the change and what to do", result)
	}
	if got := tw.get(t, desk, "status"); got != "pending" {
		t.Errorf("the changed task after complete: status %q, want pending (never overwritten)", got)
	}
	if got := tw.get(t, desk, "tags"); got != "home" {
		t.Errorf("the changed task's tags %q, want home (the other change stands)", got)
	}
}

// The hook: task N start starts a session with the task, task N done
// completes it; with the daemon down the hook exits 0 at once, saying so,
// and Taskwarrior goes on.
func TestTaskwarriorHook(t *testing.T) {
	bus := testenv.StartBus(t)
	tw := newTaskwarrior(t, bus)
	tw.task(t, "add", "Fix the bike")
	tw.task(t, "add", "Call mum")
	tw.task(t, "add", "Water the plants")
	d := tw.startDaemon(t, "[tasks.taskwarrior]\n")
	s := d.Session(t)
	bike, mum, plants := tw.uuid(t, "1"), tw.uuid(t, "2"), tw.uuid(t, "3")

	out := tw.task(t, "rc.verbose=on", "1", "start") // the hook's line is a footnote
	if !strings.Contains(out, "antidrift: antidrift started session") {
		t.Errorf("task 1 start: got\n%s\nwant the hook's line saying antidrift started a session", out)
	}
	testenv.WaitForProp(t, wait, s, "State", "active")
	if got, want := s.String(t, "TaskRef"), "taskwarrior:"+bike; got != want {
		t.Errorf("TaskRef after task 1 start = %q, want %q", got, want)
	}
	if got := s.String(t, "NextAction"); got != "Fix the bike" {
		t.Errorf("NextAction after task 1 start = %q, want the task's title", got)
	}
	tw.task(t, "1", "done")
	testenv.WaitForProp(t, wait, s, "State", "review")
	if got := s.String(t, "Outcome"); got != "completed" {
		t.Errorf("Outcome after task 1 done = %q, want completed", got)
	}
	if got := s.String(t, "TaskResult"); got != "done" {
		t.Errorf("TaskResult after task 1 done = %q, want done", got)
	}
	if got := tw.get(t, bike, "status"); got != "completed" {
		t.Errorf("task 1 status = %q, want completed (Taskwarrior's own write stands)", got)
	}
	s.Call(t, "End", nil, new(string))

	// Started by the hook, completed by antidrift: ticked off (Taskwarrior
	// changed the task's modified after the hook, which is no conflict).
	tw.task(t, "uuid:"+mum, "start")
	testenv.WaitForProp(t, wait, s, "State", "active")
	if out, err := tw.cli(t, "complete"); err != nil {
		t.Fatalf("antidrift complete: %v\n%s", err, out)
	}
	testenv.WaitForProp(t, wait, s, "TaskResult", "done")
	if got := tw.get(t, mum, "status"); got != "completed" {
		t.Errorf("the task the hook started, after antidrift complete: status %q, want completed", got)
	}
	s.Call(t, "End", nil, new(string))

	// The daemon down: the hook exits 0 with a message, the task starts.
	d.Stop(t)
	out, err := tw.tryTask("rc.verbose=on", "uuid:"+plants, "start")
	if err != nil {
		t.Fatalf("task start with antidrift down: %v\n%s", err, out)
	}
	if !strings.Contains(out, "antidrift is not running") {
		t.Errorf("task start with antidrift down: got\n%s\nwant the hook to say antidrift is not running", out)
	}
	if got := tw.get(t, plants, "start"); got == "" {
		t.Errorf("task start with antidrift down: the task was not started; the hook must never stop Taskwarrior")
	}
}

// A task binary that hangs never holds up the daemon: while ListTasks
// waits for it, another call answers, and ListTasks then names the
// failure.
func TestHangingTaskwarriorLeavesTheDaemonResponsive(t *testing.T) {
	bus := testenv.StartBus(t)
	tw := newTaskwarrior(t, bus)
	hang := filepath.Join(t.TempDir(), "task")
	if err := os.WriteFile(hang, []byte("#!/bin/sh\nexec sleep 60\n"), 0o700); err != nil {
		t.Fatal(err)
	}
	d := tw.startDaemon(t, "[tasks.taskwarrior]\ncommand = \""+hang+"\"\n")
	listed := make(chan string, 1)
	go func() {
		out, err := d.Busctl(t, "call", "ListTasks")
		if err != nil {
			out = "error: " + err.Error()
		}
		listed <- out
	}()
	time.Sleep(300 * time.Millisecond) // ListTasks is waiting on the hanging task now
	if out, err := d.Busctl(t, "call", "Plan"); err != nil {
		t.Fatalf("Plan while a task source hangs: %v\n%s", err, out)
	}
	if out, err := d.Busctl(t, "get-property", "State"); err != nil || !strings.Contains(out, "planning") {
		t.Fatalf("State while a task source hangs: %v %s, want planning", err, out)
	}
	select {
	case out := <-listed:
		if !strings.Contains(out, "did not finish in time") {
			t.Errorf("ListTasks with a hanging task: got %s, want a failure saying task did not finish in time", out)
		}
	case <-time.After(wait):
		t.Fatalf("ListTasks with a hanging task did not answer in %s", wait)
	}
	out, err := tw.cli(t, "start", "--task", "taskwarrior:1", "--for", "25m")
	if err == nil || !strings.Contains(out, "did not finish in time") {
		t.Errorf("start --task with a hanging task: got %v\n%s\nwant a refusal saying task did not finish in time", err, out)
	}
}
