// Package taskwarrior is the Taskwarrior leaf behind the core's task port
// (service.TaskSource): it runs the task command, as a person would, with
// the environment the daemon has (TASKRC and TASKDATA are honoured as task
// honours them).
//
// Every call antidrift makes itself passes rc.hooks=off, so the on-modify
// hook antidrift ships (which tells the daemon about `task N start`) does
// not run for antidrift's own changes: the daemon never hears its own
// write-back as if the person had made it, and a hook never waits on a
// daemon that is waiting on the task that runs it. rc.confirmation=off
// keeps task from asking a question nobody will answer, rc.verbose=nothing
// its chatter out of the JSON. Every call has a deadline.
package taskwarrior

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"io/fs"
	"os/exec"
	"strings"
	"time"
	"unicode/utf8"

	"github.com/google/uuid"

	"github.com/antidrift/antidrift/service"
)

// Name is the source's name in refs: taskwarrior:<uuid>.
const Name = "taskwarrior"

// DefaultTimeout bounds a call made with a context that has no deadline.
const DefaultTimeout = 5 * time.Second

// maxOutput bounds what one call reads from task: a list far longer than
// anyone works from is cut short rather than held in memory.
const maxOutput = 16 << 20

// Source is Taskwarrior as a service.TaskSource.
type Source struct {
	command string
}

// New is the Taskwarrior source running command ("" means "task", looked
// up in PATH at each call).
func New(command string) *Source {
	if command == "" {
		command = "task"
	}
	return &Source{command: command}
}

// Name implements service.TaskSource.
func (s *Source) Name() string { return Name }

// export is one task as `task export` prints it (the fields antidrift
// reads).
type export struct {
	ID          int    `json:"id"`
	UUID        string `json:"uuid"`
	Description string `json:"description"`
	Status      string `json:"status"`
	Due         string `json:"due"`
	Priority    string `json:"priority"`
	Modified    string `json:"modified"`
	Start       string `json:"start"`
}

const stamp = "20060102T150405Z"

func (e export) item() service.TaskItem {
	t := service.TaskItem{Source: Name, ID: e.UUID, Title: e.Description, Version: e.Modified,
		Done: e.Status != "pending" && e.Status != "waiting" && e.Status != "recurring"}
	if e.ID > 0 {
		t.Short = fmt.Sprint(e.ID)
	}
	if d, err := time.Parse(stamp, e.Due); err == nil {
		t.Due = d
	}
	switch e.Priority {
	case "H":
		t.Priority = 1
	case "M":
		t.Priority = 5
	case "L":
		t.Priority = 9
	}
	return t
}

// List implements service.TaskSource: the pending tasks.
func (s *Source) List(ctx context.Context) ([]service.TaskItem, error) {
	tasks, err := s.export(ctx, "status:pending")
	if err != nil {
		return nil, err
	}
	items := make([]service.TaskItem, 0, len(tasks))
	for _, t := range tasks {
		if t.UUID != "" {
			items = append(items, t.item())
		}
	}
	return items, nil
}

// Get implements service.TaskSource: id is a uuid, or a working-set
// number as a person types it.
func (s *Source) Get(ctx context.Context, id string) (service.TaskItem, error) {
	e, err := s.get(ctx, id)
	if err != nil {
		return service.TaskItem{}, err
	}
	return e.item(), nil
}

func (s *Source) get(ctx context.Context, id string) (export, error) {
	filter, err := filterFor(id)
	if err != nil {
		return export{}, err
	}
	tasks, err := s.export(ctx, filter)
	if err != nil {
		return export{}, err
	}
	if len(tasks) != 1 || tasks[0].UUID == "" {
		return export{}, &service.TaskNotFound{Source: Name, ID: id}
	}
	return tasks[0], nil
}

// filterFor is the one filter word that names task id: a uuid, or a
// working-set number. Anything else is refused, so an id can never be
// read by task as an rc override, a command or a modification.
func filterFor(id string) (string, error) {
	if u, err := uuid.Parse(id); err == nil && len(id) == 36 {
		return "uuid:" + u.String(), nil
	}
	if id != "" && len(id) <= 9 && strings.Trim(id, "0123456789") == "" && strings.TrimLeft(id, "0") != "" {
		return strings.TrimLeft(id, "0"), nil
	}
	return "", &service.TaskNotFound{Source: Name, ID: id}
}

// CheckID implements service.TaskIDChecker: the id Taskwarrior keeps for
// a task is its uuid (a working-set number names another task once the
// list is renumbered; anything else could be read by task as an override
// or a filter).
func (s *Source) CheckID(id string) error {
	if _, err := uuid.Parse(id); err != nil || len(id) != 36 {
		return &service.TaskNotFound{Source: Name, ID: id}
	}
	return nil
}

// Started implements service.TaskSource: `task <uuid> start`, unless the
// task is already started, which is service.ErrTaskAlreadyStarted (so the
// core remembers not to stop what the person started).
func (s *Source) Started(ctx context.Context, t service.TaskItem) error {
	e, err := s.get(ctx, t.ID)
	if err != nil {
		return err
	}
	if e.Start != "" {
		return service.ErrTaskAlreadyStarted
	}
	if e.Status != "pending" {
		return &service.TaskChanged{Source: Name, ID: t.ID, What: "it is " + e.Status + " now", Do: "the session goes on without starting it in Taskwarrior"}
	}
	_, err = s.run(ctx, "uuid:"+e.UUID, "start")
	return err
}

// Complete implements service.TaskSource: `task <uuid> done` if the task
// is still pending and unchanged since t.Version.
func (s *Source) Complete(ctx context.Context, t service.TaskItem) error {
	e, err := s.get(ctx, t.ID)
	if err != nil {
		var nf *service.TaskNotFound
		if errors.As(err, &nf) {
			return &service.TaskChanged{Source: Name, ID: t.ID, What: "it is gone from Taskwarrior (purged, or the data moved)", Do: "nothing was written; add it again if it still needs doing"}
		}
		return err
	}
	switch {
	case e.Status == "completed":
		return &service.TaskChanged{Source: Name, ID: t.ID, What: "it was marked done meanwhile", Do: "nothing to do: it is already ticked off"}
	case e.Status == "deleted":
		return &service.TaskChanged{Source: Name, ID: t.ID, What: "it was deleted meanwhile", Do: "it was left deleted; `task " + t.ID + " modify status:completed` ticks it off if that is what you meant"}
	case e.Status != "pending":
		return &service.TaskChanged{Source: Name, ID: t.ID, What: "it is " + e.Status + " now", Do: "tick it off in Taskwarrior yourself if it is done"}
	case t.Version != "" && e.Modified != t.Version:
		return &service.TaskChanged{Source: Name, ID: t.ID, What: fmt.Sprintf("it was modified at %s, after antidrift read it (%s)", e.Modified, t.Version),
			Do: "look at it with `task " + t.ID + " info` and run `task " + t.ID + " done` yourself if it is done"}
	}
	_, err = s.run(ctx, "uuid:"+e.UUID, "done")
	return err
}

// Stopped implements service.TaskSource: `task <uuid> stop`. The core
// calls it only for a task antidrift started; a task no longer started
// or no longer pending is left as it is.
func (s *Source) Stopped(ctx context.Context, t service.TaskItem) error {
	e, err := s.get(ctx, t.ID)
	if err != nil {
		return err
	}
	if e.Start == "" || e.Status != "pending" {
		return nil
	}
	_, err = s.run(ctx, "uuid:"+e.UUID, "stop")
	return err
}

func (s *Source) export(ctx context.Context, filter string) ([]export, error) {
	out, err := s.run(ctx, filter, "export")
	if err != nil {
		return nil, err
	}
	var tasks []export
	if err := json.Unmarshal(bytes.TrimSpace(out), &tasks); err != nil {
		return nil, fmt.Errorf("%s export printed something that is not Taskwarrior's JSON (%v)", s.command, err)
	}
	return tasks, nil
}

// run runs task with antidrift's overrides, filter and command words,
// within ctx's deadline (DefaultTimeout when it has none).
func (s *Source) run(ctx context.Context, words ...string) ([]byte, error) {
	if _, ok := ctx.Deadline(); !ok {
		var cancel context.CancelFunc
		ctx, cancel = context.WithTimeout(ctx, DefaultTimeout)
		defer cancel()
	}
	args := append([]string{"rc.hooks=off", "rc.confirmation=off", "rc.verbose=nothing", "rc.json.array=on", "rc.recurrence.confirmation=no"}, words...)
	cmd := exec.CommandContext(ctx, s.command, args...)
	var out, errOut limited
	out.max, errOut.max = maxOutput, 4096
	cmd.Stdout, cmd.Stderr = &out, &errOut
	cmd.WaitDelay = 500 * time.Millisecond // a child that keeps the pipes open is not waited for
	err := cmd.Run()
	what := s.command + " " + words[len(words)-1]
	switch {
	case errors.Is(err, exec.ErrNotFound) || errors.Is(err, fs.ErrNotExist):
		return nil, fmt.Errorf("the Taskwarrior command %q was not found (install Debian's taskwarrior package, or set command in [tasks.taskwarrior])", s.command)
	case ctx.Err() != nil:
		deadline, _ := ctx.Deadline()
		return nil, fmt.Errorf("%s did not finish in time (antidrift waits %s; is task waiting for a lock or a question?)", what, roundWait(deadline))
	case err != nil:
		msg := strings.TrimSpace(errOut.String())
		if msg == "" {
			return nil, fmt.Errorf("%s failed (%v)", what, err)
		}
		return nil, fmt.Errorf("%s failed: %s", what, firstLine(msg))
	case out.over:
		return nil, fmt.Errorf("%s printed more than %d MB; antidrift reads no more", what, maxOutput>>20)
	}
	return out.Bytes(), nil
}

func roundWait(deadline time.Time) string {
	d := time.Until(deadline)
	if d < 0 {
		return "no longer"
	}
	return d.Round(time.Second).String()
}

func firstLine(s string) string {
	if i := strings.IndexByte(s, '\n'); i >= 0 {
		s = s[:i]
	}
	if len(s) > 200 {
		cut := 200
		for cut > 0 && !utf8.RuneStart(s[cut]) {
			cut--
		}
		s = s[:cut] + "…"
	}
	return s
}

// limited is a buffer that keeps at most max bytes and says whether more
// came.
type limited struct {
	bytes.Buffer
	max  int
	over bool
}

func (l *limited) Write(p []byte) (int, error) {
	if room := l.max - l.Len(); len(p) > room {
		l.over = true
		l.Buffer.Write(p[:max(room, 0)])
		return len(p), nil
	}
	return l.Buffer.Write(p)
}

var _ io.Writer = (*limited)(nil)
var _ service.TaskSource = (*Source)(nil)
var _ service.TaskIDChecker = (*Source)(nil)
