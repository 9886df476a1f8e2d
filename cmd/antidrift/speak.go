package main

import (
	"fmt"
	"regexp"
	"strings"
	"time"
)

// The daemon's errors are written for every client, so they name what a
// program calls: methods (Complete, BreakGlass), their arguments
// (timebox_secs) and seconds. A person at a prompt typed commands, flags and
// durations such as 25m; this file says the daemon's refusals back in those
// words. The errors on the bus keep their precise names: programs match on
// them.

// commandFor is how a message names the command that calls method.
func commandFor(method string) (string, bool) {
	if c := commandOf(method); c != nil {
		return "antidrift " + c.name, true
	}
	return "", false
}

// argWords are, for each method, its arguments as the person typed them:
// the flag or the placeholder of the command's usage line.
var argWords = map[string]map[string]string{
	"Start": {
		"next_action":       "NEXT_ACTION",
		"success_condition": "--done-when",
		"timebox_secs":      "--for",
		"enforcement":       "--enforce",
		"allowed_classes":   "--allow",
	},
	"Abandon":        {"reason": "REASON"},
	"Extend":         {"secs": "DURATION"},
	"Allow":          {"window_class": "CLASS"},
	"SetEnforcement": {"level": "LEVEL"},
	"BreakGlass":     {"reason": "REASON"},
	"History":        {"limit": "--limit"},
}

// The shape of a NotPermitted message (service.refuse): what was refused,
// why, and the methods that work now.
var notPermitted = regexp.MustCompile(`^(\w+) is not permitted: (.*)\. It is the session's state refusing, not a fault, so retrying will not help\. What works now: (.*)\.$`)

// Words of the daemon's messages that are not a method's name but read
// like one once method names are commands, and states said as a person
// thinks of them ("locked" is also an enforcement level).
var (
	methodWord  = regexp.MustCompile(`\b[A-Z][a-z]+(?:[A-Z][a-z]+)*\b`)
	breakGlass  = regexp.MustCompile(`\ba BreakGlass hold\b`)
	stateIs     = regexp.MustCompile(`\bantidrift is (locked|planning|active|in review)\b`)
	onlyWhen    = regexp.MustCompile(`\bworks only when it is ((?:locked|planning|active|in review)(?: or (?:locked|planning|active|in review))*)`)
	entryN      = regexp.MustCompile(`\ballowed_classes entry \d+\b`)
	entriesN    = regexp.MustCompile(`\ballowed_classes has (\d+) entries\b`)
	seconds     = regexp.MustCompile(`\b(\d+) s\b`)
	goDuration  = regexp.MustCompile(`\b(?:\d+h)?(?:\d+m)?\d+(?:\.\d+)?s\b`)
	stateWords  = map[string]string{"locked": "there is no session", "planning": "a session is being planned", "active": "a session is active", "in review": "a session is in review"}
	stateInWhen = map[string]string{"locked": "there is no session", "planning": "planning", "active": "a session is active", "in review": "a session is in review"}
)

// refusal is the CLI's words for the daemon refusing method as not
// permitted (exit 1): the reason and what works now, in commands.
func refusal(method, msg string) *exitError {
	cmd, _ := commandFor(method)
	m := notPermitted.FindStringSubmatch(msg)
	if m == nil {
		// Not the shape this CLI knows (another version of the daemon):
		// its words, methods said as commands.
		return &exitError{code: exitRefused, msg: cmd + ": refused: " + inCommands(msg)}
	}
	var now []string
	for _, name := range strings.Split(m[3], ", ") {
		if c, ok := commandFor(name); ok {
			now = append(now, c)
		}
	}
	return &exitError{code: exitRefused, msg: fmt.Sprintf(
		"%s: not now: %s.\nThat is the session's state refusing, not a fault: retrying will not help.\nWhat works now: %s.",
		cmd, inCommands(m[2]), strings.Join(now, ", "))}
}

// invalidArgument is the CLI's words for the daemon refusing one of
// method's arguments (exit 2, like every other mistake in what was typed).
func (c *command) invalidArgument(method, msg string) error {
	msg = entryN.ReplaceAllString(msg, "--allow")
	msg = entriesN.ReplaceAllString(msg, "--allow is given $1 times")
	for arg, words := range argWords[method] {
		msg = regexp.MustCompile(`\b`+regexp.QuoteMeta(arg)+`\b`).ReplaceAllString(msg, words)
	}
	return c.usageError("%s", inCommands(msg))
}

// quoted is a Go-quoted string in a message: what the person typed,
// which is left as it is.
var quoted = regexp.MustCompile(`"(?:[^"\\]|\\.)*"`)

// inCommands rewrites a message of the daemon's: methods become the
// commands that call them, states read as a person says them, and
// durations read as typed (1h, not 3600 s or 1h0m0s: exact). Quoted text, the
// person's own, is left alone.
func inCommands(msg string) string {
	var b strings.Builder
	at := 0
	for _, q := range quoted.FindAllStringIndex(msg, -1) {
		b.WriteString(rewrite(msg[at:q[0]]))
		b.WriteString(msg[q[0]:q[1]])
		at = q[1]
	}
	b.WriteString(rewrite(msg[at:]))
	return b.String()
}

func rewrite(msg string) string {
	msg = breakGlass.ReplaceAllString(msg, "a break-glass hold (antidrift break-glass REASON)")
	msg = onlyWhen.ReplaceAllStringFunc(msg, func(s string) string {
		states := strings.Split(onlyWhen.FindStringSubmatch(s)[1], " or ")
		for i, st := range states {
			states[i] = stateInWhen[st]
		}
		return "works only when " + strings.Join(states, " or ")
	})
	msg = stateIs.ReplaceAllStringFunc(msg, func(s string) string {
		return stateWords[stateIs.FindStringSubmatch(s)[1]]
	})
	msg = methodWord.ReplaceAllStringFunc(msg, func(w string) string {
		if c, ok := commandFor(w); ok {
			return c
		}
		return w
	})
	msg = seconds.ReplaceAllStringFunc(msg, func(s string) string {
		var n int64
		fmt.Sscan(seconds.FindStringSubmatch(s)[1], &n)
		return exact(uint64(n))
	})
	return goDuration.ReplaceAllStringFunc(msg, func(s string) string {
		d, err := time.ParseDuration(s)
		if err != nil {
			return s
		}
		return exact(uint64(d.Round(time.Second) / time.Second))
	})
}
