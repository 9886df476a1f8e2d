package inert

import (
	"strings"
	"testing"
	"unicode"

	"github.com/antidrift/antidrift/internal/testsupport/hostile"
)

// What Pango or a notification server with body markup draws of each
// text: the text itself, with no tag and no entity of its own read.
func TestMarkupIsReadAsTheTextItself(t *testing.T) {
	for _, c := range []struct{ in, want string }{
		{"write the intro", "write the intro"},
		{"<b>x</b> & y", "&lt;b&gt;x&lt;/b&gt; &amp; y"},
		{`<img src="http://127.0.0.1:9/x.png">`, `&lt;img src="http://127.0.0.1:9/x.png"&gt;`},
		{"&lt;b&gt;", "&amp;lt;b&amp;gt;"},
		{"a < b", "a &lt; b"},
	} {
		if got := Markup(c.in); got != c.want {
			t.Errorf("Markup(%q) = %q, want %q", c.in, got, c.want)
		}
	}
	// An XML reader (which Pango's GMarkup is) reads back exactly the
	// text, as character data, and no element.
	for _, h := range hostile.Texts {
		if strings.IndexFunc(h.Text, unicode.IsControl) >= 0 {
			continue // control characters are Terminal's part (XML has none, and reads CR as a newline)
		}
		read, elements, err := hostile.Markup(Markup(h.Text))
		if err != nil || elements != 0 || read != h.Text {
			t.Errorf("%s: markup %q: got it read as %q with %d elements (%v), want %q with none", h.Name, Markup(h.Text), read, elements, err, h.Text)
		}
	}
}
