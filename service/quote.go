package service

import (
	"fmt"
	"strconv"
	"unicode/utf8"
)

// maxQuoted is how many characters of an argument a refusal quotes.
const maxQuoted = 80

// Quote quotes s for a message as %q does, but only its first 80
// characters: a refusal must stay readable however large the argument it
// refuses (a 1 MiB string is named by its start and its size, not echoed
// whole into a reply, a log line or a terminal).
func Quote(s string) string {
	if utf8.RuneCountInString(s) <= maxQuoted {
		return strconv.Quote(s)
	}
	cut, n := 0, 0
	for cut < len(s) && n < maxQuoted {
		_, size := utf8.DecodeRuneInString(s[cut:])
		cut += size
		n++
	}
	return fmt.Sprintf("%s… (%d bytes in all)", strconv.Quote(s[:cut]), len(s))
}
