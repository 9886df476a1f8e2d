package main

import (
	"log/slog"
	"strings"
	"testing"
	"time"

	"github.com/antidrift/antidrift/internal/testsupport/hostile"
)

// A line for the journal whose attribute is a hostile window class (the
// guard's "iconifying the drifting window failed"): MESSAGE, which
// journalctl -o cat prints as it is, holds nothing a terminal acts on and
// stays one line; the class's own field keeps it exact.
func TestJournalMessageIsInertAndFieldsExact(t *testing.T) {
	h := &journalHandler{level: slog.LevelInfo}
	for _, x := range hostile.Texts {
		r := slog.NewRecord(time.Now(), slog.LevelWarn, "iconifying the drifting window failed", 0)
		r.AddAttrs(slog.String("session_id", "s1"), slog.String("class", x.Text))
		text, vars := h.entry(r)
		if err := hostile.CheckTerminal(text); err != nil || strings.Contains(text, "\n") {
			t.Errorf("%s: MESSAGE %q: %v", x.Name, text, err)
		}
		if !strings.HasPrefix(text, "iconifying the drifting window failed session_id=s1 class=") {
			t.Errorf("%s: MESSAGE: got %q, want it to begin %q", x.Name, text, "iconifying the drifting window failed session_id=s1 class=")
		}
		if vars["ANTIDRIFT_CLASS"] != x.Text {
			t.Errorf("%s: ANTIDRIFT_CLASS is %q, want %q", x.Name, vars["ANTIDRIFT_CLASS"], x.Text)
		}
	}
}
