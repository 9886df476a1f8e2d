package service

import (
	"strings"
	"unicode"
	"unicode/utf8"
)

// Volatile numbers are the parts of a title that tick: clocks (12:30),
// progress (45%), versions and sizes (3.5, -1.2.3). They are scrubbed from
// bucket keys so a video player's changing timestamp stays one bucket.
//
// The rule is the regular expression `-?\d+(([:.]\d+)+%?|%)`: the legacy
// `-?\d+([:.]\d+)+%?` plus a bare percentage (the legacy pattern needs a
// separator, so it left "45%" behind, which is exactly the ticking progress
// figure scrubbing is for). It is implemented by a scanner, because replay
// scrubs every title of a session and the regexp engine was most of its
// cost; a test holds the scanner to the regexp.

// ScrubTitle is a title as a bucket key: volatile numbers removed and the
// whitespace they leave behind collapsed. The raw log keeps the full title.
func ScrubTitle(title string) string {
	// Each match becomes a space, not nothing: removing it outright could
	// join its neighbours into a new number ("1:-5%3" → "1:3"), and
	// scrubbing a scrubbed title must change nothing.
	out := dropVolatile(title)
	if !needsFields(out) {
		return out
	}
	return strings.Join(strings.Fields(out), " ")
}

func isDigit(c byte) bool { return '0' <= c && c <= '9' }

// dropVolatile replaces every volatile number with a space, leftmost first,
// in one pass, and returns t itself (no allocation) when there is none.
func dropVolatile(t string) string {
	var b []byte
	last := 0 // t[last:i] is kept
	for i := 0; i < len(t); {
		if !isDigit(t[i]) {
			i++
			continue
		}
		start := i
		if start > 0 && t[start-1] == '-' && start-1 >= last {
			start--
		}
		j := i
		for j < len(t) && isDigit(t[j]) {
			j++
		}
		end, k := -1, j
		for k+1 < len(t) && (t[k] == ':' || t[k] == '.') && isDigit(t[k+1]) {
			for k += 2; k < len(t) && isDigit(t[k]); k++ {
			}
			end = k
		}
		if k < len(t) && t[k] == '%' {
			end = k + 1
		}
		if end < 0 { // digits, but not a volatile number: none starts inside them
			i = j
			continue
		}
		b = append(append(b, t[last:start]...), ' ')
		last, i = end, end
	}
	if b == nil {
		return t
	}
	return string(append(b, t[last:]...))
}

// needsFields reports whether strings.Join(strings.Fields(s), " ") would
// change s: whitespace other than single inner spaces.
func needsFields(s string) bool {
	if s == "" {
		return false
	}
	if s[0] == ' ' || s[len(s)-1] == ' ' {
		return true
	}
	for i := 0; i < len(s); i++ {
		switch c := s[i]; {
		case c >= utf8.RuneSelf:
			r, size := utf8.DecodeRuneInString(s[i:])
			if unicode.IsSpace(r) || r == utf8.RuneError {
				return true
			}
			i += size - 1
		case c == '\t', c == '\n', c == '\v', c == '\f', c == '\r':
			return true
		case c == ' ' && s[i+1] == ' ':
			return true
		}
	}
	return false
}
