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
		return "", invalid("%s must be valid UTF-8", name)
	}
	n := utf8.RuneCountInString(s)
	switch {
	case required && n == 0:
		return "", invalid("%s must not be empty (1–%d characters after trimming)", name, MaxTextLen)
	case n > MaxTextLen:
		return "", invalid("%s is %d characters; at most %d are allowed", name, n, MaxTextLen)
	case strings.IndexFunc(s, unicode.IsControl) >= 0:
		return "", invalid("%s must not contain control characters (newlines, tabs, escapes)", name)
	}
	return s, nil
}

// checkTimebox checks a duration in seconds against 1 s – 24 h.
func checkTimebox(name string, secs uint64) *Error {
	if secs < 1 || secs > uint64(MaxTimebox/time.Second) {
		return invalid("%s must be between 1 second and 24 hours (86400 s); got %d s", name, secs)
	}
	return nil
}

// parseLevel accepts one of observe, warn, block, locked. Empty is handled
// by the caller, because only Start gives it a meaning.
func parseLevel(name, s string) (Level, *Error) {
	l := Level(s)
	if l.rank() < 0 {
		return "", invalid("%s must be one of observe, warn, block, locked; got %s", name, Quote(s))
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
