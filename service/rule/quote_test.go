package rule

import (
	"strconv"
	"strings"
	"testing"
	"unicode/utf8"
)

// Quote is %q up to 80 characters; past them it keeps the first 80 whole
// characters (never half a rune) and says how long the argument was.
func TestQuoteCutsLongArgumentsAtACharacter(t *testing.T) {
	for _, tc := range []struct{ in, want string }{
		{"", `""`},
		{"warn\n", `"warn\n"`},
		{strings.Repeat("x", 80), strconv.Quote(strings.Repeat("x", 80))},
		{strings.Repeat("x", 81), strconv.Quote(strings.Repeat("x", 80)) + "… (81 bytes in all)"},
		{strings.Repeat("é", 100), strconv.Quote(strings.Repeat("é", 80)) + "… (200 bytes in all)"},
		{strings.Repeat("\xff", 1<<20), strconv.Quote(strings.Repeat("\xff", 80)) + "… (1048576 bytes in all)"},
	} {
		got := Quote(tc.in)
		if got != tc.want {
			t.Errorf("Quote(%.20q…) = %.120s, want %.120s", tc.in, got, tc.want)
		}
		if !utf8.ValidString(got) {
			t.Errorf("Quote(%.20q…): got %.120q, want valid UTF-8", tc.in, got)
		}
	}
}

// clip keeps at most n characters, the last "…" when it cut, and never
// half a rune.
func TestClipCutsAtACharacter(t *testing.T) {
	for _, tc := range []struct {
		in   string
		n    int
		want string
	}{
		{"", 3, ""},
		{"abc", 3, "abc"},
		{"abcd", 3, "ab…"},
		{"ééééé", 4, "ééé…"},
	} {
		if got := Clip(tc.in, tc.n); got != tc.want {
			t.Errorf("Clip(%q, %d) = %q, want %q", tc.in, tc.n, got, tc.want)
		}
	}
}
