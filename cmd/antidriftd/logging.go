package main

import (
	"context"
	"io"
	"log/slog"
	"os"
	"strings"

	"github.com/coreos/go-systemd/v22/journal"

	"github.com/antidrift/antidrift/internal/inert"
)

// newLogger logs to the journal with structured fields when stderr is the
// journal stream (running under systemd), and as text on stderr otherwise.
// Window titles are never logged above debug level, by the callers.
func newLogger(stderr io.Writer) *slog.Logger {
	if stderr == nil {
		stderr = os.Stderr
	}
	if ok, _ := journal.StderrIsJournalStream(); ok && stderr == os.Stderr {
		return slog.New(&journalHandler{level: slog.LevelInfo})
	}
	return slog.New(slog.NewTextHandler(stderr, &slog.HandlerOptions{Level: slog.LevelInfo}))
}

// journalHandler sends each record to journald natively, so attributes
// become fields a person can filter on: session_id becomes
// ANTIDRIFT_SESSION_ID, state becomes ANTIDRIFT_STATE.
type journalHandler struct {
	level slog.Level
	attrs []slog.Attr
	group string
}

func (h *journalHandler) Enabled(_ context.Context, l slog.Level) bool { return l >= h.level }

func (h *journalHandler) Handle(_ context.Context, r slog.Record) error {
	text, vars := h.entry(r)
	return journal.Send(text, priority(r.Level), vars)
}

// entry is r as the journal gets it: MESSAGE, the line journalctl prints,
// with each attribute as key=value, and each attribute as its own field.
// An attribute may be text from outside (a window class is its program's
// choice), and journalctl -o cat or -a prints MESSAGE as it is: there it is
// made inert (inert.Terminal, one line), while its field keeps it exact.
func (h *journalHandler) entry(r slog.Record) (string, map[string]string) {
	vars := map[string]string{"SYSLOG_IDENTIFIER": "antidriftd"}
	var text strings.Builder
	text.WriteString(inert.TerminalLines(r.Message))
	add := func(a slog.Attr) {
		v := a.Value.Resolve().String()
		vars[fieldName(h.group, a.Key)] = v
		text.WriteString(" " + a.Key + "=" + inert.Terminal(v))
	}
	for _, a := range h.attrs {
		add(a)
	}
	r.Attrs(func(a slog.Attr) bool { add(a); return true })
	return text.String(), vars
}

func (h *journalHandler) WithAttrs(as []slog.Attr) slog.Handler {
	n := *h
	n.attrs = append(append([]slog.Attr(nil), h.attrs...), as...)
	return &n
}

func (h *journalHandler) WithGroup(name string) slog.Handler {
	n := *h
	n.group = strings.TrimPrefix(h.group+"_"+name, "_")
	return &n
}

// fieldName turns an attribute key into a journal field name: upper case
// letters, digits and underscores, prefixed ANTIDRIFT_ (except MESSAGE_ID,
// which is journald's).
func fieldName(group, key string) string {
	if key == "MESSAGE_ID" && group == "" {
		return key // journald's own field: the catalog id of the entry
	}
	name := "ANTIDRIFT_" + strings.TrimPrefix(group+"_"+key, "_")
	return strings.Map(func(r rune) rune {
		switch {
		case r >= 'a' && r <= 'z':
			return r - 'a' + 'A'
		case r >= 'A' && r <= 'Z', r >= '0' && r <= '9':
			return r
		}
		return '_'
	}, name)
}

func priority(l slog.Level) journal.Priority {
	switch {
	case l >= slog.LevelError:
		return journal.PriErr
	case l >= slog.LevelWarn:
		return journal.PriWarning
	case l >= slog.LevelInfo:
		return journal.PriInfo
	}
	return journal.PriDebug
}
