package service

import (
	"context"
	"errors"
	"fmt"
	"time"
)

// TaskItem is a task as its source has it. Titles are outside text: exact
// here, neutralized where rendered, private like window titles.
type TaskItem struct {
	Source   string    // "taskwarrior", "caldav"
	ID       string    // stable id: Taskwarrior uuid, CalDAV UID
	Short    string    // what a person types: Taskwarrior's working-set number "42", else ""
	Title    string    //
	Due      time.Time // zero: none
	Priority int       // 0 none; 1 highest .. 9 lowest (CalDAV PRIORITY; Taskwarrior H=1 M=5 L=9)
	Done     bool      //
	Version  string    // CalDAV ETag; Taskwarrior's "modified"; compared at write-back
}

// Ref is the task's reference as the bus and the CLI name it: source:id.
func (t TaskItem) Ref() string { return t.Source + ":" + t.ID }

// TaskSource is one task manager (Taskwarrior, a CalDAV list, …): a leaf
// behind this port, configured in config.toml. Every method may block on
// the network or a process: the core never calls one under its lock, always
// with a context that has a deadline.
type TaskSource interface {
	// Name is the source's name as refs carry it: "taskwarrior", "caldav".
	Name() string
	// List returns the open tasks only.
	List(ctx context.Context) ([]TaskItem, error)
	// Get returns one task by its stable id, open or not; *TaskNotFound
	// when the source has no such task.
	Get(ctx context.Context, id string) (TaskItem, error)
	// Started says the session with this task began (Taskwarrior: `task
	// <uuid> start` unless already started; remembers whether antidrift
	// started it). CalDAV: nothing. ErrTaskAlreadyStarted when it was
	// started already: the core then never calls Stopped for it, and
	// remembers that in the session (durably), so a leaf need not.
	Started(ctx context.Context, t TaskItem) error
	// Complete marks it done if it is still as t.Version says; otherwise
	// *TaskChanged, and nothing is written.
	Complete(ctx context.Context, t TaskItem) error
	// Stopped says the session ended without success (abandon, expiry):
	// Taskwarrior `task <uuid> stop`; CalDAV nothing. The core calls it
	// only when Started returned nil (antidrift started it).
	Stopped(ctx context.Context, t TaskItem) error
}

// TaskIDChecker is a TaskSource that can tell, without asking its task
// manager, whether id has the form of the stable id it keeps for a task
// (Taskwarrior: a uuid). FollowTask, whose id comes from the source's own
// side and is not read back (the Taskwarrior hook runs while task holds its
// data), refuses an id that has not: a session's task is named by an id the
// write-back can trust. *TaskNotFound when it has not.
type TaskIDChecker interface {
	CheckID(id string) error
}

// TaskChanged is a write-back refused because another client changed the
// task meanwhile: nothing was overwritten.
type TaskChanged struct {
	Source, ID string
	What       string // what changed: "it was marked done meanwhile"
	Do         string // what to do: "tick it off in Taskwarrior yourself if …"
}

func (e *TaskChanged) Error() string {
	msg := fmt.Sprintf("the %s task %s was changed by another client since antidrift read it, so it was left as it is", e.Source, e.ID)
	if e.What != "" {
		msg += ": " + e.What
	}
	if e.Do != "" {
		msg += "; " + e.Do
	}
	return msg
}

// TaskNotFound is the answer for a task its source does not have.
type TaskNotFound struct {
	Source, ID string
}

func (e *TaskNotFound) Error() string {
	return fmt.Sprintf("%s has no task %s", e.Source, Quote(clip(e.ID, 80)))
}

// ErrTaskAlreadyStarted is Started's answer when the task was started
// already (by the person, in its task manager): not a failure, but the
// core then leaves it started when the session ends without success.
var ErrTaskAlreadyStarted = errors.New("the task was started already")
