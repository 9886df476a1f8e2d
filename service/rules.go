package service

import (
	"strings"

	"github.com/antidrift/antidrift/service/rule"
)

// Rules are written, parsed and matched as text in service/rule, which
// knows no Window: this file is the core's side of them, the Window-aware
// match and the refusals that name an argument.

// Rule is one entry of an allowlist or of the distractions (rule.Rule): a
// value compiled once where it enters the core, matched many times.
type Rule = rule.Rule

// RuleSyntax is the one-line description of a rule that every refusal of
// one ends with (rule.Syntax).
const RuleSyntax = rule.Syntax

// AppRulePrefix begins a rule that names an app by its desktop entry's id
// (rule.AppPrefix).
const AppRulePrefix = rule.AppPrefix

// SiteRulePrefix starts a rule about the page in front of a browser window
// (rule.SitePrefix).
const SiteRulePrefix = rule.SitePrefix

// ParseRule checks and compiles one entry (rule.Parse). Its error says
// what is wrong with the pattern, without naming the entry.
func ParseRule(text string) (Rule, error) { return rule.Parse(text) }

// LiteralRule is the entry that allows class itself, whatever it spells
// (rule.Literal).
func LiteralRule(class string) string { return rule.Literal(class) }

// FoldTitle folds the counters of title into "#" and collapses whitespace
// (rule.FoldTitle).
func FoldTitle(title string) string { return rule.FoldTitle(title) }

// subject is w as a rule sees it.
func subject(w Window) rule.Subject {
	return rule.Subject{Class: w.Class, Instance: w.Instance, App: w.App.ID, Site: w.Site, Title: w.Title}
}

// matchesClass reports whether r's class half matches w. A url: rule has
// none: it names pages, whichever browser shows them.
func matchesClass(r Rule, w Window) bool { return r.MatchesClass(subject(w)) }

// matches reports whether r covers window w (its title redacted) whose
// folded title is folded.
func matches(r Rule, w Window, folded string) bool { return r.Matches(subject(w), folded) }

// cleanRule checks one allowlist entry of the argument name (entry, from
// 1, of a list; 0 for window_class) and refuses a bad one naming the entry
// and the rule.
func cleanRule(name string, entry int, text string) (Rule, *Error) {
	r, err := ParseRule(text)
	if err != nil {
		return Rule{}, (&Fault{Argument: name, Entry: entry, Rule: RuleEntry, Got: strings.TrimSpace(text), Detail: err.Error() + "; " + RuleSyntax}).err()
	}
	return r, nil
}

// cleanRules checks a list of entries and drops case-insensitive
// duplicates, keeping the first spelling.
func cleanRules(name string, in []string) ([]string, []Rule, *Error) {
	if len(in) > MaxAllowed {
		return nil, nil, (&Fault{Argument: name, Rule: RuleEntries, Got: uint64(len(in)), Limit: MaxAllowed}).err()
	}
	texts, rules := make([]string, 0, len(in)), make([]Rule, 0, len(in))
	for i, c := range in {
		r, err := cleanRule(name, i+1, c)
		if err != nil {
			return nil, nil, err
		}
		if !containsFold(texts, r.Text) {
			texts, rules = append(texts, r.Text), append(rules, r)
		}
	}
	return texts, rules, nil
}

// compileRules compiles entries already checked (a snapshot's, the
// config's); one that no longer parses is skipped with a log line rather
// than refusing to recover.
func (s *Service) compileRules(what string, texts []string) []Rule {
	out := make([]Rule, 0, len(texts))
	for _, t := range texts {
		r, err := ParseRule(t)
		if err != nil {
			s.log.Warn("skipping an entry that is not a valid rule", "list", what, "entry", t, "err", err)
			continue
		}
		out = append(out, r)
	}
	return out
}
