// Package rule is the core's text layer: the rules a person writes
// (CLASS, CLASS:TITLE-GLOB, url:HOST[/PATH], app:DESKTOP-ID), parsed and
// matched as pure text; the folding of a title's counters (FoldTitle),
// which a bucket key, a rule and the judge all see; and the quoting every
// refusal uses (Quote, Clip, ShellWord), since a rule's refusal quotes
// what it refuses as the core's do.
//
// It imports nothing of ours and knows none of the core's types: a rule
// is matched against a Subject, the few strings of a window it reads. The
// core (package service) wraps it for its Window and its named refusals,
// and re-exports what its callers use (service.ParseRule, service.Rule,
// service.FoldTitle, service.Quote, ...), so config, report and the CLI
// need not import this package. The arrow points one way: service imports
// rule, never the reverse (TestTheCoreImportsOnlyItsRuleLayerAndThatNothing).
package rule
