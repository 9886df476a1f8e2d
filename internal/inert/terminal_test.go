package inert

import (
	"testing"

	"github.com/antidrift/antidrift/internal/testsupport/hostile"
)

// What a person sees in their terminal of each hostile text: the escapes
// written out, the rest as it came.
func TestTerminalShowsWhatATerminalWouldActOn(t *testing.T) {
	for _, c := range []struct{ in, want string }{
		{"main.go - editor", "main.go - editor"},
		{"\x1b]52;c;ZWNobyBwd25lZA==\x07\x1b]2;PWNED\x07\x1b[2J\x1b[Hfake", `\x1b]52;c;ZWNobyBwd25lZA==\a\x1b]2;PWNED\a\x1b[2J\x1b[Hfake`},
		{"\x1b]0;owned\x1b\\tab", `\x1b]0;owned\x1b\tab`},
		{"\x1b]8;;http://evil.example/\x07click me\x1b]8;;\x07", `\x1b]8;;http://evil.example/\aclick me\x1b]8;;\a`},
		{"\x1b[31mred\x1b[0m \x1b[1A", `\x1b[31mred\x1b[0m \x1b[1A`},
		{"before\x1bafter", `before\x1bafter`},
		{"c1\u009b2Jclear", `c1\u009b2Jclear`},
		{"c1\u00852", `c1\u00852`}, // NEL
		{"del\x7fete", `del\x7fete`},
		{"innocent\rEVIL", `innocent\rEVIL`},
		{"one\ntwo\tthree\x00", `one\ntwo\tthree\x00`},
		{"invoice\u202efdp.exe", `invoice\u202efdp.exe`},
		{"\u2066a\u2069\u2067b\u2068c\u200f\u061c", `\u2066a\u2069\u2067b\u2068c\u200f\u061c`},
		{"para\u2028graph\u2029", `para\u2028graph\u2029`},
		{"bad \x9b byte \xff", `bad \x9b byte \xff`},
		// What a terminal draws stays: other languages, symbols, emoji,
		// the replacement character itself, a backslash.
		{"Grüße · 日本語 ✓ 🎉 � C:\\Users", "Grüße · 日本語 ✓ 🎉 � C:\\Users"},
		{"%{A1:touch /tmp/P:}X%{A} <b>&</b>", "%{A1:touch /tmp/P:}X%{A} <b>&</b>"},
	} {
		if got := Terminal(c.in); got != c.want {
			t.Errorf("Terminal(%q) = %q, want %q", c.in, got, c.want)
		}
	}
}

// A message of several lines keeps its lines; nothing else gets through.
func TestTerminalLinesKeepsTheNewlinesOnly(t *testing.T) {
	in := "The audit log is broken:\nline 3: \x1b[2J\r\u202e"
	want := "The audit log is broken:\nline 3: \\x1b[2J\\r\\u202e"
	if got := TerminalLines(in); got != want {
		t.Errorf("TerminalLines(%q) = %q, want %q", in, got, want)
	}
}

// Every hostile text reaches the terminal with nothing in it the terminal
// acts on, nothing dropped silently (it only grows), and made inert twice
// it reads the same.
func TestTerminalDisarmsEveryHostileText(t *testing.T) {
	for _, h := range hostile.Texts {
		got := Terminal(h.Text)
		if err := hostile.CheckTerminal(got); err != nil {
			t.Errorf("%s: got %q, want it inert: %v", h.Name, got, err)
		}
		if len(got) < len(h.Text) {
			t.Errorf("%s: Terminal(%q): got %q, want no text dropped", h.Name, h.Text, got)
		}
		if again := Terminal(got); again != got {
			t.Errorf("%s: Terminal again: got %q → %q, want it unchanged (idempotent)", h.Name, got, again)
		}
	}
}

// A title with nothing to escape, the everyday case of every status line,
// comes back as it is, without a copy.
func TestTerminalLeavesPlainTextAlone(t *testing.T) {
	title := "main.go — antidrift — Visual Studio Code"
	if n := testing.AllocsPerRun(100, func() { _ = Terminal(title) }); n != 0 {
		t.Errorf("allocations of Terminal of a plain title: got %v, want 0", n)
	}
}
