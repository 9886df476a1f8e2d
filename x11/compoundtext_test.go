package x11

import (
	"fmt"
	"strings"
	"testing"

	"github.com/antidrift/antidrift/internal/testsupport/testenv"
	"github.com/antidrift/antidrift/service"
)

// What Xlib writes for a WM_NAME in COMPOUND_TEXT comes out as the text it
// was, as far as antidrift knows the charsets; the first row's bytes are
// what xprop -f WM_NAME 8t wrote for "é → ✓ ü" under C.UTF-8 (Latin-1 in
// GR, the arrow in JIS X 0208, the check mark as a UTF-8 segment).
func TestCompoundTextDecoding(t *testing.T) {
	for _, c := range []struct {
		name string
		in   string
		want string
	}{
		{"what xprop wrote", "\xe9 \x1b$(B\"*\x1b(B \x1b%G\xe2\x9c\x93\x1b%@ \xfc", "é \uFFFD ✓ ü"},
		{"plain ASCII", "main.go - editor", "main.go - editor"},
		{"Latin-1 selected again", "\x1b-Acaf\xe9", "café"},
		{"a UTF-8 segment left open", "a \x1b%G\xe2\x86\x92", "a →"},
		{"invalid UTF-8 in a segment", "\x1b%Gok\xff\x1b%@!", "ok\uFFFD!"},
		{"Latin-2 in GR is one U+FFFD per run", "x\x1b-B\xb1\xb3y\x1b-A\xe9", "x\uFFFDy\u00e9"},
		{"direction controls dropped", "\x9b1]abc\x9b]", "abc"},
		{"an escape that designates nothing is dropped", "a\x1b[31mb", "a31mb"},
		{"a control is kept, to be made inert where shown", "a\tb\x85", "a\tb\x85"},
		{"an escape cut short", "abc\x1b$", "abc"},
	} {
		if got := compoundText([]byte(c.in)); got != c.want {
			t.Errorf("%s: compoundText(%q): got %q, want %q", c.name, c.in, got, c.want)
		}
	}
}

// A window with no _NET_WM_NAME is named by its WM_NAME, which Xlib writes
// in COMPOUND_TEXT for text that is not Latin-1: the sensor reports the
// title a person set, not the escapes it was encoded in.
func TestSensorDecodesACompoundTextTitle(t *testing.T) {
	testenv.Need(t, "Xvfb", "xterm", "xdotool", "xprop")
	d := testenv.StartX(t)
	id := d.XTerm(t, "Legacy", "before")
	s := startSensor(t, d.Name)
	d.Activate(t, id)
	s.next(t, "the legacy window", isWindow(id))
	win := fmt.Sprint(id)
	if _, err := d.Run(t, "xprop", "-id", win, "-remove", "_NET_WM_NAME"); err != nil {
		t.Fatal(err)
	}
	if _, err := d.Run(t, "env", "LC_ALL=C.UTF-8", "xprop", "-id", win, "-f", "WM_NAME", "8t", "-set", "WM_NAME", "café ✓ naïve"); err != nil {
		t.Fatal(err)
	}
	if out, _ := d.Run(t, "xprop", "-id", win, "WM_NAME", "_NET_WM_NAME"); !strings.Contains(out, "WM_NAME(COMPOUND_TEXT)") {
		t.Fatalf("the window's names: got %q, want WM_NAME typed COMPOUND_TEXT", out)
	}
	w := s.next(t, "the COMPOUND_TEXT title", func(w service.Window) bool { return w.ID == xh(id) && w.Title != "before" })
	if want := "café ✓ naïve"; w.Title != want {
		t.Errorf("Title: got %q, want %q", w.Title, want)
	}
}
