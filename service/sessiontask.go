package service

import (
	"context"
	"errors"
	"fmt"
	"slices"
	"strings"
	"sync"
	"time"
	"unicode"
	"unicode/utf8"
)

// How long the core waits for a task source: listing and reading one task
// (a person is waiting for the answer), and a write-back (nobody waits; it
// runs on its own goroutine).
const (
	TaskListTimeout  = 5 * time.Second
	taskWriteTimeout = 20 * time.Second
)

// The TaskResult values that are not sentences.
const (
	TaskResultDone     = "done"
	TaskResultKept     = "kept"
	TaskResultLeftOpen = "left open"
	// taskResultWriting is the result while the write-back runs.
	taskResultWriting = "being ticked off"
)

// DefaultTaskSuccess is the success condition of a session started from a
// task when none is given.
const DefaultTaskSuccess = "the task is done"

// MaxTaskTitleLen bounds a task's title as antidrift keeps and passes it
// on (its source keeps it whole).
const MaxTaskTitleLen = 4096

// taskTitle is a title from a task source as antidrift keeps it: exact
// but for what the bus cannot carry (invalid UTF-8 and NUL, each a U+FFFD:
// godbus refuses a whole reply holding either) and a length cut at
// MaxTaskTitleLen. Escapes, bidi controls and newlines stay: they are
// neutralized where rendered.
func taskTitle(t string) string { return busSafe(t, MaxTaskTitleLen) }

// busSafe is t with invalid UTF-8 and NUL each a U+FFFD, cut at n
// characters: text D-Bus can carry.
func busSafe(t string, n int) string {
	t = strings.ToValidUTF8(t, "\uFFFD")
	t = strings.ReplaceAll(t, "\x00", "\uFFFD")
	return clip(t, n)
}

// SessionTask is the task a session works on, as the session records it
// (state.json).
type SessionTask struct {
	Source  string `json:"source"`
	ID      string `json:"id"`
	Title   string `json:"title"`
	Version string `json:"version,omitempty"`
	// StartedHere: antidrift started the task in its source (Started
	// answered nil), so an end without success stops it again.
	StartedHere bool `json:"started_here,omitempty"`
	// FromSource: the source itself started the session (the
	// Taskwarrior hook): the source already knows, so the core writes
	// nothing back to it.
	FromSource bool `json:"from_source,omitempty"`
}

// Ref is the task's ref, source:id.
func (t *SessionTask) Ref() string { return t.Source + ":" + t.ID }

func (t *SessionTask) item() TaskItem {
	return TaskItem{Source: t.Source, ID: t.ID, Title: t.Title, Version: t.Version}
}

// TaskRecord is a session's task as its sealed summary keeps it: where it
// came from and what became of it (the title is the next action).
type TaskRecord struct {
	Source string `json:"source"`
	ID     string `json:"id"`
	Result string `json:"result,omitempty"`
}

// TaskFailure is a source that could not list its tasks, and why.
type TaskFailure struct {
	Source string
	Why    string
}

// taskEnd says how the active phase with a task is ending.
type taskEnd int

const (
	taskEndWriteBack taskEnd = iota // complete: tick it off; abandon, expiry: stop it if antidrift started it
	taskEndKeep                     // complete, and leave the task open (CompleteKeepTask)
	taskEndBySource                 // the source said so (the hook): write nothing back
)

// tasksPart is the core's task machinery that is not state: the sources
// (fixed at New) and the queue their write-backs run in.
type tasksPart struct {
	sources map[string]TaskSource
	names   []string // sorted
	mu      sync.Mutex
	last    chan struct{} // closed when the last queued operation is done
}

// TaskSources names the configured sources, sorted.
func (s *Service) TaskSources() []string { return slices.Clone(s.tasks.names) }

// ListTasks asks every source for its open tasks, in parallel, each with
// TaskListTimeout, never under the core's lock, and returns them in the
// order a person works them: due first (soonest first, undated last),
// then priority (1 first, none last), then title. A source that fails is a
// TaskFailure; the others still list.
func (s *Service) ListTasks(ctx context.Context) ([]TaskItem, []TaskFailure) {
	type answer struct {
		items []TaskItem
		err   error
	}
	answers := make([]answer, len(s.tasks.names))
	var wg sync.WaitGroup
	for i, name := range s.tasks.names {
		wg.Add(1)
		go func() {
			defer wg.Done()
			c, cancel := context.WithTimeout(ctx, TaskListTimeout)
			defer cancel()
			items, err := s.tasks.sources[name].List(c)
			answers[i] = answer{items, err}
		}()
	}
	wg.Wait()
	var items []TaskItem
	var failures []TaskFailure
	for i, a := range answers {
		if a.err != nil {
			failures = append(failures, TaskFailure{Source: s.tasks.names[i], Why: busSafe(a.err.Error(), MaxTaskTitleLen)})
			continue
		}
		for _, it := range a.items {
			if !it.Done {
				it.Source = s.tasks.names[i]
				it.Title = taskTitle(it.Title)
				items = append(items, it)
			}
		}
	}
	SortTasks(items)
	return items, failures
}

// SortTasks orders tasks as a person works them: due first (soonest
// first, undated last), then priority (1 first, none last), then title.
func SortTasks(items []TaskItem) {
	slices.SortStableFunc(items, func(a, b TaskItem) int {
		switch {
		case a.Due.IsZero() != b.Due.IsZero():
			if a.Due.IsZero() {
				return 1
			}
			return -1
		case !a.Due.Equal(b.Due):
			return a.Due.Compare(b.Due)
		}
		pa, pb := a.Priority, b.Priority
		if pa == 0 {
			pa = 10
		}
		if pb == 0 {
			pb = 10
		}
		if pa != pb {
			return pa - pb
		}
		return strings.Compare(a.Title, b.Title)
	})
}

// parseTaskRef splits ref into a configured source and an id: source:id,
// or a bare id when one source is configured.
func (s *Service) parseTaskRef(ref string) (TaskSource, string, *Error) {
	if len(s.tasks.names) == 0 {
		return nil, "", &Error{Kind: InvalidArgument, Msg: "no task source is configured: add [tasks.taskwarrior] or [tasks.caldav] to config.toml (docs/tasks.md)"}
	}
	ref = strings.TrimSpace(ref)
	name, id, found := strings.Cut(ref, ":")
	if !found {
		if len(s.tasks.names) > 1 {
			return nil, "", &Error{Kind: InvalidArgument, Msg: fmt.Sprintf("task %s names no source, and %s are configured: write SOURCE:ID, such as taskwarrior:42", Quote(ref), strings.Join(s.tasks.names, " and "))}
		}
		name, id = s.tasks.names[0], ref
	}
	src, ok := s.tasks.sources[name]
	switch {
	case !ok:
		return nil, "", &Error{Kind: InvalidArgument, Msg: fmt.Sprintf("task %s names the source %s, which is not configured (the configured ones: %s)", Quote(ref), Quote(name), strings.Join(s.tasks.names, ", "))}
	case id == "" || len(id) > 1024 || !utf8.ValidString(id):
		return nil, "", &Error{Kind: InvalidArgument, Msg: fmt.Sprintf("task %s has no usable id after the source", Quote(clip(ref, 80)))}
	}
	return src, id, nil
}

// taskError is err from a source, for a person: a missing task is an
// InvalidArgument, anything else the source failing.
func taskError(source string, err error) *Error {
	var nf *TaskNotFound
	if errors.As(err, &nf) {
		return &Error{Kind: InvalidArgument, Msg: busSafe(nf.Error(), MaxTaskTitleLen)}
	}
	return &Error{Kind: TaskSourceFailed, Msg: busSafe(fmt.Sprintf("%s could not be asked for the task: %v", source, err), MaxTaskTitleLen)}
}

// StartTask starts a session whose next action is the task's title. It
// reads the task from its source first (off the lock, TaskListTimeout);
// success "" means DefaultTaskSuccess. Once started, the source is told
// (Started) on a goroutine of its own.
func (s *Service) StartTask(ctx context.Context, ref, success string, timeboxSecs uint64, enforcement string, allowed []string) (string, error) {
	if err := s.Permitted(MethodStartTask); err != nil {
		return "", err // before asking any source
	}
	src, id, perr := s.parseTaskRef(ref)
	if perr != nil {
		return "", perr
	}
	c, cancel := context.WithTimeout(ctx, TaskListTimeout)
	it, err := src.Get(c, id)
	cancel()
	if err != nil {
		return "", taskError(src.Name(), err)
	}
	if it.Done {
		return "", &Error{Kind: InvalidArgument, Msg: fmt.Sprintf("the %s task %s is already done", src.Name(), Quote(clip(id, 80)))}
	}
	if success == "" {
		success = DefaultTaskSuccess
	}
	it.Title = taskTitle(it.Title)
	task := &SessionTask{Source: src.Name(), ID: it.ID, Title: it.Title, Version: it.Version}
	return s.start(MethodStartTask, taskAction(it), success, timeboxSecs, enforcement, allowed, task)
}

// taskAction is a task's title as a next action: one line, no control
// characters, at most MaxTextLen characters; a task without a title is
// named by its id.
func taskAction(it TaskItem) string {
	t := strings.ToValidUTF8(it.Title, "�")
	t = strings.Join(strings.FieldsFunc(t, func(c rune) bool { return unicode.IsSpace(c) || unicode.IsControl(c) }), " ")
	if t == "" {
		id := it.Short
		if id == "" {
			id = it.ID
		}
		t = "the " + it.Source + " task " + clip(id, 80)
	}
	return clip(t, MaxTextLen)
}

// startedTaskLocked queues Started for the session's task, just started.
// Caller holds mu.
func (s *Service) startedTaskLocked(w *writes) {
	t := s.task
	if t == nil || t.FromSource {
		return
	}
	id, src, item := s.sessionID, s.tasks.sources[t.Source], t.item()
	w.effects = append(w.effects, func() {
		s.taskQueue(func(ctx context.Context) {
			err := src.Started(ctx, item)
			switch {
			case errors.Is(err, ErrTaskAlreadyStarted):
				return
			case err != nil:
				s.log.Warn("telling the task source the session started failed", "session_id", id, "source", item.Source, "err", withoutTitle(err.Error(), item.Title))
				return
			}
			// The start changed the task's version: read it again, so the
			// write-back does not mistake antidrift's own change for
			// another client's.
			if now, err := src.Get(ctx, item.ID); err == nil {
				item.Version = now.Version
			}
			// t is this session's task even once the session ended: the
			// write-back queued behind this reads it.
			s.mu.Lock()
			t.StartedHere, t.Version = true, item.Version
			if s.sessionID != id || s.task != t {
				s.mu.Unlock()
				return
			}
			s.commitUnlocks(writes{snapshot: s.snapshotLocked()})
		})
	})
}

// taskEndLocked is the session's task at the end of the active phase with
// outcome o: a success ticks it off (unless kept), anything else stops it
// in its source if antidrift started it there. The write-back is queued
// off the lock; TaskResult says what became of it. Caller holds mu.
func (s *Service) taskEndLocked(w *writes, o Outcome) {
	how := s.taskEnding
	s.taskEnding = taskEndWriteBack
	t := s.task
	if t == nil {
		return
	}
	tick := o == OutcomeCompleted && how != taskEndKeep // else stop what antidrift started
	open := TaskResultLeftOpen
	switch {
	case o == OutcomeCompleted && how == taskEndBySource:
		s.taskResult = TaskResultDone
		return
	case how == taskEndKeep:
		open = TaskResultKept
		fallthrough
	case !tick:
		s.taskResult = open
		if how == taskEndBySource {
			return
		}
		// Whether antidrift started it is known once the Started queued
		// before has run: the stop below asks then.
	default:
		s.taskResult = taskResultWriting
	}
	id, src, item := s.sessionID, s.tasks.sources[t.Source], t.item()
	if src == nil {
		s.taskResult = fmt.Sprintf("not written back: %s is no longer configured", t.Source)
		return
	}
	w.effects = append(w.effects, func() {
		s.taskQueue(func(ctx context.Context) {
			s.mu.Lock()
			item.Version = t.Version // Started may have read a newer one
			startedHere := t.StartedHere
			s.mu.Unlock()
			var result string
			if tick {
				result = TaskResultDone
				if err := src.Complete(ctx, item); err != nil {
					var changed *TaskChanged
					if errors.As(err, &changed) {
						result = err.Error()
					} else {
						result = fmt.Sprintf("not ticked off in %s: %v", item.Source, err)
					}
				}
			} else {
				result = open
				if !startedHere {
					// The person had it started (or no start took): leave it.
				} else if err := src.Stopped(ctx, item); err != nil {
					result = fmt.Sprintf("%s, but stopping it in %s failed: %v", open, item.Source, err)
				}
			}
			s.deliverTaskResult(id, result, item.Title)
		})
	})
}

// deliverTaskResult records a write-back's result in session id, if it is
// still the session (the summary of one sealed meanwhile keeps the result
// it had at End; the log has this one).
func (s *Service) deliverTaskResult(id, result, title string) {
	s.mu.Lock()
	if s.sessionID != id {
		s.mu.Unlock()
		s.log.Info("a task write-back finished after its session was sealed", "session_id", id, "task_result", withoutTitle(result, title))
		return
	}
	s.taskResult = result
	s.commitUnlocks(writes{snapshot: s.snapshotLocked()})
}

// taskEndWait is how long End waits, off the lock, for a write-back still
// running, so that `antidrift complete && antidrift end` seals the task's
// result rather than "being ticked off". A slower source is not waited for
// longer: the summary then keeps "being ticked off", the journal the result.
const taskEndWait = 2 * time.Second

// awaitTaskResult waits up to taskEndWait for the queued task operations
// when the session's task is being ticked off. Never under the lock.
func (s *Service) awaitTaskResult() {
	s.mu.Lock()
	writing := s.task != nil && s.taskResult == taskResultWriting
	s.mu.Unlock()
	if !writing {
		return
	}
	s.tasks.mu.Lock()
	last := s.tasks.last
	s.tasks.mu.Unlock()
	if last == nil {
		return
	}
	t := time.NewTimer(taskEndWait)
	defer t.Stop()
	select {
	case <-last:
	case <-t.C:
	}
}

// taskQueue runs op on a goroutine of its own, after every operation queued
// before it (so a write-back never overtakes the Started before it), with
// taskWriteTimeout, never under the lock.
func (s *Service) taskQueue(op func(ctx context.Context)) {
	s.bgMu.Lock()
	defer s.bgMu.Unlock()
	if s.bgStopped {
		return
	}
	s.tasks.mu.Lock()
	prev, done := s.tasks.last, make(chan struct{})
	s.tasks.last = done
	s.tasks.mu.Unlock()
	s.background.Add(1)
	go func() {
		defer s.background.Done()
		defer close(done)
		if prev != nil {
			<-prev
		}
		ctx, cancel := context.WithTimeout(context.Background(), taskWriteTimeout)
		defer cancel()
		op(ctx)
	}()
}

// CompleteKeepTask ends the active phase with success and leaves the
// session's task open in its source.
func (s *Service) CompleteKeepTask() error {
	return s.endActive(MethodCompleteKeepTask, OutcomeCompleted, "", taskEndKeep)
}

// Task events a source reports from its own side (FollowTask).
const (
	TaskEventStart  = "start"
	TaskEventStop   = "stop"
	TaskEventDone   = "done"
	TaskEventDelete = "delete"
)

// FollowTask is a task source's own news about a task (the Taskwarrior
// hook: `task 42 start`, `stop`, `done`, `delete`): start begins a session
// with that task (timeboxSecs long, the default level and allowlist) when
// none is live; stop and delete abandon, done completes, the live session
// when it has that task, and write nothing back (the source has it
// already). title and version are the source's, as it reported them. It
// returns a sentence saying what antidrift did; a step the session refuses
// is that refusal.
func (s *Service) FollowTask(ref, event, title, version string, timeboxSecs uint64) (string, error) {
	src, id, perr := s.parseTaskRef(ref)
	if perr != nil {
		return "", perr
	}
	if c, ok := src.(TaskIDChecker); ok {
		if err := c.CheckID(id); err != nil {
			return "", &Error{Kind: InvalidArgument, Msg: fmt.Sprintf("%s is not the id %s keeps for a task (%v), so antidrift changed nothing", Quote(clip(id, 80)), src.Name(), err)}
		}
	}
	ref = src.Name() + ":" + id
	s.mu.Lock()
	same := s.task != nil && s.task.Source == src.Name() && s.task.ID == id
	state := s.state
	s.mu.Unlock()
	switch event {
	case TaskEventStart:
		if same && state == StateActive {
			return "the session already works on " + ref, nil
		}
		if state == StateActive || state == StateReview {
			return fmt.Sprintf("a session is %s already, so antidrift started none for %s", state.phrase(), ref), nil
		}
		title = taskTitle(title)
		task := &SessionTask{Source: src.Name(), ID: id, Title: title, Version: version, FromSource: true}
		sid, err := s.start(MethodStart, taskAction(TaskItem{Source: src.Name(), ID: id, Title: title}), DefaultTaskSuccess, timeboxSecs, "", nil, task)
		if err != nil {
			return "", err
		}
		return fmt.Sprintf("antidrift started session %s with %s", sid, ref), nil
	case TaskEventStop, TaskEventDelete, TaskEventDone:
		if !same || state != StateActive {
			return "no active session works on " + ref + ", so antidrift changed nothing", nil
		}
		if event == TaskEventDone {
			if err := s.endActive(MethodComplete, OutcomeCompleted, "", taskEndBySource); err != nil {
				return "", err
			}
			return "antidrift completed the session with " + ref, nil
		}
		reason := "stopped in " + src.Name()
		if event == TaskEventDelete {
			reason = "deleted in " + src.Name()
		}
		if err := s.endActive(MethodAbandon, OutcomeAbandoned, reason, taskEndBySource); err != nil {
			return "", err
		}
		return "antidrift abandoned the session with " + ref, nil
	}
	return "", &Error{Kind: InvalidArgument, Msg: fmt.Sprintf("event %s is not one of start, stop, done, delete", Quote(clip(event, 80)))}
}

// endActive moves an active session to review with outcome o, the
// session's task ending as how says.
func (s *Service) endActive(m Method, o Outcome, reason string, how taskEnd) error {
	s.mu.Lock()
	var w writes
	now := s.tickLocked(&w)
	if err := s.permit(m, ""); err != nil {
		s.commitUnlocks(w)
		return err
	}
	s.log.Info("session "+string(o), "session_id", s.sessionID, "state", StateReview, "reason", reason)
	s.taskEnding = how
	w.merge(s.toReviewLocked(o, now))
	s.commitUnlocks(w)
	return nil
}

// withoutTitle is msg for the journal: a task's title is private like a
// window's, and a source's error may quote it (task's stderr does).
//
// A message may quote the title cut short (task's stderr is cut at its
// first line and 200 bytes), so any run of at least minTitleRun bytes
// that begins the title, or the whole of a shorter title, is taken out.
func withoutTitle(msg, title string) string {
	if strings.TrimSpace(title) == "" {
		return msg
	}
	const minTitleRun = 8
	var b strings.Builder
	for i := 0; i < len(msg); {
		n := 0
		for n < len(title) && i+n < len(msg) && msg[i+n] == title[n] {
			n++
		}
		if n == len(title) || n >= minTitleRun {
			b.WriteString("(the task's title)")
			i += n
			continue
		}
		b.WriteByte(msg[i])
		i++
	}
	return b.String()
}

// taskCopyLocked is the session's task for a snapshot (nil: none).
func (s *Service) taskCopyLocked() *SessionTask {
	if s.task == nil {
		return nil
	}
	t := *s.task
	return &t
}

// taskRecordLocked is the session's task for its summary (nil: none).
func (s *Service) taskRecordLocked() *TaskRecord {
	if s.task == nil {
		return nil
	}
	return &TaskRecord{Source: s.task.Source, ID: s.task.ID, Result: s.taskResult}
}
