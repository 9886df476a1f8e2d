package inert

import (
	"fmt"
	"strings"
	"unicode"
	"unicode/utf8"
)

// Terminal is s as a terminal may print it on one line: every character a
// terminal would act on instead of drawing is replaced by its escape,
// visibly, so a person sees that something was there and what:
//
//   - the C0 controls, DEL and the C1 controls (ESC, BEL, CR, a newline, a
//     tab, U+009B which is CSI on its own): \x1b, \a, \r, \n, \t, \u009b…
//   - the bidirectional controls (U+061C, U+200E, U+200F, U+202A–U+202E,
//     U+2066–U+2069), which reorder what follows them: \u202e…
//   - the line and paragraph separators U+2028 and U+2029: \u2028.
//   - a byte that is not UTF-8 (a terminal may read 0x9b as CSI): \x9b.
//
// Nothing else changes: a backslash stays a backslash, so the escapes are
// for reading, not for parsing back. An escape sequence (OSC 52 setting
// the clipboard, OSC 8 links, CSI clearing the screen) arrives without its
// ESC and is shown as the text it is.
func Terminal(s string) string { return terminal(s, false) }

// TerminalLines is Terminal for a message of several lines: the newline
// stays, every other control is escaped.
func TerminalLines(s string) string { return terminal(s, true) }

func terminal(s string, keepNewline bool) string {
	i := strings.IndexFunc(s, func(r rune) bool { return r == utf8.RuneError || acts(r, keepNewline) })
	if i < 0 {
		return s
	}
	var b strings.Builder
	b.Grow(len(s) + 8)
	b.WriteString(s[:i])
	for rest := s[i:]; rest != ""; {
		r, size := utf8.DecodeRuneInString(rest)
		switch {
		case r == utf8.RuneError && size == 1:
			fmt.Fprintf(&b, `\x%02x`, rest[0])
		case acts(r, keepNewline):
			b.WriteString(escape(r))
		default:
			b.WriteString(rest[:size])
		}
		rest = rest[size:]
	}
	return b.String()
}

// acts says whether a terminal acts on r rather than drawing it.
func acts(r rune, keepNewline bool) bool {
	switch {
	case r == '\n':
		return !keepNewline
	case unicode.IsControl(r), unicode.Is(unicode.Bidi_Control, r):
		return true
	}
	return r == '\u2028' || r == '\u2029'
}

// escape is r as Go writes it in a string literal: the short escapes a
// person knows (\n, \t, \r), else \x1b for an ASCII control and \u202e
// for the rest.
func escape(r rune) string {
	if e, ok := shortEscapes[r]; ok {
		return e
	}
	if r < 0x80 {
		return fmt.Sprintf(`\x%02x`, r)
	}
	return fmt.Sprintf(`\u%04x`, r)
}

var shortEscapes = map[rune]string{'\a': `\a`, '\b': `\b`, '\f': `\f`, '\n': `\n`, '\r': `\r`, '\t': `\t`, '\v': `\v`}
