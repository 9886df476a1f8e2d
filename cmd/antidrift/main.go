// Command antidrift is the everyday face of antidriftd: it starts, changes
// and ends focus sessions and shows them, as a thin client of the daemon's
// D-Bus API (org.antidrift.Session1). Every decision is the daemon's; this
// command parses arguments, makes one call and prints the answer.
//
// Exit codes: 0 done; 1 the daemon refused (said in commands and flags,
// speak.go) or the audit chain is broken (verify); 2 usage, including an
// argument the daemon refused; 3 the daemon cannot be reached or does not
// answer.
package main

import (
	"errors"
	"flag"
	"fmt"
	"io"
	"os"
	"slices"
	"strings"

	"github.com/antidrift/antidrift/internal/inert"
	"github.com/antidrift/antidrift/service"
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
	// method is the org.antidrift.Session1 method the command calls, ""
	// for none: how the daemon's refusals, which name methods, are said
	// back in commands (speak.go).
	method string
	// also are further methods the command calls in some of its forms
	// (report --daemon --device: ReportDevice), said back as it.
	also    []string
	minArgs int
	maxArgs int
	setup   func(fs *flag.FlagSet) func(x *invocation) error
}

// commands in the order a session uses them; help lists them this way.
// Each is declared beside its code (cmdStart beside setupStart, ...). The
// list is made in init, as cmd/go makes its own, because help is one of
// them and reads it: a list given as the variable's value would be an
// initialization cycle.
var commands []*command

func init() {
	commands = []*command{
		cmdPlan, cmdCancelPlan, cmdTasks, cmdStart, cmdStatus, cmdComplete, cmdAbandon, cmdExtend, cmdEnd,
		cmdRefocus, cmdAllow, cmdEnforce, cmdBreakGlass, cmdReview, cmdHistory, cmdReport, cmdVerify, cmdForgetKey, cmdHook, cmdHelp,
	}
}

// levels are the enforcement levels, gentlest first. They are part of the
// documented API; checking them here makes a typo a usage error (exit 2)
// that needs no daemon.
var levels = service.LevelNames()

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
		// The daemon's words, and what was typed, quoted in them: a
		// message of lines, made inert for the terminal.
		fmt.Fprintln(stderr, inert.TerminalLines(strings.TrimRight(e.msg, "\n")))
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
		return c.usageError("%v", err)
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
		name, _, hasValue := strings.Cut(strings.TrimLeft(a, "-"), "=")
		f := fs.Lookup(name)
		switch {
		case f == nil && (name == "h" || name == "help"):
			return nil, flag.ErrHelp
		case f == nil:
			return nil, unknownFlag(fs, name)
		case hasValue || isBoolFlag(f):
		case i+1 == len(args):
			return nil, fmt.Errorf("--%s needs a value: --%s %s", name, name, valueName(f))
		default:
			// A flag that takes a value takes the next argument with it.
			i++
			flags = append(flags, args[i])
		}
	}
	if err := fs.Parse(append(append(flags, "--"), positional...)); err != nil {
		// Only a value the flag's Set refused gets here; the flag package
		// names flags with one dash, the docs with two.
		return nil, errors.New(strings.Replace(err.Error(), " flag -", " flag --", 1))
	}
	return fs.Args(), nil
}

// unknownFlag says name is not one of fs's flags, and which one the person
// may have meant: a near spelling, or a flag other tools use for the same
// thing (--timebox for --for).
func unknownFlag(fs *flag.FlagSet, name string) error {
	msg := "unknown flag --" + inert.Terminal(name)
	if guess := closestFlag(fs, name); guess != "" {
		msg += " (did you mean --" + guess + "?)"
	} else {
		var names []string
		fs.VisitAll(func(f *flag.Flag) { names = append(names, "--"+f.Name) })
		msg += " (the flags are " + strings.Join(names, ", ") + ")"
	}
	return errors.New(msg)
}

// flagSynonyms are words people reach for, by the flag that means them.
var flagSynonyms = map[string][]string{
	"for":       {"timebox", "time", "duration", "minutes", "mins", "t"},
	"done-when": {"done", "when", "success", "success-condition", "until", "goal"},
	"enforce":   {"level", "enforcement", "mode"},
	"allow":     {"allowed", "class", "allow-class", "whitelist", "allowlist"},
	"limit":     {"n", "count", "max"},
	"state-dir": {"dir", "statedir", "state"},
	"format":    {"output", "o"},
}

// closestFlag is the flag of fs that name most likely meant, or "".
func closestFlag(fs *flag.FlagSet, name string) string {
	lower := strings.ToLower(name)
	for flagName, words := range flagSynonyms {
		if fs.Lookup(flagName) != nil && slices.Contains(words, lower) {
			return flagName
		}
	}
	best, bestDist := "", 3 // at most two edits away
	fs.VisitAll(func(f *flag.Flag) {
		d := editDistance(lower, f.Name)
		if len(lower) >= 2 && strings.HasPrefix(f.Name, lower) {
			d = min(d, 1) // --done for --done-when
		}
		if d < bestDist {
			best, bestDist = f.Name, d
		}
	})
	return best
}

// editDistance is the Levenshtein distance between a and b.
func editDistance(a, b string) int {
	prev := make([]int, len(b)+1)
	for j := range prev {
		prev[j] = j
	}
	for i := 1; i <= len(a); i++ {
		cur := make([]int, len(b)+1)
		cur[0] = i
		for j := 1; j <= len(b); j++ {
			cost := 1
			if a[i-1] == b[j-1] {
				cost = 0
			}
			cur[j] = min(prev[j]+1, cur[j-1]+1, prev[j-1]+cost)
		}
		prev = cur
	}
	return prev[len(b)]
}

// valueName is what a flag's value is called in its help (DURATION, TEXT).
func valueName(f *flag.Flag) string {
	name, _ := flag.UnquoteUsage(f)
	return name
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
2 usage error (also an argument the daemon refused), 3 the daemon cannot be
reached or does not answer (ANTIDRIFT_TIMEOUT, default 40s, is how long the
CLI waits).

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
