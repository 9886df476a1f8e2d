package inert

import (
	"bytes"
	"encoding/json"
	"testing"

	"github.com/antidrift/antidrift/internal/testsupport/hostile"
)

// JSON printed to a terminal (--json) holds nothing the terminal acts on,
// and a script decodes exactly the text that went in.
func TestJSONIsInertAndDecodesExactly(t *testing.T) {
	texts := append([]hostile.Text{{Name: "DEL, C1, bidi together", Text: "a\x7f\u009b2J\u0085\u202e\u2066\u200f\u061c z"}}, hostile.Texts...)
	for _, h := range texts {
		var b bytes.Buffer
		enc := json.NewEncoder(&b)
		enc.SetEscapeHTML(false)
		if err := enc.Encode(map[string][]string{"title": {h.Text}}); err != nil {
			t.Fatal(err)
		}
		out := JSON(b.Bytes())
		if err := hostile.CheckTerminal(string(out)); err != nil {
			t.Errorf("%s: got %q, want it inert: %v", h.Name, out, err)
		}
		var back map[string][]string
		if err := json.Unmarshal(out, &back); err != nil || back["title"][0] != h.Text {
			t.Errorf("%s: %s decodes as %q (%v), want %q", h.Name, out, back["title"], err, h.Text)
		}
	}
	plain := []byte(`{"title":"main.go — Grüße 🎉"}`)
	if got := JSON(plain); &got[0] != &plain[0] {
		t.Errorf("plain JSON: got it copied, want the same bytes back")
	}
}
