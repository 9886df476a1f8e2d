package service

import "github.com/antidrift/antidrift/service/rule"

// Quote quotes s for a message as %q does, but only its first 80
// characters (rule.Quote: a rule's refusal and the core's quote alike).
func Quote(s string) string { return rule.Quote(s) }

// clip cuts s to at most n characters, the last of them "…" when it cut.
func clip(s string, n int) string { return rule.Clip(s, n) }

// shellWord is s as one word a POSIX shell reads back exactly
// (rule.ShellWord).
func shellWord(s string) string { return rule.ShellWord(s) }
