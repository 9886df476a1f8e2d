package main

import (
	"os"
	"path/filepath"
	"regexp"
	"strings"
	"testing"

	"github.com/antidrift/antidrift/internal/testsupport/testenv"
)

// The GNOME start dialog asks for the open tasks in the background
// (ListTasks) and the coach on request (Coach), and neither holds the
// dialog: here the one configured task manager cannot be asked (no task
// binary in the Shell's system), which the dialog says in a muted line
// naming the source, and no model is configured, which the coach's line
// says in a sentence. Typed values still start a session. Photographed.
func TestGnomeStartDialogTasksAndCoach(t *testing.T) {
	testenv.EachRelease(t, testenv.GnomeReleases, testGnomeStartDialogTasksAndCoach)
}

func testGnomeStartDialogTasksAndCoach(t *testing.T, rel testenv.Release) {
	k := startGnomeDesktop(t, rel)
	g := k.g
	startGnomeApps(t, g)
	g.OpenWindow(t, editor.id, "intro.md — Text Editor")
	k.startDaemon(t, gnomeConfig+"[tasks.taskwarrior]\ncommand = \"/nonexistent/task\"\n")
	testenv.WaitForValue(t, wait, "the indicator's icon", "changes-prevent-symbolic", func() string {
		return g.EvalString(t, indicator+"?._icon.icon_name ?? ''")
	})
	dialog := indicator + "._dialog"
	mustEval(t, g, indicator+"._openStart()")
	// Usable at once, whatever the tasks' answer.
	mustEval(t, g, dialog+"._next.set_text('mail')")
	testenv.WaitFor(t, wait, "the dialog's tasks line to name the source that failed", func() string {
		return g.EvalString(t, dialog+"?._tasksField.visible && "+dialog+"._tasksNote.visible ? "+dialog+"._tasksNote.text : ''")
	}, func(s string) bool { return strings.HasPrefix(s, "No open tasks could be read.\ntaskwarrior: ") })
	if got := g.EvalString(t, "String("+dialog+"._taskButtons.length)"); got != "0" {
		t.Errorf("the dialog's tasks with the source failing: got %s, want none", got)
	}

	mustEval(t, g, dialog+"._coach()")
	coach := func() string {
		return g.EvalString(t, dialog+"._coachNote.visible ? "+dialog+"._coachNote.text : ''")
	}
	testenv.WaitFor(t, wait, "the coach's line to say there is no model", coach, func(s string) bool {
		return s != "" && !strings.Contains(s, "org.antidrift") && strings.Contains(strings.ToLower(s), "model")
	})
	if got := g.EvalString(t, dialog+"._next.text"); got != "mail" {
		t.Errorf("the next action after the coach without a model: got %q, want %q (unchanged)", got, "mail")
	}
	if got := g.EvalString(t, "String("+dialog+"._coachButton.reactive)"); got != "true" {
		t.Errorf("Help me phrase it after the answer: reactive %s, want true", got)
	}
	if st := k.props().String(t, "State"); st == "active" {
		t.Fatalf("State after Coach: got active, want nothing started")
	}
	checkReachable(t, g, dialog+".dialogLayout", "the start dialog with tasks and the coach")
	g.Screenshot(t, filepath.Join(testenv.ArtifactsDir(t), "gnome-start-dialog-tasks.png"))

	mustEval(t, g, dialog+"._next.set_text('read mail')")
	mustEval(t, g, dialog+"._done.set_text('inbox empty')")
	mustEval(t, g, dialog+"._duration.set_text('10m')")
	mustEval(t, g, dialog+"._start()")
	gnomeWaitProp(t, k, "State", "active")
	if got := k.props().String(t, "TaskRef"); got != "" {
		t.Errorf("TaskRef of a session typed by hand: got %q, want none", got)
	}
	if bad := regexp.MustCompile(`(?m)^.*(JS ERROR|JS WARNING|Extension antidrift@).*$`).FindAllString(g.Log(), -1); len(bad) > 0 {
		t.Errorf("the Shell's log: got\n%s\nwant no errors about the extension", strings.Join(bad, "\n"))
	}
}

// The GNOME start dialog lists the open tasks of a real CalDAV server
// (Radicale; the daemon runs inside the Shell's rootfs, where there is no
// task binary, and reaches 127.0.0.1 in the same network namespace). The
// tasks were put by a second client (plain HTTP); their titles are the
// dialog's task buttons, choosing one makes its title the next action, and
// Start starts from it: TaskRef is its ref, read with busctl.
func TestGnomeStartDialogListsTasks(t *testing.T) {
	testenv.EachRelease(t, testenv.GnomeReleases, testGnomeStartDialogListsTasks)
}

func testGnomeStartDialogListsTasks(t *testing.T, rel testenv.Release) {
	const password = "gnome-Radicale-Pa55"
	r := testenv.StartRadicale(t, "alice", password)
	url := r.MakeTaskList(t, "/alice/tasks/")
	r.Put(t, "/alice/tasks/report.ics", caldavTask("report-1", "SUMMARY:Write the Q4 report\nPRIORITY:1\n"))
	r.Put(t, "/alice/tasks/taxes.ics", caldavTask("taxes-2", "SUMMARY:File taxes\nPRIORITY:5\n"))

	k := startGnomeDesktop(t, rel)
	g := k.g
	startGnomeApps(t, g)
	g.OpenWindow(t, editor.id, "intro.md — Text Editor")
	pwFile := filepath.Join(k.cfgHome, "antidrift", "caldav-password")
	if err := os.WriteFile(pwFile, []byte(password+"\n"), 0o600); err != nil {
		t.Fatal(err)
	}
	if err := os.Chown(pwFile, testenv.ShellUID, testenv.ShellUID); err != nil {
		t.Fatal(err)
	}
	k.startDaemon(t, gnomeConfig+"[tasks.caldav]\nurl = \""+url+"\"\nusername = \"alice\"\npassword_file = \""+pwFile+"\"\n")
	testenv.WaitForValue(t, wait, "the indicator's icon", "changes-prevent-symbolic", func() string {
		return g.EvalString(t, indicator+"?._icon.icon_name ?? ''")
	})
	dialog := indicator + "._dialog"
	mustEval(t, g, indicator+"._openStart()")
	t.Cleanup(func() {
		if t.Failed() {
			t.Logf("the Shell's log:\n%s\nthe daemon's:\n%s", g.Log(), k.daemon.Output())
		}
	})
	// What the dialog shows: its task buttons' labels, then its tasks note
	// (empty once the tasks are read).
	testenv.WaitFor(t, wait, "the dialog's task buttons to show both tasks' titles", func() string {
		return g.EvalString(t, "("+dialog+"?._taskButtons ?? []).filter(b => b.visible).map(b => b.get_child().text).join(' | ') + "+
			"' || note: ' + ("+dialog+"?._tasksNote.visible ? "+dialog+"._tasksNote.text : '')")
	}, func(s string) bool {
		shown, note, _ := strings.Cut(s, " || note: ")
		labels := strings.Split(shown, " | ")
		if note != "" {
			return false
		}
		return len(labels) == 2 && strings.HasPrefix(labels[0], "Write the Q4 report · ") && strings.HasPrefix(labels[1], "File taxes · ")
	})

	taxes := dialog + "._taskButtons.find(b => b._task.title === 'File taxes')"
	mustEval(t, g, taxes+".checked = true")
	mustEval(t, g, taxes+".emit('clicked', 1)")
	if got := g.EvalString(t, dialog+"._next.text"); got != "File taxes" {
		t.Errorf("the next action after choosing the task: got %q, want %q", got, "File taxes")
	}
	if got := g.EvalString(t, dialog+"._taskButtons.filter(b => b.checked).map(b => b._task.title).join(' | ')"); got != "File taxes" {
		t.Errorf("the checked task buttons: got %q, want %q", got, "File taxes")
	}
	g.Screenshot(t, filepath.Join(testenv.ArtifactsDir(t), "gnome-start-dialog-task-list.png"))

	mustEval(t, g, dialog+"._done.set_text('the return is sent')")
	mustEval(t, g, dialog+"._duration.set_text('10m')")
	mustEval(t, g, dialog+"._start()")
	gnomeWaitProp(t, k, "State", "active")
	if got := k.props().String(t, "TaskRef"); got != "caldav:taxes-2" {
		t.Errorf("TaskRef after starting from the chosen task: got %q, want %q", got, "caldav:taxes-2")
	}
	if got := k.props().String(t, "NextAction"); got != "File taxes" {
		t.Errorf("NextAction after starting from the chosen task: got %q, want %q", got, "File taxes")
	}
	if bad := regexp.MustCompile(`(?m)^.*(JS ERROR|JS WARNING|Extension antidrift@).*$`).FindAllString(g.Log(), -1); len(bad) > 0 {
		t.Errorf("the Shell's log: got\n%s\nwant no errors about the extension", strings.Join(bad, "\n"))
	}
}
