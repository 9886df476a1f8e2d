package dist

import (
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/antidrift/antidrift/internal/testsupport/testenv"
)

// The applet's start form offers the open tasks of a real Taskwarrior
// (ListTasks, read in the background as the form opens), by title, due
// date and number, as a screen reader reads them; choosing one (the
// keyboard, as a person does) makes its title the next action, and Start
// starts from the task (StartTask: TaskRef is the task's, Taskwarrior has
// it started). Help me phrase it without a model says so in a sentence
// and changes nothing. Photographed.
func TestPlasmaAppletStartsFromATask(t *testing.T) {
	testenv.EachRelease(t, testenv.PlasmaReleases, testPlasmaAppletStartsFromATask)
}

func testPlasmaAppletStartsFromATask(t *testing.T, rel testenv.Release) {
	testenv.Need(t, "task")
	r := needPlasma(t, rel)
	bus := testenv.StartBus(t)
	x := testenv.StartX(t)
	runtime := r.TempDir(t)
	a11y := testenv.StartAccessibility(t, bus, runtime)

	home := t.TempDir()
	rc, data := filepath.Join(home, "taskrc"), filepath.Join(home, "data")
	if err := os.WriteFile(rc, nil, 0o600); err != nil {
		t.Fatal(err)
	}
	task := func(args ...string) string {
		t.Helper()
		cmd := exec.Command("task", append([]string{"rc.confirmation=off", "rc.verbose=nothing"}, args...)...)
		cmd.Env = append(os.Environ(), "TASKRC="+rc, "TASKDATA="+data)
		out, err := cmd.CombinedOutput()
		if err != nil {
			t.Fatalf("task %s: %v\n%s", strings.Join(args, " "), err, out)
		}
		return strings.TrimSpace(string(out))
	}
	task("add", "Write the <b>intro</b>", "due:2030-01-02", "priority:H")
	task("add", "Buy milk")
	uuid := task("1", "_uuid")
	config := t.TempDir()
	if err := os.MkdirAll(filepath.Join(config, "antidrift"), 0o700); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(filepath.Join(config, "antidrift", "config.toml"), []byte("[tasks.taskwarrior]\n"), 0o600); err != nil {
		t.Fatal(err)
	}
	testenv.StartDaemon(t, bus, filepath.Join(t.TempDir(), "state"), "DISPLAY="+x.Name, "XDG_CONFIG_HOME="+config, "TASKRC="+rc, "TASKDATA="+data)

	dir, env := plasmaHome(t, r, bus, runtime, "DISPLAY="+x.Name, "QT_QPA_PLATFORM=xcb")
	installCLI(t, dir)
	applet := startApplet(t, r, dir, env)
	window := roomyWindow(t, x, applet, 480, 740)
	start, _ := a11y.WaitForNode(t, "plasmawindowed", "Start a session…", showing("push button", named("Start a session…")))
	a11y.Press(t, start)
	combo, tree := a11y.WaitForNode(t, "plasmawindowed", "the start form's tasks", showing("combo box", named("Start from a task")))
	checkReadable(t, "the start form with tasks", tree)

	// The coach without a model: a sentence, nothing changed.
	next := tree.Find(showing("text", named("Next action")))
	coach := tree.Find(showing("push button", named("Help me phrase it")))
	if len(next) == 0 || len(coach) == 0 {
		t.Fatalf("the start form: got\n%s\nwant Next action and Help me phrase it", tree)
	}
	a11y.Type(t, next[0], "mail")
	a11y.Press(t, coach[0])
	a11y.WaitForNode(t, "plasmawindowed", "the coach saying there is no model", showing("label", func(s string) bool {
		return strings.HasPrefix(s, "No model is configured")
	}))
	a11y.Type(t, next[0], "")

	// The first task, chosen with the keyboard: the tasks focused, then Down.
	var focused bool
	if err := a11y.Conn.Object(combo.Dest, combo.Ref).Call("org.a11y.atspi.Component.GrabFocus", 0).Store(&focused); err != nil || !focused {
		t.Fatalf("focusing the tasks: got %v, %v", focused, err)
	}
	for _, key := range []string{"Down"} {
		if _, err := x.Run(t, "xdotool", "key", "--window", fmt.Sprint(window), key); err != nil {
			t.Fatal(err)
		}
	}
	testenv.WaitFor(t, time.Minute, "the next action to be the task's title", func() string {
		var text string
		for _, n := range a11y.Application(t, "plasmawindowed").Find(showing("text", named("Next action"))) {
			if err := a11y.Conn.Object(n.Dest, n.Ref).Call("org.a11y.atspi.Text.GetText", 0, int32(0), int32(-1)).Store(&text); err != nil {
				t.Logf("reading the next action: %v", err)
			}
		}
		return text
	}, func(s string) bool { return s == "Write the <b>intro</b>" })
	tree = a11y.Application(t, "plasmawindowed")
	if len(tree.Find(func(n *testenv.Node) bool { return n.Role == "combo box" && strings.Contains(n.Name, "due ") })) > 0 {
		t.Logf("combo: %v", combo)
	}
	photograph(t, x, applet, window, filepath.Join(testenv.ArtifactsDir(t), "plasma-applet-start-task.png"), 0, white)

	send := tree.Find(showing("push button", named("Start")))
	if len(send) == 0 {
		t.Fatalf("the start form: got\n%s\nwant Start", tree)
	}
	a11y.Press(t, send[0])
	s := bus.Session(t)
	testenv.WaitForProp(t, time.Minute, s, "State", "active")
	if got, want := s.String(t, "TaskRef"), "taskwarrior:"+uuid; got != want {
		t.Errorf("TaskRef of the session started from the task: got %q, want %q", got, want)
	}
	if got := s.String(t, "NextAction"); got != "Write the <b>intro</b>" {
		t.Errorf("NextAction of the session started from the task: got %q, want the task's title", got)
	}
	// Taskwarrior is told off the daemon's lock, a moment after.
	testenv.WaitFor(t, time.Minute, "Taskwarrior to have the task started (its start date)", func() string {
		return task("_get", uuid+".start")
	}, func(s string) bool { return s != "" })
}
