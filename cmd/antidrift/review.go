package main

import (
	"flag"
	"fmt"
	"math"

	"github.com/antidrift/antidrift/internal/inert"
)

var cmdReview = &command{
	name: "review", method: "ReviewProposals", also: []string{"ApplyProposal"},
	synopsis: "[--apply N]",
	summary:  "in review: the rule changes this session's evidence proposes; --apply N writes one to your rules file",
	setup:    setupReview,
}

// reviewProposal is one of ReviewProposals' (usss).
type reviewProposal struct {
	Number uint32 `json:"number"`
	Kind   string `json:"kind"`
	Change string `json:"change"`
	Reason string `json:"reason"`
}

func setupReview(fs *flag.FlagSet) func(*invocation) error {
	apply := fs.Uint("apply", 0, "apply proposal `N` (as numbered by 'antidrift review'): written to rules.toml beside your config.toml, used from the next session")
	return func(x *invocation) error {
		if *apply > math.MaxUint32 {
			return x.cmd.usageError("--apply %d is not a proposal's number", *apply)
		}
		applying := false
		fs.Visit(func(f *flag.Flag) { applying = applying || f.Name == "apply" })
		if applying {
			if *apply == 0 {
				return x.cmd.usageError("--apply takes a proposal's number, from 1")
			}
			var applied string
			if err := x.call("ApplyProposal", []any{uint32(*apply)}, &applied); err != nil {
				return err
			}
			if x.json {
				return x.printJSON(map[string]string{"applied": applied})
			}
			fmt.Fprintln(x.stdout, "Applied:", inert.Terminal(applied)+".")
			return nil
		}
		var list []reviewProposal
		if err := x.call("ReviewProposals", nil, &list); err != nil {
			return err
		}
		note := reviewNote(x)
		if x.json {
			if list == nil {
				list = []reviewProposal{}
			}
			return x.printJSON(map[string]any{"proposals": list, "note": note})
		}
		fmt.Fprint(x.stdout, reviewText(list, note))
		return nil
	}
}

// reviewNote is the model's note on the session, "" when there is none
// (or the daemon has no such property: an older one).
func reviewNote(x *invocation) string {
	c, err := x.client()
	if err != nil {
		return ""
	}
	v, err := c.obj.GetProperty("org.antidrift.Session1.ReviewNote")
	if err != nil {
		return ""
	}
	s, _ := v.Value().(string)
	return s
}

// reviewText is the proposals as a person reads them; every text from the
// daemon is made inert (class names and hosts are outside text).
func reviewText(list []reviewProposal, note string) string {
	var b []byte
	if len(list) == 0 {
		b = append(b, "This session's evidence proposes no change to your rules.\n"...)
	} else {
		b = append(b, "This session's evidence proposes:\n"...)
		for _, p := range list {
			b = fmt.Appendf(b, "%2d. %s: %s\n    %s\n", p.Number, inert.Terminal(p.Kind), inert.Terminal(p.Change), inert.Terminal(p.Reason))
		}
		b = append(b, "Nothing is applied unless you ask: 'antidrift review --apply N' writes one to rules.toml beside your config.toml.\n"...)
	}
	if note != "" {
		b = fmt.Appendf(b, "Note (from your model): %s\n", inert.Terminal(note))
	}
	return string(b)
}
