// Package hostile is the text an attacker who controls a window title or a
// pasted task name would write, for the tests of every place such text is
// shown (a terminal, polybar, Pango, a notification, QML), and the check
// that what a terminal reader got holds none of it.
package hostile

import (
	"encoding/xml"
	"fmt"
	"io"
	"strings"
	"unicode"
	"unicode/utf8"
)

// A Text is one hostile string, and what it attacks.
type Text struct {
	Name string // what it is, for a test's name
	Text string
}

// Texts are the hostile strings, each for a reader that would act on it.
var Texts = []Text{
	{"OSC 52 clipboard, OSC 2 title, CSI clear", "\x1b]52;c;ZWNobyBwd25lZA==\x07\x1b]2;PWNED\x07\x1b[2J\x1b[Hfake"},
	{"OSC 0 title ended by ST", "\x1b]0;owned\x1b\\tab"},
	{"OSC 8 hyperlink", "\x1b]8;;http://evil.example/\x07click me\x1b]8;;\x07"},
	{"CSI colour and cursor moves", "\x1b[31mred\x1b[0m \x1b[1A\x1b[2K\x1b[10Cmoved"},
	{"a lone ESC", "before\x1bafter"},
	{"BEL", "ring\x07ring"},
	{"C1 CSI U+009B", "c1\u009b2Jclear"},
	{"DEL", "del\x7fete"},
	{"CR overwriting the line", "innocent\rEVIL"},
	{"newline forging a line", "one\ntwo"},
	{"tab", "col\tumn"},
	{"RLO U+202E", "invoice\u202efdp.exe"},
	{"isolates U+2066-U+2069", "\u2066lri\u2069 \u2067rli\u2069 \u2068fsi\u2069"},
	{"polybar click command", "%{A1:touch /tmp/P:}XXXXX%{A}"},
	{"polybar colour", "%{F#f00}red%{F-}"},
	{"markup image", `<img src="http://127.0.0.1:9/x.png">`},
	{"markup link", `<a href="http://evil.example/">click me</a>`},
	{"markup bold and ampersand", "<b>x</b> & y"},
	{"an entity", "&lt;b&gt;"},
	{"unterminated <", "a < b"},
}

// CheckTerminal says what in out (a terminal program's whole output) a
// terminal would act on rather than draw: any C0 control but the newline,
// DEL, a C1 control, a bidirectional control, a line or paragraph
// separator, or a byte that is not UTF-8. It reads out byte by byte and
// names the first, with where it is; nil when there is none.
func CheckTerminal(out string) error {
	for i := 0; i < len(out); {
		r, size := utf8.DecodeRuneInString(out[i:])
		switch {
		case r == utf8.RuneError && size == 1:
			return fmt.Errorf("byte %d is 0x%02x, not UTF-8: %q", i, out[i], around(out, i))
		case r != '\n' && (unicode.IsControl(r) || unicode.Is(unicode.Bidi_Control, r) || r == '\u2028' || r == '\u2029'):
			return fmt.Errorf("byte %d is %U, which a terminal acts on: %q", i, r, around(out, i))
		}
		i += size
	}
	return nil
}

// around is out near byte i, for a message.
func around(out string, i int) string {
	return out[max(0, i-30):min(len(out), i+30)]
}

// Markup is what a reader of XML-style markup (Pango, as waybar and dunst
// use it; a notification body) draws of markup: its character data, and
// how many elements (tags) it read. err says the markup does not parse, so
// such a reader draws something else (dunst: the text with tags stripped).
func Markup(markup string) (text string, elements int, err error) {
	dec := xml.NewDecoder(strings.NewReader("<markup>" + markup + "</markup>"))
	var b strings.Builder
	elements = -1 // the root it is wrapped in
	for {
		tok, err := dec.Token()
		if err == io.EOF {
			return b.String(), elements, nil
		}
		if err != nil {
			return "", 0, err
		}
		switch tok := tok.(type) {
		case xml.StartElement:
			elements++
		case xml.CharData:
			b.Write(tok)
		}
	}
}
