package main

import (
	"bytes"
	"context"
	"encoding/json"
	"flag"
	"fmt"
	"io"
	"math"
	"os"
	"os/signal"
	"slices"
	"strings"
	"syscall"
	"time"

	"github.com/godbus/dbus/v5"

	"github.com/antidrift/antidrift/internal/inert"
)

// invocation is one run of a subcommand: its parsed arguments, where it
// prints, and the bus connection, made on first use so that usage errors
// never need a bus.
type invocation struct {
	cmd    *command
	args   []string
	json   bool
	stdout io.Writer
	c      *client
}

// arg is the single (or joined) positional argument, "" if none.
func (x *invocation) arg() string {
	if len(x.args) == 0 {
		return ""
	}
	return x.args[0]
}

func (x *invocation) client() (*client, error) {
	if x.c == nil {
		c, err := connect()
		if err != nil {
			return nil, err
		}
		x.c = c
	}
	return x.c, nil
}

func (x *invocation) close() {
	if x.c != nil {
		x.c.close()
	}
}

func (x *invocation) call(method string, args []any, reply ...any) error {
	c, err := x.client()
	if err != nil {
		return err
	}
	return c.call(method, args, reply...)
}

func (x *invocation) status() (*status, error) {
	c, err := x.client()
	if err != nil {
		return nil, err
	}
	return c.properties()
}

func (x *invocation) printJSON(v any) error { return writeJSON(x.stdout, v) }

// argFunc turns a command's positional argument into the D-Bus argument,
// or a usage error.
type argFunc func(x *invocation) (any, error)

func textArg(x *invocation) (any, error) { return x.arg(), nil }

func durationArg(x *invocation) (any, error) {
	secs, err := parseSeconds(x.arg())
	if err != nil {
		return nil, x.cmd.usageError("DURATION %s: %v", inert.Terminal(x.arg()), err)
	}
	return secs, nil
}

func levelArg(x *invocation) (any, error) {
	if err := checkLevel(x.arg()); err != nil {
		return nil, x.cmd.usageError("%v", err)
	}
	return x.arg(), nil
}

// voidCmd is a command for a method that returns nothing: it calls the
// command's method with its argument (if arg is not nil), then reads the
// status and says what changed — or, with --json, prints the whole status.
func voidCmd(arg argFunc) func(*flag.FlagSet) func(*invocation) error {
	return func(*flag.FlagSet) func(*invocation) error {
		return func(x *invocation) error {
			var args []any
			if arg != nil {
				a, err := arg(x)
				if err != nil {
					return err
				}
				args = []any{a}
			}
			if err := x.call(x.cmd.method, args); err != nil {
				return err
			}
			return x.showChange(x.cmd.method)
		}
	}
}

// The commands that call their method and say what it changed (voidCmd).
var (
	cmdPlan = &command{
		name: "plan", method: "Plan", also: []string{"Coach"},
		synopsis: "[--coach INTENTION [--task REF]]",
		summary:  "start planning: nothing is committed yet (then enforce LEVEL, start); --coach asks the model for a proposal",
		setup:    setupPlan,
	}
	cmdCancelPlan = &command{
		name: "cancel-plan", method: "CancelPlan",
		summary: "leave planning without starting",
		setup:   voidCmd(nil),
	}
	cmdComplete = &command{
		name: "complete", method: "Complete", also: []string{"CompleteKeepTask"},
		synopsis: "[--keep-task]",
		summary:  "the success condition is met: the session goes to review (its task, if any, is ticked off)",
		setup:    setupComplete,
	}
	cmdAbandon = &command{
		name: "abandon", method: "Abandon", synopsis: "[REASON]",
		summary: "give the session up: it goes to review",
		maxArgs: -1,
		setup:   voidCmd(textArg),
	}
	cmdExtend = &command{
		name: "extend", method: "Extend", synopsis: "DURATION",
		summary: "add time to the session (or revive an expired one)",
		minArgs: 1, maxArgs: 1,
		setup: voidCmd(durationArg),
	}
	cmdRefocus = &command{
		name: "refocus", method: "Refocus",
		summary: "acknowledge drift: back to the next action",
		setup:   voidCmd(nil),
	}
	cmdAllow = &command{
		name: "allow", method: "Allow", synopsis: "CLASS[:TITLE-GLOB]",
		summary: "count a window class (or its matching titles) as on task for this session",
		minArgs: 1, maxArgs: 1,
		setup: voidCmd(textArg),
	}
	cmdEnforce = &command{
		name: "enforce", method: "SetEnforcement", synopsis: "LEVEL",
		summary: "set the enforcement level: " + strings.Join(levels, ", "),
		minArgs: 1, maxArgs: 1,
		setup: voidCmd(levelArg),
	}
)

// showChange prints, after method succeeded, what it changed as the daemon
// now reports it; with --json, the whole status.
func (x *invocation) showChange(method string) error {
	st, err := x.status()
	if err != nil {
		return err
	}
	if x.json {
		return x.printJSON(st.jsonObject())
	}
	fmt.Fprintln(x.stdout, confirmation(method, st, time.Now()))
	return nil
}

var cmdStart = &command{
	name: "start", method: "Start", also: []string{"SetQuiet", "StartTask"},
	synopsis: "NEXT_ACTION|--task REF --done-when TEXT --for DURATION [--allow CLASS[:TITLE-GLOB]]... [--enforce LEVEL] [--quiet|--no-quiet] | --from-plan [NEXT_ACTION] [FLAGS]",
	summary:  "commit to one next action for a timebox (DURATION like 25m, 1h30m; at most 24h)",
	maxArgs:  -1,
	setup:    setupStart,
}

func setupStart(fs *flag.FlagSet) func(*invocation) error {
	doneWhen := fs.String("done-when", "", "the success condition: `TEXT` saying how you will know it is done (required)")
	timebox := fs.String("for", "", "the timebox, a `DURATION` such as 25m or 1h30m, at most 24h (required)")
	var allow listFlag
	fs.Var(&allow, "allow", "a window `CLASS` (or CLASS:TITLE-GLOB, e.g. firefox:*GitHub*) that counts as on task; repeat for more (default: the configured classes)")
	level := fs.String("enforce", "", "the enforcement `LEVEL`: "+strings.Join(levels, ", ")+" (default: the planned or configured level)")
	quiet := fs.Bool("quiet", false, "Do Not Disturb: other apps' notifications do not pop up while the session is active (default: the configured quiet)")
	noQuiet := fs.Bool("no-quiet", false, "leave other apps' notifications alone for this session, whatever quiet is in config.toml")
	fromPlan := fs.Bool("from-plan", false, "start with the coach's proposal (antidrift plan --coach); NEXT_ACTION and any flag given change that field")
	task := fs.String("task", "", "start from a task: `REF` is taskwarrior:42, taskwarrior:UUID, caldav:UID, or the bare id with one source (see antidrift tasks); its title is the next action, and --done-when defaults to \"the task is done\"")
	return func(x *invocation) error {
		if *task != "" && x.arg() != "" {
			return x.cmd.usageError("NEXT_ACTION and --task: the task's title is the next action, give one or the other")
		}
		// Everything missing is named at once: one try to get it right.
		var missing []string
		if *task != "" && *fromPlan {
			return x.cmd.usageError("--task and --from-plan: start from the task or from the coach's proposal, not both")
		}
		if x.arg() == "" && *task == "" && !*fromPlan {
			missing = append(missing, "NEXT_ACTION (what you will do)")
		}
		if strings.TrimSpace(*doneWhen) == "" && *task == "" && !*fromPlan {
			missing = append(missing, "--done-when TEXT (how will you know it is done?)")
		}
		if *timebox == "" && !*fromPlan {
			missing = append(missing, "--for DURATION (the timebox, e.g. --for 25m)")
		}
		if len(missing) > 0 {
			return x.cmd.usageError("missing %s", joinAnd(missing))
		}
		var secs uint64
		if *timebox != "" {
			var err error
			if secs, err = parseSeconds(*timebox); err != nil {
				return x.cmd.usageError("--for %s: %v", inert.Terminal(*timebox), err)
			}
		}
		if *level != "" {
			if err := checkLevel(*level); err != nil {
				return x.cmd.usageError("--enforce: %v", err)
			}
		}
		if *quiet && *noQuiet {
			return x.cmd.usageError("--quiet and --no-quiet: choose one")
		}
		next, done, allowed := x.arg(), *doneWhen, append([]string{}, allow...)
		if *fromPlan {
			// The kept proposal, each field given on the command line
			// taking its place. The daemon checks the result as any Start.
			p, err := x.keptProposal()
			if err != nil {
				return err
			}
			if next == "" {
				next = p.NextAction
			}
			if strings.TrimSpace(done) == "" {
				done = p.SuccessCondition
			}
			if *timebox == "" {
				secs = p.TimeboxSecs
			}
			if len(allowed) == 0 {
				allowed = append(allowed, p.AllowedRules...)
			}
		}
		// Start's signature has no room for it: the choice is told first,
		// for the Start that follows (SetQuiet before Start).
		if *quiet || *noQuiet {
			if err := x.call("SetQuiet", []any{*quiet}); err != nil {
				return err
			}
		}
		var id string
		method, args := "Start", []any{next, done, secs, *level, allowed}
		if *task != "" {
			method, args = "StartTask", []any{*task, *doneWhen, secs, *level, append([]string{}, allow...)}
		}
		if err := x.call(method, args, &id); err != nil {
			return err
		}
		if x.json {
			return x.printJSON(map[string]string{"session_id": id})
		}
		return x.showChange(method)
	}
}

// joinAnd is "a", "a and b", "a, b and c".
func joinAnd(items []string) string {
	if len(items) < 2 {
		return strings.Join(items, "")
	}
	return strings.Join(items[:len(items)-1], ", ") + " and " + items[len(items)-1]
}

var cmdStatus = &command{
	name:     "status",
	synopsis: "[--follow] [--format text|json|waybar|polybar]",
	summary:  "show the session; --follow prints a line on every change until interrupted",
	setup:    setupStatus,
}

// formats are status's output formats.
var formats = []string{"text", "json", "waybar", "polybar"}

func setupStatus(fs *flag.FlagSet) func(*invocation) error {
	following := fs.Bool("follow", false, "keep printing a line on every change until interrupted; survives daemon restarts")
	waitFor := fs.String("wait-change", "", "print the status as JSON once its digest differs from `DIGEST` (what the last run printed; \"none\" at first), then exit: for panels that run commands to completion")
	format := fs.String("format", "", "output `FORMAT`: "+strings.Join(formats, ", ")+" (default text, or json with --json)")
	return func(x *invocation) error {
		f := *format
		switch {
		case f == "" && x.json:
			f = "json"
		case f == "":
			f = "text"
		case !slices.Contains(formats, f):
			return x.cmd.usageError("--format %q: want one of %s", f, strings.Join(formats, ", "))
		case x.json && f != "json":
			return x.cmd.usageError("--json and --format %s disagree; give one of them", f)
		}
		if *waitFor != "" && f != "json" {
			return x.cmd.usageError("--wait-change prints JSON; it goes with --format json or --json only")
		}
		if *following || *waitFor != "" {
			c, err := x.client()
			if err != nil {
				return err
			}
			ctx, stop := signal.NotifyContext(context.Background(), os.Interrupt, syscall.SIGTERM)
			defer stop()
			c.ctx = ctx // an interrupt also ends a call in flight
			if *waitFor != "" {
				return waitChange(ctx, c, *waitFor, x.stdout)
			}
			return follow(ctx, c, f, x.stdout)
		}
		st, err := x.status()
		if err != nil {
			return err
		}
		if f == "text" {
			fmt.Fprint(x.stdout, statusText(st, time.Now(), textOpts{colour: useColour(x.stdout)}))
			return nil
		}
		fmt.Fprintln(x.stdout, statusLine(f, st, time.Now()))
		return nil
	}
}

var cmdEnd = &command{
	name: "end", method: "End",
	summary: "seal the reviewed session into the audit log; prints its hash",
	setup:   setupEnd,
}

func setupEnd(*flag.FlagSet) func(*invocation) error {
	return func(x *invocation) error {
		var hash string
		if err := x.call("End", nil, &hash); err != nil {
			return err
		}
		if x.json {
			return x.printJSON(map[string]any{"audit_hash": hash, "sealed": hash != ""})
		}
		if hash == "" {
			fmt.Fprintln(x.stdout, "Ended, but the summary could not be sealed yet: it stays pending and is sealed at the next start or end.\nSee 'antidrift status' for the problem.")
			return nil
		}
		fmt.Fprintln(x.stdout, "Ended and sealed. Audit hash:", inert.Terminal(hash))
		return nil
	}
}

var cmdBreakGlass = &command{
	name: "break-glass", method: "BreakGlass", synopsis: "REASON",
	summary: "at level locked: start the hold after which abandon is permitted",
	minArgs: 1, maxArgs: -1,
	setup: setupBreakGlass,
}

func setupBreakGlass(*flag.FlagSet) func(*invocation) error {
	return func(x *invocation) error {
		var wait uint64
		if err := x.call("BreakGlass", []any{x.arg()}, &wait); err != nil {
			return err
		}
		if x.json {
			return x.printJSON(map[string]uint64{"wait_secs": wait})
		}
		if wait == 0 {
			fmt.Fprintln(x.stdout, "The break-glass hold has elapsed: 'antidrift abandon [REASON]' is permitted now.")
			return nil
		}
		d := time.Duration(wait) * time.Second
		fmt.Fprintf(x.stdout, "Break-glass hold running: 'antidrift abandon' is permitted in %s (at %s).\n", span(d), time.Now().Add(d).Format("15:04:05"))
		return nil
	}
}

var cmdHistory = &command{
	name: "history", method: "History",
	synopsis: "[--limit N] [--device NAME|--this-device] [--state-dir DIR]",
	summary:  "list sealed sessions, newest first (default limit 50)",
	setup:    setupHistory,
}

func setupHistory(fs *flag.FlagSet) func(*invocation) error {
	limit := fs.Uint("limit", 0, "show at most `N` sessions (default 50, at most 1000)")
	stateDir := fs.String("state-dir", "", "with sync_dir set: the daemon's state directory is `DIR` (its --state-dir), which says which copy in sync_dir is this machine's (default $XDG_STATE_HOME/antidrift)")
	devices := deviceFlags(fs)
	return func(x *invocation) error {
		if *limit > math.MaxUint32 {
			return x.cmd.usageError("--limit %d is too large", *limit)
		}
		which, err := devices.pick(syncConfig())
		if err != nil {
			return x.cmd.usageError("%s", err)
		}
		var entries []map[string]dbus.Variant
		if err := x.call("History", []any{uint32(*limit)}, &entries); err != nil {
			return err
		}
		if which.SyncDir != "" {
			shown := int(*limit)
			if shown == 0 {
				shown = 50
			}
			var problems, notes []string
			if entries, problems, notes, err = withOtherDevices(entries, which, *stateDir, shown); err != nil {
				return deviceError(x.cmd, err)
			}
			for _, n := range notes {
				fmt.Fprintln(os.Stderr, "antidrift history:", n)
			}
			for _, p := range problems {
				fmt.Fprintln(os.Stderr, "antidrift history: !", p)
			}
		}
		if x.json {
			out := make([]map[string]any, len(entries))
			for i, e := range entries {
				out[i] = plainMap(e)
			}
			return x.printJSON(out)
		}
		fmt.Fprint(x.stdout, historyText(entries))
		return nil
	}
}

var cmdVerify = &command{
	name: "verify", method: "VerifyAudit",
	synopsis: "[--journal] [--device NAME|--this-device] [--state-dir DIR]",
	summary:  "check the audit log's hash chain; exits 1 if it is broken",
	setup:    setupVerify,
}

func setupVerify(fs *flag.FlagSet) func(*invocation) error {
	withJournal := fs.Bool("journal", false, "also check every head the journal recorded at a seal (journalctl) against audit.jsonl; when no journal is reachable it says so, and the exit code is the rest's")
	stateDir := fs.String("state-dir", "", "the daemon's state directory is `DIR` (its --state-dir): --journal reads its audit.jsonl, and with sync_dir set it says which copy there is this machine's (default $XDG_STATE_HOME/antidrift)")
	devices := deviceFlags(fs)
	return func(x *invocation) error {
		which, err := devices.pick(syncConfig())
		if err != nil {
			return x.cmd.usageError("%s", err)
		}
		var (
			ok      bool
			entries uint32
			problem string
		)
		if err := x.call("VerifyAudit", nil, &ok, &entries, &problem); err != nil {
			return err
		}
		report := map[string]any{"ok": ok, "entries": entries, "problem": problem}
		othersOK, othersText := true, ""
		if which.SyncDir != "" {
			if othersOK, othersText, err = verifyOtherDevices(which, *stateDir, report); err != nil {
				return deviceError(x.cmd, err)
			}
		}
		var journalNote string
		if *withJournal {
			missing, reached, note, err := checkJournal(*stateDir)
			if err != nil {
				return err
			}
			journalNote = note
			report["journal"] = map[string]any{"checked": reached, "missing": nonNilStrings(missing), "note": note}
			if len(missing) > 0 {
				ok = false
				problem = strings.TrimPrefix(problem+". "+strings.Join(missing, "; "), ". ")
				report["ok"] = false
			}
		}
		broken := &exitError{code: exitRefused, msg: fmt.Sprintf("The audit log is broken (%d good entries before the problem): %s", entries, problem)}
		if ok && !othersOK {
			report["ok"] = false
			broken.msg = "Not everything in sync_dir verifies: see the lines marked ! above."
		}
		if x.json {
			if err := x.printJSON(report); err != nil {
				return err
			}
			broken.msg = "" // the JSON says it
		} else {
			if journalNote != "" {
				fmt.Fprintln(x.stdout, inert.TerminalLines(journalNote))
			}
			if ok {
				fmt.Fprintf(x.stdout, "The audit log is intact: %d %s, every hash checks out.\n", entries, plural(int(entries), "entry", "entries"))
			}
			fmt.Fprint(x.stdout, othersText)
		}
		if !ok || !othersOK {
			return broken
		}
		return nil
	}
}

// checkJournal compares the heads the journal recorded with audit.jsonl.
// reached says whether a journal could be read; note says what was
// checked, or why the journal could not be.
func checkJournal(stateDir string) (missing []string, reached bool, note string, err error) {
	path, err := auditPath(stateDir)
	if err != nil {
		return nil, false, "", err
	}
	heads, jerr := readJournalHeads()
	if jerr != nil {
		return nil, false, fmt.Sprintf("No journal was reachable: %v.\nThe heads a journal records at each seal were NOT checked; audit.jsonl and state.json were.", jerr), nil
	}
	file, err := chainHeads(path)
	if err != nil {
		return nil, true, "", unreachable("cannot read %s: %v", path, err)
	}
	missing = missingHeads(heads, file)
	if len(missing) == 0 && len(heads) == 0 {
		note = "The journal holds no seals (it was vacuumed, or nothing was sealed while it ran); audit.jsonl and state.json were checked."
	} else if len(missing) == 0 {
		note = fmt.Sprintf("The journal recorded %d %s; audit.jsonl holds every one.", len(heads), plural(len(heads), "seal", "seals"))
	}
	return missing, true, note, nil
}

func nonNilStrings(s []string) []string {
	if s == nil {
		return []string{}
	}
	return s
}

var cmdHelp = &command{
	name:     "help",
	synopsis: "[COMMAND]",
	summary:  "show this help, or a command's",
	maxArgs:  1,
	setup:    setupHelp,
}

func setupHelp(*flag.FlagSet) func(*invocation) error {
	return func(x *invocation) error {
		if x.arg() == "" {
			fmt.Fprint(x.stdout, usage())
			return nil
		}
		i := slices.IndexFunc(commands, func(c *command) bool { return c.name == x.arg() })
		if i < 0 {
			return x.cmd.usageError("unknown command %q", x.arg())
		}
		return commands[i].run([]string{"--help"}, x.stdout)
	}
}

// maxDuration is the longest timebox, and the longest extension: the
// daemon's limit (a session is at most 24 hours), checked here too so that
// a slip of the keyboard is a usage error that needs no daemon.
const maxDuration = 24 * time.Hour

// parseSeconds parses a duration (time.ParseDuration syntax) into whole
// seconds, which is what the API takes. Its errors follow the text as the
// person typed it ("--for 99h: ...").
func parseSeconds(s string) (uint64, error) {
	d, err := time.ParseDuration(s)
	switch {
	case err != nil:
		return 0, fmt.Errorf("not a duration (use e.g. 90s, 25m, 1h30m)")
	case d < time.Second:
		return 0, fmt.Errorf("too short: at least 1s")
	case d > maxDuration:
		return 0, fmt.Errorf("too long: a session is at most 24h")
	}
	return uint64(d.Round(time.Second) / time.Second), nil
}

// listFlag collects a repeated flag.
type listFlag []string

func (l *listFlag) String() string     { return strings.Join(*l, ",") }
func (l *listFlag) Set(s string) error { *l = append(*l, s); return nil }

func checkLevel(level string) error {
	if !slices.Contains(levels, level) {
		return fmt.Errorf("level %q: want one of %s", level, strings.Join(levels, ", "))
	}
	return nil
}

// writeJSON prints v as one line of JSON. HTML characters are left alone:
// the reader is a script or a panel, not a browser. What a terminal would
// act on is \u-escaped (inert.JSON): --json is often read in one, and a
// script decodes the same text.
func writeJSON(w io.Writer, v any) error {
	var b bytes.Buffer
	enc := json.NewEncoder(&b)
	enc.SetEscapeHTML(false)
	if err := enc.Encode(v); err != nil {
		return err
	}
	_, err := w.Write(inert.JSON(b.Bytes()))
	return err
}
