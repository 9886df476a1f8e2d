package taskwarrior

import (
	"context"
	"errors"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"
	"time"
	"unicode/utf8"

	"github.com/antidrift/antidrift/internal/testsupport/testenv"
	"github.com/antidrift/antidrift/service"
)

// taskData gives the test its own Taskwarrior (TASKRC and TASKDATA in a
// temp dir, as a person's would be) and returns a func running task there.
func taskData(t *testing.T) func(args ...string) string {
	t.Helper()
	testenv.Need(t, "task")
	dir := t.TempDir()
	rc := filepath.Join(dir, "taskrc")
	if err := os.WriteFile(rc, nil, 0o600); err != nil {
		t.Fatal(err)
	}
	t.Setenv("TASKRC", rc)
	t.Setenv("TASKDATA", filepath.Join(dir, "data"))
	return func(args ...string) string {
		t.Helper()
		out, err := exec.Command("task", append([]string{"rc.confirmation=off", "rc.verbose=nothing"}, args...)...).CombinedOutput()
		if err != nil {
			t.Fatalf("task %s: %v\n%s", strings.Join(args, " "), err, out)
		}
		return string(out)
	}
}

func ctx(t *testing.T) context.Context {
	c, cancel := context.WithTimeout(context.Background(), 10*time.Second)
	t.Cleanup(cancel)
	return c
}

func TestListGetAndComplete(t *testing.T) {
	task := taskData(t)
	task("add", "Write the report", "due:2030-01-02", "priority:H")
	task("add", "Buy milk")
	task("add", "Old one")
	task("3", "done")
	s := New("")
	items, err := s.List(ctx(t))
	if err != nil {
		t.Fatal(err)
	}
	if len(items) != 2 {
		t.Fatalf("List: got %d tasks %+v, want the 2 pending ones", len(items), items)
	}
	w := items[0]
	if w.Title == "Buy milk" {
		w = items[1]
	}
	if w.Source != "taskwarrior" || len(w.ID) != 36 || w.Short != "1" || w.Title != "Write the report" || w.Priority != 1 || w.Due.Year() != 2030 || w.Done || w.Version == "" {
		t.Errorf("List: got %+v, want task 1 with its uuid, title, priority 1 (H), due 2030 and a version", w)
	}
	g, err := s.Get(ctx(t), "1")
	if err != nil || g.ID != w.ID {
		t.Errorf("Get(1): got %+v, %v; want %s", g, err, w.ID)
	}
	for _, bad := range []string{"rc.data.location=/tmp", "+home", "1 2", "", "0", "-1", "modify", w.ID + " done"} {
		if _, err := s.Get(ctx(t), bad); !errors.As(err, new(*service.TaskNotFound)) {
			t.Errorf("Get(%q): got %v, want *TaskNotFound (an id is never read as anything but an id)", bad, err)
		}
	}
	if err := s.Complete(ctx(t), w); err != nil {
		t.Fatalf("Complete: %v", err)
	}
	if got := task("uuid:"+w.ID, "_unique", "status"); strings.TrimSpace(got) != "completed" {
		t.Errorf("after Complete the task's status is %q, want completed", got)
	}
	// Once done, a second Complete is a conflict, not an overwrite.
	var changed *service.TaskChanged
	if err := s.Complete(ctx(t), w); !errors.As(err, &changed) || !strings.Contains(err.Error(), "marked done meanwhile") {
		t.Errorf("Complete of a done task: got %v, want *TaskChanged saying it was marked done meanwhile", err)
	}
}

// A task done, deleted or modified by another task call between reading
// and completing is a named conflict, and nothing is written.
func TestCompleteRefusesAChangedTask(t *testing.T) {
	task := taskData(t)
	task("add", "one")
	task("add", "two")
	task("add", "three")
	s := New("")
	get := func(id string) service.TaskItem {
		it, err := s.Get(ctx(t), id)
		if err != nil {
			t.Fatal(err)
		}
		return it
	}
	one, two, three := get("1"), get("2"), get("3")
	time.Sleep(1100 * time.Millisecond) // modified has a resolution of a second
	task("uuid:"+one.ID, "done")
	task("uuid:"+two.ID, "delete")
	task("uuid:"+three.ID, "modify", "+urgent")
	for _, c := range []struct {
		item service.TaskItem
		what string
		want string
	}{{one, "marked done meanwhile", "completed"}, {two, "deleted meanwhile", "deleted"}, {three, "modified at", "pending"}} {
		var changed *service.TaskChanged
		err := s.Complete(ctx(t), c.item)
		if !errors.As(err, &changed) || !strings.Contains(changed.What, c.what) || changed.Do == "" {
			t.Errorf("Complete(%s): got %v, want *TaskChanged with %q and what to do", c.item.Title, err, c.what)
		}
		if got := strings.TrimSpace(task("uuid:"+c.item.ID, "_unique", "status")); got != c.want {
			t.Errorf("%s: status %q after the refused Complete, want %q (untouched)", c.item.Title, got, c.want)
		}
	}
}

func TestStartedAndStopped(t *testing.T) {
	task := taskData(t)
	task("add", "mine")
	task("add", "theirs")
	task("2", "start")
	s := New("")
	mine, _ := s.Get(ctx(t), "1")
	theirs, _ := s.Get(ctx(t), "2")
	if err := s.Started(ctx(t), mine); err != nil {
		t.Fatalf("Started: %v", err)
	}
	if got := task("uuid:"+mine.ID, "_unique", "start"); strings.TrimSpace(got) == "" {
		t.Errorf("after Started the task has no start")
	}
	if err := s.Started(ctx(t), theirs); !errors.Is(err, service.ErrTaskAlreadyStarted) {
		t.Errorf("Started of a started task: got %v, want ErrTaskAlreadyStarted", err)
	}
	if err := s.Stopped(ctx(t), mine); err != nil {
		t.Fatalf("Stopped: %v", err)
	}
	if got := strings.TrimSpace(task("uuid:"+mine.ID, "_unique", "start")); got != "" {
		t.Errorf("after Stopped the task has start %q, want none", got)
	}
	if got := strings.TrimSpace(task("uuid:"+mine.ID, "_unique", "status")); got != "pending" {
		t.Errorf("after Stopped the status is %q, want pending", got)
	}
}

// antidrift's own calls run no hooks: an on-modify hook that would write
// a file (or hang) is never run by Started or Complete.
func TestOwnCallsRunNoHooks(t *testing.T) {
	task := taskData(t)
	task("add", "one")
	hooks := filepath.Join(filepath.Dir(os.Getenv("TASKRC")), "hooks")
	if err := os.MkdirAll(hooks, 0o700); err != nil {
		t.Fatal(err)
	}
	ran := filepath.Join(hooks, "ran")
	hook := "#!/bin/sh\ntouch " + ran + "\nread a; read b; echo \"$b\"\n"
	if err := os.WriteFile(filepath.Join(hooks, "on-modify.test"), []byte(hook), 0o700); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(os.Getenv("TASKRC"), []byte("hooks.location="+hooks+"\n"), 0o600); err != nil {
		t.Fatal(err)
	}
	s := New("")
	one, _ := s.Get(ctx(t), "1")
	if err := s.Started(ctx(t), one); err != nil {
		t.Fatal(err)
	}
	one, _ = s.Get(ctx(t), one.ID)
	if err := s.Complete(ctx(t), one); err != nil {
		t.Fatal(err)
	}
	if _, err := os.Stat(ran); err == nil {
		t.Errorf("the on-modify hook ran for antidrift's own start or done; want rc.hooks=off")
	}
	task("add", "two")
	task("2", "start") // the check can fail: a person's call runs the hook
	if _, err := os.Stat(ran); err != nil {
		t.Errorf("the hook did not run for a person's task start either (%v): the test proves nothing", err)
	}
}

func TestMissingAndHangingBinary(t *testing.T) {
	s := New(filepath.Join(t.TempDir(), "no-such-task"))
	if _, err := s.List(ctx(t)); err == nil || !strings.Contains(err.Error(), "was not found") || !strings.Contains(err.Error(), "[tasks.taskwarrior]") {
		t.Errorf("List with a missing binary: got %v, want it to say the command was not found and where to set it", err)
	}
	hang := filepath.Join(t.TempDir(), "task")
	if err := os.WriteFile(hang, []byte("#!/bin/sh\nsleep 60\n"), 0o700); err != nil {
		t.Fatal(err)
	}
	s = New(hang)
	c, cancel := context.WithTimeout(context.Background(), 300*time.Millisecond)
	defer cancel()
	done := make(chan error, 1)
	go func() { _, err := s.List(c); done <- err }()
	select {
	case err := <-done:
		if err == nil || !strings.Contains(err.Error(), "did not finish in time") {
			t.Errorf("List with a hanging task: got %v, want it to say task did not finish in time", err)
		}
	case <-time.After(20 * time.Second):
		t.Fatal("List with a hanging task (and a 300ms deadline) still had not returned after 20s")
	}
}

// CheckID takes a uuid only: an rc override, a filter, a command word or a
// working-set number is no id FollowTask may record.
func TestCheckID(t *testing.T) {
	if err := New("").CheckID("3b57c555-9465-4989-87b5-55cd2b3c1123"); err != nil {
		t.Errorf("CheckID of a uuid: %v, want nil", err)
	}
	for _, bad := range []string{"rc.data.location=/tmp", "1 or 2", "+x", "-- done", "42", "", "3b57c555946549 8987b555cd2b3c1123", "{3b57c555-9465-4989-87b5-55cd2b3c1123}", "urn:uuid:3b57c555-9465-4989-87b5-55cd2b3c1123"} {
		var nf *service.TaskNotFound
		if err := New("").CheckID(bad); !errors.As(err, &nf) {
			t.Errorf("CheckID(%q): got %v, want *TaskNotFound", bad, err)
		}
	}
}

// firstLine cuts a long message of task's on a character, never inside
// one: an invalid UTF-8 byte in an error makes D-Bus refuse the reply
// that carries it.
func TestFirstLineCutsOnACharacter(t *testing.T) {
	got := firstLine("x" + strings.Repeat("é", 150))
	if !utf8.ValidString(got) || !strings.HasSuffix(got, "…") {
		t.Errorf("firstLine of x and 300 bytes of é: got %q, want valid UTF-8 ending in …", got)
	}
}
