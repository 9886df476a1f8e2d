package service

import (
	"context"
	"errors"
	"fmt"
	"strings"
	"sync"
	"testing"
	"time"
	"unicode/utf8"
)

// fakeTasks is a task source in memory. It records every call; block, when
// set, holds each call until it is closed.
type fakeTasks struct {
	name  string
	mu    sync.Mutex
	items map[string]TaskItem
	calls []string
	err   error         // every call fails with it
	block chan struct{} // nil: answer at once
	// started: ids Started found already started
	started map[string]bool
	done    chan string // each finished call's name, if not nil
	// checkID, when set, is the source's TaskIDChecker.
	checkID func(id string) error
}

func (f *fakeTasks) CheckID(id string) error {
	if f.checkID == nil {
		return nil
	}
	return f.checkID(id)
}

func newFakeTasks(name string) *fakeTasks {
	f := &fakeTasks{name: name, items: map[string]TaskItem{}, started: map[string]bool{}}
	f.items["t1"] = TaskItem{Source: name, ID: "t1", Short: "1", Title: "Write the report", Version: "v1", Priority: 1}
	return f
}

func (f *fakeTasks) Name() string { return f.name }

func (f *fakeTasks) call(ctx context.Context, what string) error {
	f.mu.Lock()
	f.calls = append(f.calls, what)
	block, err := f.block, f.err
	f.mu.Unlock()
	if block != nil {
		select {
		case <-block:
		case <-ctx.Done():
			return fmt.Errorf("did not answer in time")
		}
	}
	return err
}

func (f *fakeTasks) finished(what string) {
	if f.done != nil {
		f.done <- what
	}
}

func (f *fakeTasks) List(ctx context.Context) ([]TaskItem, error) {
	defer f.finished("List")
	if err := f.call(ctx, "List"); err != nil {
		return nil, err
	}
	f.mu.Lock()
	defer f.mu.Unlock()
	var out []TaskItem
	for _, it := range f.items {
		if !it.Done {
			out = append(out, it)
		}
	}
	return out, nil
}

func (f *fakeTasks) Get(ctx context.Context, id string) (TaskItem, error) {
	if err := f.call(ctx, "Get "+id); err != nil {
		return TaskItem{}, err
	}
	f.mu.Lock()
	defer f.mu.Unlock()
	it, ok := f.items[id]
	if !ok {
		return TaskItem{}, &TaskNotFound{Source: f.name, ID: id}
	}
	return it, nil
}

func (f *fakeTasks) Started(ctx context.Context, t TaskItem) error {
	defer f.finished("Started")
	if err := f.call(ctx, "Started "+t.ID); err != nil {
		return err
	}
	f.mu.Lock()
	defer f.mu.Unlock()
	if f.started[t.ID] {
		return ErrTaskAlreadyStarted
	}
	f.started[t.ID] = true
	it := f.items[t.ID]
	it.Version += "+started"
	f.items[t.ID] = it
	return nil
}

func (f *fakeTasks) Complete(ctx context.Context, t TaskItem) error {
	defer f.finished("Complete")
	if err := f.call(ctx, "Complete "+t.ID+"@"+t.Version); err != nil {
		return err
	}
	f.mu.Lock()
	defer f.mu.Unlock()
	it := f.items[t.ID]
	if it.Done || it.Version != t.Version {
		return &TaskChanged{Source: f.name, ID: t.ID, What: "it was marked done meanwhile", Do: "nothing to do"}
	}
	it.Done = true
	f.items[t.ID] = it
	return nil
}

func (f *fakeTasks) Stopped(ctx context.Context, t TaskItem) error {
	defer f.finished("Stopped")
	if err := f.call(ctx, "Stopped "+t.ID); err != nil {
		return err
	}
	f.mu.Lock()
	defer f.mu.Unlock()
	delete(f.started, t.ID)
	return nil
}

func (f *fakeTasks) log() string {
	f.mu.Lock()
	defer f.mu.Unlock()
	return strings.Join(f.calls, ", ")
}

// waitFor waits until the fake finished a call named what.
func (f *fakeTasks) waitFor(t *testing.T, what string) {
	t.Helper()
	for {
		select {
		case got := <-f.done:
			if got == what {
				return
			}
		case <-time.After(10 * time.Second):
			t.Fatalf("the source never finished %s (calls: %s)", what, f.log())
		}
	}
}

// waitResult waits for TaskResult to become want.
func waitResult(t *testing.T, h *harness, want string) {
	t.Helper()
	deadline := time.Now().Add(10 * time.Second)
	for {
		got := h.View().TaskResult
		if got == want {
			return
		}
		if time.Now().After(deadline) {
			t.Fatalf("TaskResult = %q, want %q (calls: %s)", got, want, h.tasks.log())
		}
		time.Sleep(5 * time.Millisecond)
	}
}

func TestStartTaskCompleteTicksItOff(t *testing.T) {
	h := newHarness(t)
	h.tasks.done = make(chan string, 16)
	id, err := h.StartTask(context.Background(), "taskwarrior:t1", "", 25*60, "", nil)
	if err != nil {
		t.Fatal(err)
	}
	v := h.View()
	if v.NextAction != "Write the report" || v.SuccessCondition != DefaultTaskSuccess || v.TaskRef != "taskwarrior:t1" || v.TaskTitle != "Write the report" || v.SessionID != id {
		t.Errorf("after StartTask: next %q, success %q, ref %q, title %q; want the task's title, %q, taskwarrior:t1", v.NextAction, v.SuccessCondition, v.TaskRef, v.TaskTitle, DefaultTaskSuccess)
	}
	h.tasks.waitFor(t, "Started")
	if ev := h.store.events[id]; len(ev) == 0 || ev[0].Mark != MarkTask || ev[0].Task == nil || ev[0].Task.Ref() != "taskwarrior:t1" || ev[0].Version != RawLogTaskVersion {
		t.Errorf("the raw log's first line: got %+v, want the task mark with taskwarrior:t1 at version %d", ev, RawLogTaskVersion)
	}
	if snap := h.store.last(); snap.Task == nil || snap.Task.ID != "t1" || snap.Format() != 2 {
		t.Errorf("state.json: task %+v, format %d; want task t1 in a version 2 snapshot", snap.Task, snap.Format())
	}
	must(t, h.Complete())
	waitResult(t, h, TaskResultDone)
	if !h.tasks.items["t1"].Done {
		t.Errorf("after Complete the task is not done (calls: %s)", h.tasks.log())
	}
	// The write-back used the version read after antidrift's own start.
	if log := h.tasks.log(); !strings.Contains(log, "Complete t1@v1+started") {
		t.Errorf("calls %s: want Complete with the version read after Started", log)
	}
	if _, err := h.End(); err != nil {
		t.Fatal(err)
	}
	sum := h.store.audit[len(h.store.audit)-1]
	if sum.Task == nil || *sum.Task != (TaskRecord{Source: "taskwarrior", ID: "t1", Result: TaskResultDone}) || sum.Version != SummaryTaskVersion {
		t.Errorf("sealed summary: task %+v, version %d; want taskwarrior t1 done at version %d", sum.Task, sum.Version, SummaryTaskVersion)
	}
}

func TestCompleteKeepTaskAndAbandonLeaveItOpen(t *testing.T) {
	h := newHarness(t)
	h.tasks.done = make(chan string, 16)
	if _, err := h.StartTask(context.Background(), "t1", "it is sent", 60, "", nil); err != nil {
		t.Fatal(err)
	}
	h.tasks.waitFor(t, "Started")
	must(t, h.CompleteKeepTask())
	if got := h.View().TaskResult; got != TaskResultKept {
		t.Errorf("TaskResult after CompleteKeepTask = %q, want kept", got)
	}
	h.tasks.waitFor(t, "Stopped") // antidrift's start is undone: the task is kept open, not running
	if _, err := h.End(); err != nil {
		t.Fatal(err)
	}
	if _, err := h.StartTask(context.Background(), "t1", "", 60, "", nil); err != nil {
		t.Fatal(err)
	}
	must(t, h.Abandon("later"))
	h.tasks.waitFor(t, "Stopped")
	waitResult(t, h, TaskResultLeftOpen)
	if h.tasks.items["t1"].Done || strings.Contains(h.tasks.log(), "Complete") {
		t.Errorf("calls %s: want no Complete after keep or abandon", h.tasks.log())
	}
}

// A task the person had started already is not stopped by an abandon.
func TestAbandonLeavesAStartedTaskStarted(t *testing.T) {
	h := newHarness(t)
	h.tasks.done = make(chan string, 16)
	h.tasks.started["t1"] = true
	if _, err := h.StartTask(context.Background(), "t1", "", 60, "", nil); err != nil {
		t.Fatal(err)
	}
	h.tasks.waitFor(t, "Started")
	must(t, h.Abandon(""))
	if got := h.View().TaskResult; got != TaskResultLeftOpen {
		t.Errorf("TaskResult = %q, want left open", got)
	}
	if log := h.tasks.log(); strings.Contains(log, "Stopped") {
		t.Errorf("calls %s: want no Stopped for a task the person started", log)
	}
}

// A task changed by another client is never overwritten: TaskResult says
// what changed and what to do.
func TestCompleteOfAChangedTaskIsTold(t *testing.T) {
	h := newHarness(t)
	h.tasks.done = make(chan string, 16)
	if _, err := h.StartTask(context.Background(), "t1", "", 60, "", nil); err != nil {
		t.Fatal(err)
	}
	h.tasks.waitFor(t, "Started")
	h.tasks.mu.Lock()
	it := h.tasks.items["t1"]
	it.Done = true
	h.tasks.items["t1"] = it
	h.tasks.mu.Unlock()
	must(t, h.Complete())
	h.tasks.waitFor(t, "Complete")
	waitResult(t, h, (&TaskChanged{Source: "taskwarrior", ID: "t1", What: "it was marked done meanwhile", Do: "nothing to do"}).Error())
}

// A source that hangs holds up neither the lock nor the Complete reply:
// other calls answer while the write-back waits.
func TestAHangingSourceBlocksNothing(t *testing.T) {
	h := newHarness(t)
	if _, err := h.StartTask(context.Background(), "t1", "", 60, "", nil); err != nil {
		t.Fatal(err)
	}
	h.tasks.mu.Lock()
	h.tasks.block = make(chan struct{})
	h.tasks.mu.Unlock()
	defer close(h.tasks.block)
	replied := make(chan error, 1)
	go func() { replied <- h.Complete() }()
	select {
	case err := <-replied:
		must(t, err)
	case <-time.After(5 * time.Second):
		t.Fatal("Complete did not reply in 5s while the task source hangs")
	}
	if v := h.View(); v.State != StateReview || v.TaskResult != taskResultWriting {
		t.Errorf("while the source hangs: state %s, TaskResult %q; want review, %q", v.State, v.TaskResult, taskResultWriting)
	}
	if _, err := h.End(); err != nil {
		t.Errorf("End while the source hangs: %v", err)
	}
}

func TestListTasksOrderAndFailures(t *testing.T) {
	h := newHarness(t)
	day := time.Date(2030, 1, 2, 0, 0, 0, 0, time.UTC)
	h.tasks.items = map[string]TaskItem{
		"a": {ID: "a", Title: "no due, no priority"},
		"b": {ID: "b", Title: "due later", Due: day.Add(48 * time.Hour)},
		"c": {ID: "c", Title: "due soon, low", Due: day, Priority: 9},
		"d": {ID: "d", Title: "due soon, high", Due: day, Priority: 1},
		"e": {ID: "e", Title: "no due, medium", Priority: 5},
		"f": {ID: "f", Title: "done", Done: true},
	}
	items, failures := h.ListTasks(context.Background())
	var got []string
	for _, it := range items {
		got = append(got, it.ID)
		if it.Source != "taskwarrior" {
			t.Errorf("task %s has source %q, want taskwarrior", it.ID, it.Source)
		}
	}
	if strings.Join(got, "") != "dcbea" || len(failures) != 0 {
		t.Errorf("ListTasks: got %v, failures %v; want d c b e a (due, then priority) and none", got, failures)
	}
	h.tasks.err = errors.New("the Taskwarrior command \"task\" was not found")
	items, failures = h.ListTasks(context.Background())
	if len(items) != 0 || len(failures) != 1 || failures[0].Source != "taskwarrior" || !strings.Contains(failures[0].Why, "was not found") {
		t.Errorf("a failing source: got %v, failures %+v; want its failure with why", items, failures)
	}
}

func TestStartTaskRefusals(t *testing.T) {
	h := newHarness(t)
	for _, c := range []struct{ ref, want string }{
		{"caldav:x", "names the source \"caldav\", which is not configured"},
		{"taskwarrior:nope", `taskwarrior has no task "nope"`},
		{"taskwarrior:", "has no usable id"},
	} {
		_, err := h.StartTask(context.Background(), c.ref, "", 60, "", nil)
		var e *Error
		if !errors.As(err, &e) || e.Kind != InvalidArgument || !strings.Contains(e.Msg, c.want) {
			t.Errorf("StartTask(%q): got %v, want InvalidArgument containing %q", c.ref, err, c.want)
		}
	}
	h.tasks.err = errors.New("did not finish in time")
	_, err := h.StartTask(context.Background(), "t1", "", 60, "", nil)
	var e *Error
	if !errors.As(err, &e) || e.Kind != TaskSourceFailed || !strings.Contains(e.Msg, "did not finish in time") {
		t.Errorf("StartTask with a failing source: got %v, want TaskSource saying why", err)
	}
	if h.View().State != StateLocked {
		t.Errorf("a refused StartTask started a session")
	}
}

// The source's own news (the Taskwarrior hook): start begins a session,
// done completes it, and nothing is written back.
func TestFollowTask(t *testing.T) {
	h := newHarness(t)
	said, err := h.FollowTask("taskwarrior:u9", TaskEventStart, "Fix the\x1b[31m bike", "m1", 25*60)
	if err != nil || !strings.Contains(said, "started session") {
		t.Fatalf("FollowTask start: %q, %v", said, err)
	}
	if v := h.View(); v.NextAction != "Fix the [31m bike" || v.TaskRef != "taskwarrior:u9" || v.TaskTitle != "Fix the\x1b[31m bike" {
		t.Errorf("after the hook's start: next action %q, ref %q, title %q; want the title as one clean line, exact in TaskTitle", v.NextAction, v.TaskRef, v.TaskTitle)
	}
	if said, _ := h.FollowTask("taskwarrior:other", TaskEventDone, "", "", 0); !strings.Contains(said, "changed nothing") || h.View().State != StateActive {
		t.Errorf("done of another task: %q, state %s; want nothing changed", said, h.View().State)
	}
	if _, err := h.FollowTask("taskwarrior:u9", TaskEventDone, "", "", 0); err != nil {
		t.Fatal(err)
	}
	if v := h.View(); v.State != StateReview || v.Outcome != OutcomeCompleted || v.TaskResult != TaskResultDone {
		t.Errorf("after the hook's done: %s %s %q, want review completed done", v.State, v.Outcome, v.TaskResult)
	}
	time.Sleep(50 * time.Millisecond)
	if log := h.tasks.log(); log != "" {
		t.Errorf("the source was called (%s); the hook's news must write nothing back", log)
	}
}

// The session's task survives a restart, with whether antidrift started it.
func TestTaskSurvivesRestart(t *testing.T) {
	h := newHarness(t)
	h.tasks.done = make(chan string, 16)
	if _, err := h.StartTask(context.Background(), "t1", "", 60*60, "", nil); err != nil {
		t.Fatal(err)
	}
	h.tasks.waitFor(t, "Started")
	waitSnapshot(t, h, func(s Snapshot) bool { return s.Task != nil && s.Task.StartedHere })
	n := h.restart(t)
	if v := n.View(); v.TaskRef != "taskwarrior:t1" {
		t.Fatalf("after a restart TaskRef = %q, want taskwarrior:t1", v.TaskRef)
	}
	must(t, n.Abandon(""))
	h.tasks.waitFor(t, "Stopped")
}

func waitSnapshot(t *testing.T, h *harness, ok func(Snapshot) bool) {
	t.Helper()
	deadline := time.Now().Add(10 * time.Second)
	for !ok(h.store.last()) {
		if time.Now().After(deadline) {
			t.Fatalf("state.json never got there: %+v", h.store.last())
		}
		time.Sleep(5 * time.Millisecond)
	}
}

// Expiry leaves the task open and stops what antidrift started.
func TestExpiryStopsTheTask(t *testing.T) {
	h := newHarness(t)
	h.tasks.done = make(chan string, 16)
	if _, err := h.StartTask(context.Background(), "t1", "", 60, "", nil); err != nil {
		t.Fatal(err)
	}
	h.tasks.waitFor(t, "Started")
	h.clock.Advance(2 * time.Minute)
	h.tasks.waitFor(t, "Stopped")
	waitResult(t, h, TaskResultLeftOpen)
	if v := h.View(); v.Outcome != OutcomeExpired {
		t.Errorf("outcome %s, want expired", v.Outcome)
	}
}

// FollowTask is open to any client on the bus, but a stop or delete it
// reports is an Abandon: at the locked level it is refused as Abandon is,
// so the hook is no side door past the break-glass hold.
func TestFollowTaskCannotAbandonALockedSession(t *testing.T) {
	h := newHarness(t)
	if _, err := h.StartTask(context.Background(), "t1", "", 60*60, "locked", nil); err != nil {
		t.Fatal(err)
	}
	for _, ev := range []string{TaskEventStop, TaskEventDelete} {
		said, err := h.FollowTask("taskwarrior:t1", ev, "", "", 0)
		var e *Error
		if !errors.As(err, &e) || e.Kind != NotPermitted {
			t.Errorf("FollowTask %s of a locked session: got %q, %v; want NotPermitted", ev, said, err)
		}
		if v := h.View(); v.State != StateActive {
			t.Fatalf("FollowTask %s left the locked session %s, want active", ev, v.State)
		}
	}
}

// A source's own news names its task by the id the source keeps: an id
// not of that form (an rc override, a filter, a working-set number that
// later names another task) starts, ends and records nothing, and says so.
func TestFollowTaskRefusesAnIDNotOfTheSourcesForm(t *testing.T) {
	h := newHarness(t)
	h.tasks.checkID = func(id string) error {
		if id != "u9" {
			return &TaskNotFound{Source: "taskwarrior", ID: id}
		}
		return nil
	}
	for _, id := range []string{"rc.data.location=/tmp", "1 or 2", "+x", "-- done", "42", "a\nb"} {
		said, err := h.FollowTask("taskwarrior:"+id, TaskEventStart, "Fix the bike", "", 60)
		var e *Error
		if !errors.As(err, &e) || e.Kind != InvalidArgument || !strings.Contains(e.Msg, "changed nothing") {
			t.Errorf("FollowTask start of %q: got %q, %v; want InvalidArgument saying antidrift changed nothing", id, said, err)
		}
		if err != nil && strings.Contains(err.Error(), "\n") {
			t.Errorf("the refusal quotes the id raw: %q", err.Error())
		}
		if v := h.View(); v.State != StateLocked {
			t.Fatalf("FollowTask start of %q: state %s, want locked", id, v.State)
		}
	}
	if _, err := h.FollowTask("taskwarrior:u9", TaskEventStart, "Fix the bike", "", 60); err != nil {
		t.Fatalf("FollowTask start of a well-formed id: %v", err)
	}
}

// A task's title is text from outside, and D-Bus carries no NUL and no
// invalid UTF-8 (godbus refuses the whole reply): a title with either, or
// a megabyte long, must neither break ListTasks nor the status of the
// session started from it. Escapes, bidi controls and newlines stay exact
// (the CLI and the panels neutralize them where they render).
func TestHostileTaskTitleIsBusSafe(t *testing.T) {
	h := newHarness(t)
	huge := strings.Repeat("x", 1<<20)
	hostile := "Fix\x00 the \xff bike\x1b[31m\u202e\nnow"
	h.tasks.items = map[string]TaskItem{
		"t1": {ID: "t1", Title: hostile, Version: "v1"},
		"t2": {ID: "t2", Title: huge, Version: "v1"},
	}
	busSafe := func(what, s string) {
		t.Helper()
		if !utf8.ValidString(s) || strings.ContainsRune(s, 0) || utf8.RuneCountInString(s) > MaxTaskTitleLen {
			t.Errorf("%s: got %d bytes, valid UTF-8 %v, NUL %v; want valid UTF-8, no NUL, at most %d characters",
				what, len(s), utf8.ValidString(s), strings.ContainsRune(s, 0), MaxTaskTitleLen)
		}
	}
	items, _ := h.ListTasks(context.Background())
	for _, it := range items {
		busSafe("ListTasks title of "+it.ID, it.Title)
		if it.ID == "t1" && it.Title != "Fix\uFFFD the \uFFFD bike\x1b[31m\u202e\nnow" {
			t.Errorf("ListTasks title: got %q, want only the NUL and the invalid byte replaced", it.Title)
		}
	}
	if _, err := h.StartTask(context.Background(), "t1", "", 60, "", nil); err != nil {
		t.Fatal(err)
	}
	busSafe("View().TaskTitle", h.View().TaskTitle)
	must(t, h.Abandon(""))
	if _, err := h.End(); err != nil {
		t.Fatal(err)
	}
	if _, err := h.FollowTask("taskwarrior:t2", TaskEventStart, huge, "", 60); err != nil {
		t.Fatal(err)
	}
	busSafe("View().TaskTitle after FollowTask", h.View().TaskTitle)
}

// A source's error is outside text too: a failure ListTasks or StartTask
// passes on is bus-safe.
func TestTaskSourceErrorIsBusSafe(t *testing.T) {
	h := newHarness(t)
	h.tasks.err = errors.New("task failed: \xff\x00")
	_, failures := h.ListTasks(context.Background())
	if len(failures) != 1 || !utf8.ValidString(failures[0].Why) || strings.ContainsRune(failures[0].Why, 0) {
		t.Errorf("ListTasks failures: got %q, want one, valid UTF-8 without NUL", failures)
	}
	_, err := h.StartTask(context.Background(), "t1", "", 60, "", nil)
	if err == nil || !utf8.ValidString(err.Error()) || strings.ContainsRune(err.Error(), 0) {
		t.Errorf("StartTask with a failing source: got %q, want an error in valid UTF-8 without NUL", err)
	}
}

// A source's error may quote a title cut short (task's stderr is cut at
// its first line and 200 bytes): the journal gets no part of it.
func TestWithoutTitleTakesACutTitleOut(t *testing.T) {
	long := strings.Repeat("my private words ", 20)
	for _, c := range []struct{ msg, title string }{
		{"task done failed: Task '" + long[:150] + "…", long},
		{"task done failed: Task 'first private line", "first private line\nsecond line"},
		{"the task " + long + " failed", long},
	} {
		if got := withoutTitle(c.msg, c.title); strings.Contains(got, "private") {
			t.Errorf("withoutTitle(%q): got %q, want no part of the title", c.msg, got)
		}
	}
	if got := withoutTitle("task failed: no such file", "Fix the bike"); got != "task failed: no such file" {
		t.Errorf("withoutTitle of a message without the title: got %q", got)
	}
}

// complete then end at once: the summary sealed keeps the write-back's
// result when it comes within a moment, not "being ticked off".
func TestEndRightAfterCompleteSealsTheResult(t *testing.T) {
	h := newHarness(t)
	h.tasks.done = make(chan string, 16)
	if _, err := h.StartTask(context.Background(), "t1", "", 60*60, "", nil); err != nil {
		t.Fatal(err)
	}
	h.tasks.waitFor(t, "Started")
	h.tasks.mu.Lock()
	h.tasks.block = make(chan struct{})
	h.tasks.mu.Unlock()
	must(t, h.Complete())
	time.AfterFunc(200*time.Millisecond, func() { close(h.tasks.block) })
	if _, err := h.End(); err != nil {
		t.Fatal(err)
	}
	sealed := h.store.sealed()
	if len(sealed) != 1 || sealed[0].Task == nil || sealed[0].Task.Result != TaskResultDone {
		t.Fatalf("the summary sealed by an End right after Complete: got %+v, want its task's result done", sealed)
	}
}
