package main

import (
	"bufio"
	"context"
	"encoding/json"
	"errors"
	"flag"
	"fmt"
	"io"
	"os"
	"strings"
	"text/tabwriter"
	"time"

	"github.com/godbus/dbus/v5"

	"github.com/antidrift/antidrift/internal/inert"
)

func setupComplete(fs *flag.FlagSet) func(*invocation) error {
	keep := fs.Bool("keep-task", false, "leave the session's task open in its source (by default complete ticks it off)")
	return func(x *invocation) error {
		method := "Complete"
		if *keep {
			method = "CompleteKeepTask"
		}
		if err := x.call(method, nil); err != nil {
			return err
		}
		return x.showChange(method)
	}
}

var cmdTasks = &command{
	name: "tasks", method: "ListTasks",
	summary: "list the open tasks of the configured task sources (Taskwarrior, CalDAV), due first, to start one with start --task",
	setup:   setupTasks,
}

// listedTask is one row of ListTasks.
type listedTask struct {
	Ref, Source, Title string
	Due                int64
	Priority           uint32
	Short              string
}

type taskFailure struct{ Source, Why string }

func setupTasks(fs *flag.FlagSet) func(*invocation) error {
	return func(x *invocation) error {
		var tasks []listedTask
		var failures []taskFailure
		if err := x.call("ListTasks", nil, &tasks, &failures); err != nil {
			return err
		}
		if x.json {
			out := map[string]any{"tasks": []map[string]any{}, "failures": []map[string]any{}}
			rows := []map[string]any{}
			for _, t := range tasks {
				row := map[string]any{"ref": t.Ref, "source": t.Source, "title": t.Title, "priority": t.Priority, "short": t.Short}
				if t.Due != 0 {
					row["due_unix"] = t.Due
				}
				rows = append(rows, row)
			}
			fails := []map[string]any{}
			for _, f := range failures {
				fails = append(fails, map[string]any{"source": f.Source, "why": f.Why})
			}
			out["tasks"], out["failures"] = rows, fails
			if err := x.printJSON(out); err != nil {
				return err
			}
		} else {
			x.printTasks(tasks)
		}
		return tasksFailed(tasks, failures)
	}
}

// printTasks is the tasks as a table a person picks from: what to type
// after start --task, due, priority, title.
func (x *invocation) printTasks(tasks []listedTask) {
	if len(tasks) == 0 {
		fmt.Fprintln(x.stdout, "No open tasks.")
		return
	}
	w := tabwriter.NewWriter(x.stdout, 0, 0, 2, ' ', 0)
	fmt.Fprintln(w, "REF\tDUE\tPRI\tTITLE")
	for _, t := range tasks {
		ref := t.Ref
		if t.Short != "" {
			ref = t.Source + ":" + t.Short
		}
		due := "-"
		if t.Due != 0 {
			due = time.Unix(t.Due, 0).Format("2006-01-02 15:04")
		}
		pri := "-"
		if t.Priority != 0 {
			pri = fmt.Sprint(t.Priority)
		}
		fmt.Fprintf(w, "%s\t%s\t%s\t%s\n", inert.Terminal(ref), due, pri, inert.Terminal(t.Title))
	}
	w.Flush()
}

// tasksFailed says each source that could not list (exit 1 when none
// listed and one failed; the others' tasks are printed either way).
func tasksFailed(tasks []listedTask, failures []taskFailure) error {
	if len(failures) == 0 {
		return nil
	}
	var b strings.Builder
	for i, f := range failures {
		if i > 0 {
			b.WriteString("\n")
		}
		fmt.Fprintf(&b, "antidrift tasks: %s could not list its tasks: %s", inert.Terminal(f.Source), inert.Terminal(f.Why))
	}
	if len(tasks) == 0 {
		return &exitError{code: exitRefused, msg: b.String()}
	}
	fmt.Fprintln(os.Stderr, b.String())
	return nil
}

var cmdHook = &command{
	name: "hook", method: "FollowTask", synopsis: "taskwarrior [--for DURATION]",
	summary: "Taskwarrior's on-modify hook: task N start/stop/done starts, abandons or completes a session (docs/tasks.md)",
	minArgs: 1, maxArgs: 1,
	setup: setupHook,
}

// hookWait bounds the hook's whole conversation with the daemon:
// Taskwarrior waits for the hook, and the person for Taskwarrior.
const hookWait = 2 * time.Second

// twTask is the part of a Taskwarrior task the hook reads.
type twTask struct {
	UUID        string `json:"uuid"`
	Description string `json:"description"`
	Status      string `json:"status"`
	Start       string `json:"start"`
}

func setupHook(fs *flag.FlagSet) func(*invocation) error {
	timebox := fs.String("for", "25m", "the timebox, a `DURATION`, of a session that task N start starts")
	return func(x *invocation) error {
		if x.arg() != "taskwarrior" {
			return x.cmd.usageError("%s: the one hook is taskwarrior", inert.Terminal(x.arg()))
		}
		secs, err := parseSeconds(*timebox)
		if err != nil {
			return x.cmd.usageError("--for %s: %v", inert.Terminal(*timebox), err)
		}
		return taskwarriorHook(os.Stdin, x.stdout, secs)
	}
}

// taskwarriorHook is the on-modify hook: it reads the task before and
// after the change (two JSON lines), prints the changed one back at once
// (Taskwarrior needs it, whatever antidrift makes of it), and then tells
// the daemon, within hookWait, without ever running task itself (a hook
// that does can lose writes, taskwarrior #1726). It always exits 0: a
// feedback line says what antidrift did or why it did nothing.
func taskwarriorHook(stdin io.Reader, stdout io.Writer, secs uint64) error {
	r := bufio.NewReaderSize(stdin, 64<<10)
	before, _ := r.ReadString('\n')
	after, _ := r.ReadString('\n')
	after = strings.TrimRight(after, "\n")
	if after == "" {
		// Not an on-modify call: give back what came, change nothing.
		fmt.Fprintln(stdout, strings.TrimRight(before, "\n"))
		return nil
	}
	fmt.Fprintln(stdout, after)
	var old, now twTask
	if json.Unmarshal([]byte(before), &old) != nil || json.Unmarshal([]byte(after), &now) != nil || now.UUID == "" {
		return nil
	}
	event := ""
	switch {
	case now.Status == "completed" && old.Status != "completed":
		event = "done"
	case now.Status == "deleted" && old.Status != "deleted":
		event = "delete"
	case now.Status == "pending" && old.Start == "" && now.Start != "":
		event = "start"
	case now.Status == "pending" && old.Start != "" && now.Start == "":
		event = "stop"
	default:
		return nil // another change: nothing for antidrift
	}
	// No version: Taskwarrior sets the task's modified after its hooks
	// ran, so the one in hand is already stale; a session started here
	// checks at complete only that the task is still pending.
	said := followTask("taskwarrior:"+now.UUID, event, now.Description, "", secs)
	fmt.Fprintln(stdout, "antidrift: "+inert.Terminal(said))
	return nil
}

// followTask asks the daemon to follow a task's event, never starting it
// through bus activation, within hookWait; the sentence says what came of
// it.
func followTask(ref, event, title, version string, secs uint64) string {
	ctx, cancel := context.WithTimeout(context.Background(), hookWait)
	defer cancel()
	if os.Getenv("DBUS_SESSION_BUS_ADDRESS") == "" {
		// Without it godbus would try dbus-launch: no session bus here.
		if _, err := os.Stat(os.Getenv("XDG_RUNTIME_DIR") + "/bus"); os.Getenv("XDG_RUNTIME_DIR") == "" || err != nil {
			return "antidrift is not running here (no D-Bus session bus), so no session follows this task"
		}
	}
	conn, err := dbus.ConnectSessionBus(dbus.WithContext(ctx))
	if err != nil {
		return "antidrift is not running here (the D-Bus session bus cannot be reached), so no session follows this task"
	}
	defer conn.Close()
	var said string
	err = conn.Object(busName, objectPath).CallWithContext(ctx, iface+".FollowTask", dbus.FlagNoAutoStart, ref, event, title, version, secs).Store(&said)
	var e dbus.Error
	switch {
	case err == nil:
		return said
	case errors.As(err, &e) && (e.Name == "org.freedesktop.DBus.Error.ServiceUnknown" || e.Name == "org.freedesktop.DBus.Error.NameHasNoOwner"):
		return "antidrift is not running, so no session follows this task (systemctl --user start antidrift)"
	case ctx.Err() != nil:
		return fmt.Sprintf("antidriftd did not answer within %s, so it may not follow this task", hookWait)
	case errors.As(err, &e):
		msg := e.Error()
		return "antidriftd refused: " + msg
	}
	return "antidriftd could not be told: " + err.Error()
}
