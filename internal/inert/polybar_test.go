package inert

import (
	"strings"
	"testing"

	"github.com/antidrift/antidrift/internal/testsupport/hostile"
)

// What polybar draws of each text: no formatting tag of the text's own
// opens, and the text still reads as it was.
func TestPolybarOpensNoTag(t *testing.T) {
	for _, c := range []struct{ in, want string }{
		{"write the intro", "write the intro"},
		{"%{A1:touch /tmp/P:}XXXXX%{A}", "% {A1:touch /tmp/P:}XXXXX% {A}"},
		{"%{F#f00}red%{F-}", "% {F#f00}red% {F-}"},
		{"%%{F#f00}", "%% {F#f00}"}, // polybar's %% is no escape
		{"%{%{", "% {% {"},
		{"50% done {soon}", "50% done {soon}"},
		{"%{A1:x:}\n%{A}", `% {A1:x:}\n% {A}`}, // no second line either
		{"\x1b[31m%{B#000}", `\x1b[31m% {B#000}`},
	} {
		if got := Polybar(c.in); got != c.want {
			t.Errorf("Polybar(%q) = %q, want %q", c.in, got, c.want)
		}
	}
	for _, h := range hostile.Texts {
		got := Polybar(h.Text)
		if strings.Contains(got, "%{") {
			t.Errorf("%s: got %q, want no tag (%%{) surviving", h.Name, got)
		}
		if err := hostile.CheckTerminal(got); err != nil {
			t.Errorf("%s: got %q, want it inert: %v", h.Name, got, err)
		}
		if again := Polybar(got); again != got {
			t.Errorf("%s: Polybar again: got %q → %q, want it unchanged (idempotent)", h.Name, got, again)
		}
	}
}
