package main

import (
	"flag"
	"fmt"
	"io"
	"strings"

	"github.com/godbus/dbus/v5"

	"github.com/antidrift/antidrift/internal/inert"
)

// proposal is the coach's proposal as the Coach method returns it and the
// Proposal property keeps it: text from a model, shown only through
// inert.Terminal.
type proposal struct {
	NextAction       string   `json:"next_action"`
	SuccessCondition string   `json:"success_condition"`
	TimeboxSecs      uint64   `json:"timebox_secs"`
	AllowedRules     []string `json:"allowed_rules"`
	Why              string   `json:"why"`
}

func setupPlan(fs *flag.FlagSet) func(*invocation) error {
	coach := fs.String("coach", "", "ask the judge's model to turn `INTENTION` into a proposal (next action, success condition, timebox, rules); nothing starts until 'antidrift start --from-plan'")
	task := fs.String("task", "", "the task `REF` the intention is for, as antidrift tasks lists it: the model hears its title (INTENTION may then be \"\")")
	return func(x *invocation) error {
		set := map[string]bool{}
		fs.Visit(func(f *flag.Flag) { set[f.Name] = true })
		if set["task"] && !set["coach"] {
			return x.cmd.usageError("--task goes with --coach")
		}
		if !set["coach"] {
			if err := x.call("Plan", nil); err != nil {
				return err
			}
			return x.showChange("Plan")
		}
		if strings.TrimSpace(*coach) == "" && *task == "" {
			return x.cmd.usageError("--coach: say what you mean to do, e.g. --coach \"thesis chapter 2\"")
		}
		var p proposal
		if err := x.call("Coach", []any{*coach, *task}, &p.NextAction, &p.SuccessCondition, &p.TimeboxSecs, &p.AllowedRules, &p.Why); err != nil {
			return err
		}
		if p.AllowedRules == nil {
			p.AllowedRules = []string{}
		}
		if x.json {
			return x.printJSON(p)
		}
		printProposal(x.stdout, p)
		return nil
	}
}

// printProposal says the proposal and how to take it. Every field is the
// model's text: neutralized for the terminal.
func printProposal(w io.Writer, p proposal) {
	allow := "the configured classes (the coach proposed none)"
	if len(p.AllowedRules) > 0 {
		quoted := make([]string, len(p.AllowedRules))
		for i, r := range p.AllowedRules {
			quoted[i] = inert.Terminal(r)
		}
		allow = strings.Join(quoted, ", ")
	}
	fmt.Fprintf(w, "The coach proposes (nothing has started):\n  next action: %s\n  done when:   %s\n  for:         %s\n  allow:       %s\n",
		inert.Terminal(p.NextAction), inert.Terminal(p.SuccessCondition), exact(p.TimeboxSecs), allow)
	if p.Why != "" {
		fmt.Fprintf(w, "  why:         %s\n", inert.Terminal(p.Why))
	}
	fmt.Fprint(w, "Start it with: antidrift start --from-plan\n"+
		"Change a field as you start it, e.g.: antidrift start --from-plan --for 30m (NEXT_ACTION, --done-when, --allow, --enforce too)\n")
}

// keptProposal reads the Proposal property: the coach's proposal the
// daemon keeps in planning.
func (x *invocation) keptProposal() (proposal, error) {
	var v dbus.Variant
	if err := x.call(propertiesIface+".Get", []any{iface, "Proposal"}, &v); err != nil {
		return proposal{}, err
	}
	var p proposal
	if err := dbus.Store([]any{v.Value()}, &p); err != nil {
		return proposal{}, &exitError{code: exitRefused, msg: fmt.Sprintf("antidrift start: the daemon's Proposal is not one this antidrift reads: %v (is antidriftd the same version as antidrift %s?)", err, version)}
	}
	if p.NextAction == "" {
		return proposal{}, &exitError{code: exitRefused, msg: "antidrift start: --from-plan: there is no proposal to start from (none was made, or it went with a start, cancel-plan or a daemon restart).\nMake one with: antidrift plan --coach \"INTENTION\""}
	}
	return p, nil
}
