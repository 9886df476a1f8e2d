package inert

import (
	"fmt"
	"unicode"
	"unicode/utf8"
)

// JSON is JSON text (as encoding/json writes it) with every character a
// terminal would act on inside its strings written as JSON's own \u
// escape. encoding/json escapes the C0 controls, U+2028 and U+2029, but
// writes DEL, the C1 controls (U+009B is CSI on its own) and the
// bidirectional controls as they are, so `--json` in a terminal would hand
// them to it. Such characters occur only inside strings, where \u00XX is
// the same character to every JSON reader: the data a script decodes stays
// exact.
func JSON(encoded []byte) []byte {
	i := indexActing(encoded)
	if i < 0 {
		return encoded
	}
	out := make([]byte, 0, len(encoded)+16)
	out = append(out, encoded[:i]...)
	for rest := encoded[i:]; len(rest) > 0; {
		r, size := utf8.DecodeRune(rest)
		if actsInJSON(r) {
			out = fmt.Appendf(out, `\u%04x`, r)
		} else {
			out = append(out, rest[:size]...)
		}
		rest = rest[size:]
	}
	return out
}

func indexActing(b []byte) int {
	for i := 0; i < len(b); {
		r, size := utf8.DecodeRune(b[i:])
		if actsInJSON(r) {
			return i
		}
		i += size
	}
	return -1
}

// actsInJSON says whether r is a character a terminal acts on that
// encoding/json leaves unescaped.
func actsInJSON(r rune) bool {
	return r == 0x7f || (r >= 0x80 && r <= 0x9f) || unicode.Is(unicode.Bidi_Control, r)
}
