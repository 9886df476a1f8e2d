package rule

import (
	"strings"
	"unicode"
	"unicode/utf8"
)

// Counters are the parts of a title that tick while the window stays the
// same thing: a chat's unread count ("(3) Inbox"), a page's running number
// ("Design doc 41"), a build's ("Build #1234"), progress ("45%", "3/10"),
// clock times and timers ("12:30", "1:45:00"), dates ("2026-12-01"),
// versions and sizes ("3.5", "1,234"). A session would otherwise see a new
// bucket every second, and a rule written for one reading would miss the
// next. See docs/accounting.md.
//
// FoldTitle folds each of them into the placeholder "#", by one rule:
//
//   - a number is a run of ASCII digits, with more runs joined to it by
//     one of : . , / - (so a clock, a date or a version is one number),
//     then an optional %; a sign or # right before it belongs to it;
//   - it is folded only when it stands on its own: no letter or digit
//     touches it on either side. "mp3", "h264", "Win11", "3rd" and "10k"
//     name things rather than count them, and stay;
//   - a counter alone in brackets, "(3)", "[12]", "(99+)", is a badge: it
//     is dropped with its brackets, because it vanishes when the count
//     reaches zero and "(3) Inbox" is the same page as "Inbox".
//
// Then whitespace is collapsed. The result is a title as a bucket key, a
// rule sees it, the judge is asked about it, and the summary keeps it; the
// raw log keeps the full title. Folding a folded title changes nothing.
const placeholder = "#"

// FoldTitle folds the counters of title into "#" and collapses whitespace.
// It returns title itself (no allocation) when there is nothing to fold.
func FoldTitle(title string) string {
	out := foldCounters(title)
	if !needsFields(out) {
		return out
	}
	return strings.Join(strings.Fields(out), " ")
}

func isDigit(c byte) bool { return '0' <= c && c <= '9' }

// wordRune reports whether r glues to a number next to it.
func wordRune(r rune) bool { return unicode.IsLetter(r) || unicode.IsDigit(r) }

// foldCounters replaces every counter with "#" (a badge with a space), in
// one pass left to right.
func foldCounters(t string) string {
	var b []byte
	last := 0 // t[last:] is not yet copied to b
	for i := 0; i < len(t); {
		if !isDigit(t[i]) {
			i++
			continue
		}
		start, end := i, numberEnd(t, i)
		if start > 0 && strings.IndexByte("-+#", t[start-1]) >= 0 && start-1 >= last && !glued(t, start-1, start-1) {
			start-- // a sign or # of its own belongs to the number
		}
		if glued(t, start, end) {
			i = end
			for i < len(t) && isDigit(t[i]) {
				i++
			}
			continue
		}
		repl := placeholder
		if bs, be, ok := badge(t, start, end, last); ok {
			start, end, repl = bs, be, " "
		}
		b = append(append(b, t[last:start]...), repl...)
		last, i = end, end
	}
	if b == nil {
		return t
	}
	return string(append(b, t[last:]...))
}

// numberEnd is where the number whose first digit is t[i] ends: digit
// runs joined by single separators, then an optional %.
func numberEnd(t string, i int) int {
	for i < len(t) && isDigit(t[i]) {
		i++
	}
	for i+1 < len(t) && strings.IndexByte(":.,/-", t[i]) >= 0 && isDigit(t[i+1]) {
		for i++; i < len(t) && isDigit(t[i]); i++ {
		}
	}
	if i < len(t) && t[i] == '%' {
		i++
	}
	return i
}

// glued reports whether a letter or digit touches t[start:end].
func glued(t string, start, end int) bool {
	if start > 0 {
		if r, _ := utf8.DecodeLastRuneInString(t[:start]); wordRune(r) {
			return true
		}
	}
	if end < len(t) {
		if r, _ := utf8.DecodeRuneInString(t[end:]); wordRune(r) {
			return true
		}
	}
	return false
}

// badge reports whether the number t[start:end] is alone in brackets,
// optionally with a + after it, and if so the span of the brackets. The
// opening bracket must not have been copied yet (at or after last).
func badge(t string, start, end, last int) (int, int, bool) {
	if start == 0 || start-1 < last || end >= len(t) {
		return 0, 0, false
	}
	closeAt := end
	if t[closeAt] == '+' && closeAt+1 < len(t) {
		closeAt++
	}
	switch {
	case t[start-1] == '(' && t[closeAt] == ')', t[start-1] == '[' && t[closeAt] == ']':
		return start - 1, closeAt + 1, true
	}
	return 0, 0, false
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
