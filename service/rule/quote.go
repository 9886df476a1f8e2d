package rule

import (
	"fmt"
	"strconv"
	"strings"
	"unicode"
	"unicode/utf8"
)

// maxQuoted is how many characters of an argument a refusal quotes.
const maxQuoted = 80

// Quote quotes s for a message as %q does, but only its first 80
// characters: a refusal must stay readable however large the argument it
// refuses (a 1 MiB string is named by its start and its size, not echoed
// whole into a reply, a log line or a terminal).
func Quote(s string) string {
	start, cut := runePrefix(s, maxQuoted)
	if !cut {
		return strconv.Quote(s)
	}
	return fmt.Sprintf("%s… (%d bytes in all)", strconv.Quote(start), len(s))
}

// runePrefix is s's first n characters (runes; a byte of invalid UTF-8
// counts as one), and whether that left some out.
func runePrefix(s string, n int) (string, bool) {
	cut := 0
	for i := 0; i < n; i++ {
		if cut == len(s) {
			return s, false
		}
		_, size := utf8.DecodeRuneInString(s[cut:])
		cut += size
	}
	return s[:cut], cut < len(s)
}

// Clip cuts s to at most n characters, the last of them "…" when it cut.
func Clip(s string, n int) string {
	if start, cut := runePrefix(s, n); cut {
		s, _ = runePrefix(start, n-1)
		return s + "…"
	}
	return s
}

// ShellWord is s as one word a POSIX shell reads back exactly, for a
// command a person is told to run: as it is when it holds only characters
// no shell treats specially, else in single quotes. A window's class in
// "antidrift allow CLASS" must not run $(…) or expand * when pasted.
func ShellWord(s string) string {
	plain := func(r rune) bool {
		return r < utf8.RuneSelf && (unicode.IsLetter(r) || unicode.IsDigit(r) || strings.ContainsRune("-_./:@%+,", r))
	}
	if s != "" && strings.IndexFunc(s, func(r rune) bool { return !plain(r) }) < 0 {
		return s
	}
	return "'" + strings.ReplaceAll(s, "'", `'\''`) + "'"
}
