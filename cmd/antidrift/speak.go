package main

import (
	"fmt"
	"slices"
	"strings"

	"github.com/godbus/dbus/v5"

	"github.com/antidrift/antidrift/dbusapi"
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

// cliWords are the words refusals are said in at a prompt: commands,
// flags and durations such as 25m. The sentences are service's (Words),
// written once for the daemon's messages and these.
var cliWords = service.Words{
	Method: func(m service.Method) string {
		if c, ok := commandFor(string(m)); ok {
			return c
		}
		return string(m)
	},
	Argument: func(m service.Method, name string) string {
		if w, ok := argWords[string(m)][name]; ok {
			return w
		}
		return name
	},
	Secs:     exact,
	Duration: exact,
}

// refusal is the CLI's words for the daemon refusing method as not
// permitted (exit 1): the reason and what works now, in commands.
func refusal(method string, e dbus.Error) *exitError {
	cmd, _ := commandFor(method)
	r, ok := dbusapi.RefusalOf(e)
	if !ok {
		// Not data this CLI knows (another version of the daemon): its words.
		return &exitError{code: exitRefused, msg: cmd + ": refused: " + e.Error()}
	}
	r.Method = service.Method(method) // as this CLI called it (Report for ReportDevice too)
	var now []string
	for _, m := range r.Permitted {
		// Report and ReportDevice are one command: said once.
		if c, ok := commandFor(string(m)); ok && !slices.Contains(now, c) {
			now = append(now, c)
		}
	}
	msg := fmt.Sprintf("%s: not now: %s.", cmd, r.Why(cliWords))
	if retry := r.Retry(); retry != "" {
		msg += "\n" + retry
	}
	return &exitError{code: exitRefused, msg: msg + fmt.Sprintf("\nWhat works now: %s.", strings.Join(now, ", "))}
}

// invalidArgument is the CLI's words for the daemon refusing one of
// method's arguments (exit 2, like every other mistake in what was typed).
func (c *command) invalidArgument(method string, e dbus.Error) error {
	f, ok := dbusapi.FaultOf(e)
	if !ok {
		// A rule this CLI has no words for (another daemon's): the
		// daemon's own.
		return c.usageError("%s", e.Error())
	}
	return c.usageError("%s", f.Say(cliWords, service.Method(method)))
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
