// Command antidrift is the everyday face of antidriftd: it starts, changes
// and ends focus sessions and shows them, as a thin client of the daemon's
// D-Bus API (org.antidrift.Session1). Every decision is the daemon's; this
// command parses arguments, makes one call and prints the answer.
//
// Exit codes: 0 done; 1 the daemon refused (its message is printed as is) or
// the audit chain is broken (verify); 2 usage; 3 the daemon cannot be
// reached.
package main

import (
	"errors"
	"flag"
	"fmt"
	"io"
	"os"
	"slices"
	"strings"
)

// version is set at build time with -ldflags "-X main.version=...".
var version = "dev"

const (
	exitOK          = 0
	exitRefused     = 1
	exitUsage       = 2
	exitUnreachable = 3
)

// exitError is an error with the exit code it ends the command with. msg is
// printed on stderr as is; an empty msg prints nothing (the command already
// said what went wrong on stdout, e.g. verify --json).
type exitError struct {
	code int
	msg  string
}

func (e *exitError) Error() string { return e.msg }

// command is one subcommand. setup declares its flags on fs and returns the
// function that runs it; minArgs/maxArgs bound its positional arguments
// (maxArgs -1: any number, joined with spaces into one text).
type command struct {
	name     string
	synopsis string // what follows the name in the usage line
	summary  string
	minArgs  int
	maxArgs  int
	setup    func(fs *flag.FlagSet) func(x *invocation) error
}

// commands in the order a session uses them; help lists them this way.
var commands []*command

func init() {
	commands = []*command{
		{name: "plan", summary: "start planning: nothing is committed yet (then enforce LEVEL, start)", setup: voidCmd("Plan", nil)},
		{name: "cancel-plan", summary: "leave planning without starting", setup: voidCmd("CancelPlan", nil)},
		{name: "start", synopsis: "NEXT_ACTION --done-when TEXT --for DURATION [--allow CLASS[:TITLE-GLOB]]... [--enforce LEVEL]",
			summary: "commit to one next action for a timebox (DURATION like 25m, 1h30m)", minArgs: 1, maxArgs: -1, setup: setupStart},
		{name: "status", synopsis: "[--follow] [--format text|json|waybar|polybar]",
			summary: "show the session; --follow prints a line on every change until interrupted", setup: setupStatus},
		{name: "complete", summary: "the success condition is met: the session goes to review", setup: voidCmd("Complete", nil)},
		{name: "abandon", synopsis: "[REASON]", summary: "give the session up: it goes to review", maxArgs: -1, setup: voidCmd("Abandon", textArg)},
		{name: "extend", synopsis: "DURATION", summary: "add time to the session (or revive an expired one)", minArgs: 1, maxArgs: 1, setup: voidCmd("Extend", durationArg)},
		{name: "end", summary: "seal the reviewed session into the audit log; prints its hash", setup: setupEnd},
		{name: "refocus", summary: "acknowledge drift: back to the next action", setup: voidCmd("Refocus", nil)},
		{name: "allow", synopsis: "CLASS[:TITLE-GLOB]", summary: "count a window class (or its matching titles) as on task for this session", minArgs: 1, maxArgs: 1, setup: voidCmd("Allow", textArg)},
		{name: "enforce", synopsis: "LEVEL", summary: "set the enforcement level: " + strings.Join(levels, ", "), minArgs: 1, maxArgs: 1, setup: voidCmd("SetEnforcement", levelArg)},
		{name: "break-glass", synopsis: "REASON", summary: "at level locked: start the hold after which abandon is permitted", minArgs: 1, maxArgs: -1, setup: setupBreakGlass},
		{name: "history", synopsis: "[--limit N]", summary: "list sealed sessions, newest first (default limit 50)", setup: setupHistory},
		{name: "report", synopsis: "[--today|--week|--month|--since DATE [--until DATE]] [--html FILE [--open]] [--state-dir DIR]",
			summary: "see the week: totals, days, sessions and windows, as text, JSON or an HTML page (reads the state directory; no daemon needed)", setup: setupReport},
		{name: "verify", summary: "check the audit log's hash chain; exits 1 if it is broken", setup: setupVerify},
		{name: "help", synopsis: "[COMMAND]", summary: "show this help, or a command's", maxArgs: 1, setup: setupHelp},
	}
}

// levels are the enforcement levels, gentlest first. They are part of the
// documented API; checking them here makes a typo a usage error (exit 2)
// that needs no daemon.
var levels = []string{"observe", "warn", "block", "locked"}

func main() {
	os.Exit(run(os.Args[1:], os.Stdout, os.Stderr))
}

// run is the whole program: it returns the exit code.
func run(args []string, stdout, stderr io.Writer) int {
	err := dispatch(args, stdout)
	if err == nil {
		return exitOK
	}
	var e *exitError
	if !errors.As(err, &e) {
		e = &exitError{code: exitRefused, msg: "antidrift: " + err.Error()}
	}
	if e.msg != "" {
		fmt.Fprintln(stderr, strings.TrimRight(e.msg, "\n"))
	}
	return e.code
}

func dispatch(args []string, stdout io.Writer) error {
	// A leading --json applies to the subcommand: `antidrift --json status`.
	var global []string
	for len(args) > 0 && (args[0] == "--json" || args[0] == "-json") {
		global, args = append(global, "--json"), args[1:]
	}
	if len(args) == 0 {
		return &exitError{code: exitUsage, msg: "antidrift: no command given\n\n" + usage()}
	}
	switch args[0] {
	case "-h", "-help", "--help":
		fmt.Fprint(stdout, usage())
		return nil
	case "-version", "--version":
		fmt.Fprintln(stdout, "antidrift", version)
		return nil
	}
	i := slices.IndexFunc(commands, func(c *command) bool { return c.name == args[0] })
	if i < 0 {
		names := make([]string, len(commands))
		for i, c := range commands {
			names[i] = c.name
		}
		return &exitError{code: exitUsage, msg: fmt.Sprintf("antidrift: unknown command %q (commands: %s)\nusage: antidrift COMMAND [ARGUMENTS] [--json]\nRun 'antidrift help' for details.", args[0], strings.Join(names, ", "))}
	}
	return commands[i].run(append(args[1:], global...), stdout)
}

// run parses a subcommand's flags and arguments and runs it.
func (c *command) run(args []string, stdout io.Writer) error {
	fs := flag.NewFlagSet("antidrift "+c.name, flag.ContinueOnError)
	fs.SetOutput(io.Discard) // errors are reported by us, with the usage line
	x := &invocation{cmd: c, stdout: stdout}
	fs.BoolVar(&x.json, "json", false, "print parseable JSON on stdout")
	body := c.setup(fs)
	pos, err := parseInterspersed(fs, args)
	if errors.Is(err, flag.ErrHelp) {
		fmt.Fprint(stdout, c.help(fs))
		return nil
	}
	if err != nil {
		// The flag package names flags with one dash; the docs use two.
		return c.usageError("%s", strings.Replace(err.Error(), " flag -", " flag --", 1))
	}
	switch {
	case len(pos) < c.minArgs:
		return c.usageError("missing %s", strings.Fields(c.synopsis)[len(pos)])
	case c.maxArgs >= 0 && len(pos) > c.maxArgs:
		return c.usageError("unexpected argument %q", pos[c.maxArgs])
	case c.maxArgs < 0 && len(pos) > 0:
		// NEXT_ACTION and REASON may be typed without quotes.
		pos = []string{strings.Join(pos, " ")}
	}
	x.args = pos
	defer x.close()
	return body(x)
}

// parseInterspersed parses fs's flags wherever they stand among the
// positional arguments. The flag package stops at the first positional, but
// `antidrift start "write intro" --for 25m` is how people type it, so the
// flags are moved in front first. "--" still ends the flags, so a next
// action that starts with a dash can be given after it.
func parseInterspersed(fs *flag.FlagSet, args []string) ([]string, error) {
	var flags, positional []string
	for i := 0; i < len(args); i++ {
		a := args[i]
		if a == "--" {
			positional = append(positional, args[i+1:]...)
			break
		}
		if len(a) < 2 || a[0] != '-' {
			positional = append(positional, a)
			continue
		}
		flags = append(flags, a)
		name := strings.TrimLeft(a, "-")
		if strings.Contains(name, "=") {
			continue
		}
		// A flag that takes a value takes the next argument with it.
		if f := fs.Lookup(name); f != nil && !isBoolFlag(f) {
			if i+1 == len(args) {
				return nil, fmt.Errorf("flag needs an argument: %s", a)
			}
			i++
			flags = append(flags, args[i])
		}
	}
	if err := fs.Parse(append(append(flags, "--"), positional...)); err != nil {
		return nil, err
	}
	return fs.Args(), nil
}

func isBoolFlag(f *flag.Flag) bool {
	b, ok := f.Value.(interface{ IsBoolFlag() bool })
	return ok && b.IsBoolFlag()
}

func (c *command) usageLine() string {
	return strings.TrimSpace("usage: antidrift " + c.name + " " + c.synopsis)
}

// usageError is exit 2: what is wrong, then the usage line.
func (c *command) usageError(format string, a ...any) error {
	msg := fmt.Sprintf("antidrift %s: %s\n%s\nRun 'antidrift help %s' for details.", c.name, fmt.Sprintf(format, a...), c.usageLine(), c.name)
	return &exitError{code: exitUsage, msg: msg}
}

// help is a command's own help: usage line, summary and flags.
func (c *command) help(fs *flag.FlagSet) string {
	var b strings.Builder
	fmt.Fprintf(&b, "%s\n\n%s.\n\nFlags (anywhere on the line):\n", c.usageLine(), upperFirst(c.summary))
	fs.VisitAll(func(f *flag.Flag) {
		name, text := flag.UnquoteUsage(f)
		fmt.Fprintf(&b, "  --%s", f.Name)
		if name != "" {
			fmt.Fprintf(&b, " %s", name)
		}
		fmt.Fprintf(&b, "\n        %s\n", text)
	})
	return b.String()
}

// usage is the program's help text.
func usage() string {
	var b strings.Builder
	b.WriteString(`usage: antidrift COMMAND [ARGUMENTS] [--json]

antidrift drives antidriftd, the focus daemon: commit to one next action, a
success condition and a timebox; it watches which window has focus and seals
each session into a hash-chained audit log.

Commands:
`)
	for _, c := range commands {
		fmt.Fprintf(&b, "  %s\n        %s\n", strings.TrimPrefix(c.usageLine(), "usage: antidrift "), c.summary)
	}
	b.WriteString(`
Every command takes --json: parseable JSON on stdout (commands with no result
of their own print the status after the change). Flags may come before or
after the arguments; durations are Go durations: 90s, 25m, 1h30m.

Example:
  antidrift start "write the intro" --done-when "intro is committed" --for 25m --allow Emacs

Exit codes: 0 done, 1 the daemon refused (or verify found the chain broken),
2 usage error, 3 the daemon cannot be reached.

Also: antidrift --help, antidrift --version.
`)
	return b.String()
}

func upperFirst(s string) string {
	if s == "" {
		return s
	}
	return strings.ToUpper(s[:1]) + s[1:]
}
