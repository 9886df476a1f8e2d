package main

import (
	"fmt"
	"slices"
	"strings"

	"github.com/godbus/dbus/v5"

	"github.com/antidrift/antidrift/internal/inert"
	"github.com/antidrift/antidrift/service"
)

// The daemon's errors are written for every client, so they name what a
// program calls: methods (Complete, BreakGlass), their arguments
// (timebox_secs) and seconds. A person at a prompt typed commands, flags and
// durations such as 25m; this file says the daemon's refusals back in those
// words, from the data the daemon sends after the message (the CLI asks
// for it: client.askForErrorData). The errors on the bus keep their
// precise names: programs match on them.

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
	"Coach":          {"intention": "--coach", "task_ref": "--task"},
	"History":        {"limit": "--limit"},
	"ReportDevice":   {"device": "--device"},
	"ApplyProposal":  {"number": "--apply"},
}

// States as a person thinks of them: where antidrift is, and where a
// command works ("locked" is also an enforcement level, so it is never
// said of a state).
var (
	stateIs = map[service.State]string{
		service.StateLocked:   "there is no session",
		service.StatePlanning: "a session is being planned",
		service.StateActive:   "a session is active",
		service.StateReview:   "a session is in review",
	}
	stateInWhen = map[service.State]string{
		service.StateLocked:   "there is no session",
		service.StatePlanning: "planning",
		service.StateActive:   "a session is active",
		service.StateReview:   "a session is in review",
	}
)

// errorData is what an org.antidrift.Error.* says as data: the a{sv} after
// its message. It is empty from a daemon that sent none.
type errorData map[string]dbus.Variant

func dataOf(e dbus.Error) errorData {
	if len(e.Body) > 1 {
		if m, ok := e.Body[1].(map[string]dbus.Variant); ok {
			return m
		}
	}
	return nil
}

func (d errorData) str(key string) string {
	s, _ := d[key].Value().(string)
	return s
}

func (d errorData) strs(key string) []string {
	s, _ := d[key].Value().([]string)
	return s
}

// num is a number of the data as the daemon typed it (t, u or x).
func (d errorData) num(key string) uint64 {
	switch v := d[key].Value().(type) {
	case uint64:
		return v
	case uint32:
		return uint64(v)
	case int64:
		return uint64(v)
	}
	return 0
}

// refusal is the CLI's words for the daemon refusing method as not
// permitted (exit 1): the reason and what works now, in commands.
func refusal(method string, e dbus.Error) *exitError {
	cmd, _ := commandFor(method)
	d := dataOf(e)
	why, ok := refusalWhy(cmd, d)
	if !ok {
		// Not data this CLI knows (another version of the daemon): its words.
		return &exitError{code: exitRefused, msg: cmd + ": refused: " + e.Error()}
	}
	var now []string
	for _, name := range d.strs("permitted") {
		// Report and ReportDevice are one command: said once.
		if c, ok := commandFor(name); ok && !slices.Contains(now, c) {
			now = append(now, c)
		}
	}
	return &exitError{code: exitRefused, msg: fmt.Sprintf(
		"%s: not now: %s.\nThat is the session's state refusing, not a fault: retrying will not help.\nWhat works now: %s.",
		cmd, why, strings.Join(now, ", "))}
}

// refusalWhy says why the daemon refused cmd, from its data; false when
// the data names no condition this CLI knows.
func refusalWhy(cmd string, d errorData) (string, bool) {
	abandon, _ := commandFor(string(service.MethodAbandon))
	switch service.Because(d.str("because")) {
	case service.BecauseState:
		var when []string
		for _, st := range d.strs("works_in") {
			when = append(when, stateInWhen[service.State(st)])
		}
		return fmt.Sprintf("%s, and %s works only when %s", stateIs[service.State(d.str("state"))], cmd, strings.Join(when, " or ")), true
	case service.BecauseUnclassified:
		return cmd + " is not in antidrift's permission table, so no state permits it", true
	case service.BecauseLocked:
		return "this session is at enforcement level locked, which refuses " + cmd +
			" before the deadline; a break-glass hold (antidrift break-glass REASON) permits it once the hold has elapsed", true
	case service.BecauseHold:
		return "this session is at enforcement level locked and its break-glass hold has " + exact(d.num("hold_left_secs")) + " left", true
	case service.BecauseWidening:
		return "this session is at enforcement level locked, which refuses anything that widens the session's allowlist before the deadline", true
	case service.BecauseLowering:
		return "this session is at enforcement level locked, which refuses lowering the level before the deadline", true
	case service.BecauseOutcome:
		return "this session is in review with outcome " + d.str("outcome") + "; only an expired session can be extended back to active", true
	case service.BecauseNotLocked:
		return "this session is at enforcement level " + d.str("level") + ", not locked, so there is no glass to break: " + abandon + " works as it is", true
	}
	return "", false
}

// invalidArgument is the CLI's words for the daemon refusing one of
// method's arguments (exit 2, like every other mistake in what was typed).
func (c *command) invalidArgument(method string, e dbus.Error) error {
	d := dataOf(e)
	arg := d.str("argument")
	word, ok := argWords[method][arg]
	if !ok {
		word = arg
	}
	limit := d.num("limit")
	var msg string
	switch service.ArgRule(d.str("rule")) {
	case service.RuleUTF8:
		msg = word + " must be valid UTF-8"
	case service.RuleEmpty:
		msg = fmt.Sprintf("%s must not be empty (1–%d characters after trimming)", word, limit)
	case service.RuleLength:
		msg = fmt.Sprintf("%s is %d characters; at most %d are allowed", word, d.num("got"), limit)
	case service.RuleControl:
		msg = word + " must not contain control characters (newlines, tabs, escapes)"
	case service.RuleTimebox:
		msg = fmt.Sprintf("%s must be between 1 second and 24 hours (%s); got %s", word, exact(limit), exact(d.num("got")))
	case service.RuleLevel:
		msg = fmt.Sprintf("%s must be one of observe, warn, block, locked; got %s", word, service.Quote(d.str("got")))
	case service.RuleEntry:
		msg = fmt.Sprintf("%s %s is not a valid entry: %s", word, service.Quote(d.str("got")), d.str("detail"))
	case service.RuleEntries:
		msg = fmt.Sprintf("%s has %d entries; at most %d are allowed", word, d.num("got"), limit)
		if strings.HasPrefix(word, "--") {
			msg = fmt.Sprintf("%s is given %d times; at most %d are allowed", word, d.num("got"), limit)
		}
	case service.RuleTimeboxTotal:
		msg = fmt.Sprintf("%s: extending by %s would make the timebox %s; a session is at most 24 hours", word, exact(d.num("got")), exact(d.num("total_secs")))
	case service.RuleAllowFull:
		msg = fmt.Sprintf("%s: this session already allows %d classes, the most there can be", word, limit)
	case service.RuleAtMost:
		msg = fmt.Sprintf("%s must be at most %d; got %d", word, limit, d.num("got"))
	case service.RuleDevice:
		msg = fmt.Sprintf("%s: %s", word, (&service.NoSuchDevice{Device: d.str("got"), Devices: d.strs("choices")}).Error())
	case service.RuleProposal:
		msg = fmt.Sprintf("%s %d: this session's review proposes nothing", word, d.num("got"))
		if limit > 0 {
			msg = fmt.Sprintf("%s %d: this session's review has proposals 1 to %d ('antidrift review' lists them)", word, d.num("got"), limit)
		}
	default:
		// A rule this CLI has no words for (the report's range, which the
		// CLI checks before sending; another daemon's): the daemon's own.
		msg = e.Error()
	}
	return c.usageError("%s", msg)
}

// noModel is the CLI's words for Coach without a model (exit 1): what to
// set, and that nothing changed.
func noModel() *exitError {
	return &exitError{code: exitRefused, msg: "antidrift plan --coach: there is no model to ask. The coach uses the judge's model:\n" +
		"set kind = \"llm\" and its endpoint under [judge] in config.toml (see docs/judge.md). Nothing was changed."}
}

// coachFailed is the CLI's words for a coach that could not propose (exit
// 1): the daemon's reason, and that nothing started.
func coachFailed(e dbus.Error) *exitError {
	return &exitError{code: exitRefused, msg: "antidrift plan --coach: " + inert.Terminal(e.Error()) + ".\n" +
		"Nothing has started. Try again, or commit without the coach: antidrift start NEXT_ACTION --done-when TEXT --for DURATION"}
}
