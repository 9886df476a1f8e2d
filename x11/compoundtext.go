package x11

import (
	"bytes"
	"strings"
	"unicode/utf8"
)

// compoundText decodes COMPOUND_TEXT, the X Consortium's subset of ISO
// 2022 that Xlib writes into WM_NAME for a client that has no
// _NET_WM_NAME (Xt and Motif programs, an xterm without utf8Title). Left
// as bytes, a title such as "é → ✓" would reach the rules and the record as
// "\xe9 \x1b$(B\"*\x1b(B \x1b%G…": escapes a person never typed.
//
// Text starts with ASCII in GL (0x20–0x7f) and the right half of Latin-1
// in GR (0xa0–0xff); ESC ( B and ESC - A select them again; ESC % G …
// ESC % @ carries UTF-8, which Xlib uses for what no other charset holds.
// Text in any other charset (ESC - B for Latin-2, ESC $ ( B for JIS X 0208,
// and so on) needs its table, which antidrift does not carry: each run of
// it is one U+FFFD, so a person still sees where something was. The
// direction controls (CSI 1 ], CSI 2 ], CSI ]) and escapes that designate
// nothing say nothing of the text itself and are dropped; other controls
// are kept, to be made inert where the title is shown.
func compoundText(b []byte) string {
	var out strings.Builder
	gl, gr := true, true // ASCII in GL, Latin-1 in GR: what the decoder knows
	lost := false        // the last thing written was U+FFFD for a charset it does not know
	unknown := func() {
		if !lost {
			out.WriteRune(utf8.RuneError)
			lost = true
		}
	}
	for i := 0; i < len(b); {
		c := b[i]
		switch {
		case c == 0x1b:
			n, seq := escape(b[i:])
			i += n
			switch seq {
			case "%G": // UTF-8 up to ESC % @
				end := bytes.Index(b[i:], []byte("\x1b%@"))
				if end < 0 {
					end = len(b) - i
				}
				out.WriteString(strings.ToValidUTF8(string(b[i:i+end]), string(utf8.RuneError)))
				i += min(end+3, len(b)-i)
				lost = false
			case "(B":
				gl = true
			case "-A":
				gr = true
			case "":
			default:
				// A charset the decoder has no table for, into GL (ESC ( F,
				// ESC $ ( F) or GR (ESC ) F, ESC - F, ESC $ ) F, ESC $ - F).
				// Anything else designates nothing and is dropped.
				switch {
				case seq[0] == '(' || strings.HasPrefix(seq, "$("):
					gl = false
				case strings.ContainsRune(")-", rune(seq[0])) || strings.HasPrefix(seq, "$)") || strings.HasPrefix(seq, "$-"):
					gr = false
				}
			}
		case c == 0x9b: // CSI: a direction control, CSI [1|2] ]
			j := i + 1
			for j < len(b) && '0' <= b[j] && b[j] <= '9' {
				j++
			}
			if j < len(b) && b[j] == ']' {
				j++
			}
			i = j
		case c < 0x20 || c == 0x7f || (0x80 <= c && c < 0xa0):
			out.WriteByte(c) // a control: kept, and made inert where shown
			lost = false
			i++
		case c < 0x80 && gl, c >= 0xa0 && gr:
			out.WriteRune(rune(c)) // ASCII and Latin-1 are the first 256 code points
			lost = false
			i++
		default:
			unknown()
			i++
		}
	}
	return out.String()
}

// escape reads an ISO 2022 escape sequence at the start of b (ESC, then
// intermediate bytes 0x20–0x2f, then one final byte 0x30–0x7e) and returns
// its length and the bytes after ESC. A sequence cut short ends with b.
func escape(b []byte) (n int, seq string) {
	n = 1
	for n < len(b) && 0x20 <= b[n] && b[n] <= 0x2f {
		n++
	}
	if n < len(b) && 0x30 <= b[n] && b[n] <= 0x7e {
		n++
	}
	return n, string(b[1:n])
}
