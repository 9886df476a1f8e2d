package service

import (
	"strings"
	"time"
	"unicode"
	"unicode/utf8"
)

// The limits a caller can hit. They are generous for a person and keep a
// buggy or hostile client from growing the daemon's memory or files.
const (
	MaxTextLen          = 500 // next action, success condition, reasons
	MaxTimebox          = 24 * time.Hour
	MaxAllowed          = 64
	MaxClassLen         = 256
	MaxHistoryLimit     = 1000
	DefaultHistoryLimit = 50
)

// cleanText trims s and checks it against the text rule; name is the
// argument's name as the caller knows it.
func cleanText(name, s string, required bool) (string, *Error) {
	s = strings.TrimSpace(s)
	if !utf8.ValidString(s) {
		return "", (&Fault{Argument: name, Rule: RuleUTF8}).err()
	}
	n := utf8.RuneCountInString(s)
	switch {
	case required && n == 0:
		return "", (&Fault{Argument: name, Rule: RuleEmpty, Limit: MaxTextLen}).err()
	case n > MaxTextLen:
		return "", (&Fault{Argument: name, Rule: RuleLength, Got: uint64(n), Limit: MaxTextLen}).err()
	case strings.IndexFunc(s, unicode.IsControl) >= 0:
		return "", (&Fault{Argument: name, Rule: RuleControl}).err()
	}
	return s, nil
}

// checkTimebox checks a duration in seconds against 1 s – 24 h.
func checkTimebox(name string, secs uint64) *Error {
	if secs < 1 || secs > uint64(MaxTimebox/time.Second) {
		return (&Fault{Argument: name, Rule: RuleTimebox, Got: secs, Limit: int64(MaxTimebox / time.Second)}).err()
	}
	return nil
}

// parseLevel accepts one of observe, warn, block, locked. Empty is handled
// by the caller, because only Start gives it a meaning.
func parseLevel(name, s string) (Level, *Error) {
	l := Level(s)
	if l.rank() < 0 {
		return "", (&Fault{Argument: name, Rule: RuleLevel, Got: s}).err()
	}
	return l, nil
}

func containsFold(list []string, s string) bool {
	for _, x := range list {
		if strings.EqualFold(x, s) {
			return true
		}
	}
	return false
}
