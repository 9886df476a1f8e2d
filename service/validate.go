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
		return "", invalid("%s must be one of observe, warn, block, locked; got %q", name, s)
	}
	return l, nil
}

// cleanClass checks one window class.
func cleanClass(c string) (string, *Error) {
	c = strings.TrimSpace(c)
	n := utf8.RuneCountInString(c)
	switch {
	case !utf8.ValidString(c):
		return "", invalid("window class must be valid UTF-8")
	case n == 0 || n > MaxClassLen:
		return "", invalid("window class must be 1–%d characters; got %d", MaxClassLen, n)
	case strings.IndexFunc(c, unicode.IsControl) >= 0:
		return "", invalid("window class %q must not contain control characters", c)
	}
	return c, nil
}

// cleanClasses checks a list of classes and drops case-insensitive
// duplicates, keeping the first spelling.
func cleanClasses(in []string) ([]string, *Error) {
	if len(in) > MaxAllowed {
		return nil, invalid("allowed_classes has %d entries; at most %d are allowed", len(in), MaxAllowed)
	}
	out := make([]string, 0, len(in))
	for _, c := range in {
		c, err := cleanClass(c)
		if err != nil {
			return nil, err
		}
		if !containsFold(out, c) {
			out = append(out, c)
		}
	}
	return out, nil
}

func containsFold(list []string, s string) bool {
	for _, x := range list {
		if strings.EqualFold(x, s) {
			return true
		}
	}
	return false
}
