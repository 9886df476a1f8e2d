package service

import (
	"strings"
	"testing"
	"unicode/utf8"
)

// A model's reason becomes DriftReason only as one plain line: no control
// character (an escape sequence loses its ESC, a newline is a space), no
// bidirectional control, valid UTF-8, at most MaxReasonLen characters.
func TestModelReasonIsOnePlainLine(t *testing.T) {
	for _, c := range []struct{ in, want string }{
		{"a video site", "a video site"},
		{"\x1b]52;c;ZWNobyBwd25lZA==\x07\x1b[2Jfake", "]52;c;ZWNobyBwd25lZA== [2Jfake"},
		{"one\ntwo\r\nthree\tfour", "one two three four"},
		{"c1\u009bclear del\x7f", "c1 clear del"},
		{"invoice\u202efdp.exe", "invoice fdp.exe"},
		{"\u2066isolated\u2069 \u2067too\u2068\u200f", "isolated too"},
		{"line\u2028sep\u2029", "line sep"},
		{"bad \xff byte", "bad � byte"},
		{"<b>x</b> & %{A1:y:}", "<b>x</b> & %{A1:y:}"}, // markup is the renderers' part
	} {
		if got := cleanReason(c.in); got != c.want {
			t.Errorf("cleanReason(%q) = %q, want %q", c.in, got, c.want)
		}
	}
	if got := cleanReason(strings.Repeat("x", 3*MaxReasonLen)); utf8.RuneCountInString(got) != MaxReasonLen {
		t.Errorf("a long reason is %d characters, want %d", utf8.RuneCountInString(got), MaxReasonLen)
	}
}
