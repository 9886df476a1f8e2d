package service

import (
	"fmt"
	"strings"
	"unicode"
	"unicode/utf8"
)

// MaxReasonLen bounds a judge's reason as DriftReason shows it, so a model
// that rambles cannot fill a panel or the Nudge signal.
const MaxReasonLen = 200

// rulesLocked judges window w, whose scrubbed, redacted title is title, by
// the rules a person wrote, strongest first: a window they marked "not a
// distraction" this session, then the distractions, then the session's
// allowed entries. decided is false when no rule covers w; then the judge
// port (if any) is asked, or the allowlist's default applies.
func (s *Service) rulesLocked(w Window, title string) (v Verdict, decided bool) {
	class := displayClass(w)
	if w.Site == BlockedPageSite {
		return Verdict{Task: TaskUnknown, Reason: "a page of antidrift's own extension is in front"}, true
	}
	if s.drift.exempt[judgeKey{class: strings.ToLower(class), title: title}] {
		return Verdict{Task: TaskOn, Reason: "you marked this " + class + " window as not a distraction"}, true
	}
	for _, r := range s.distractions {
		if r.matches(w, title) {
			return Verdict{Task: TaskOff, Reason: "matches distraction " + r.Text}, true
		}
	}
	for _, r := range s.rules {
		if !r.matches(w, title) {
			continue
		}
		if !r.Narrowed() {
			return Verdict{Task: TaskOn, Reason: fmt.Sprintf("%s is allowed in this session", class)}, true
		}
		return Verdict{Task: TaskOn, Reason: "matches allowed " + r.Text}, true
	}
	return Verdict{}, false
}

// undecidedLocked is the verdict on a window no rule covers when no judge
// port is configured: off task, since the session's allowlist does not
// name it — unless the session allows nothing, which judges nothing.
func (s *Service) undecidedLocked(w Window) Verdict {
	class := displayClass(w)
	if len(s.rules) == 0 {
		return Verdict{Task: TaskUnknown, Reason: "this session allows no window classes, so nothing is judged off task"}
	}
	for _, r := range s.rules {
		if r.matchesClass(w) {
			return Verdict{Task: TaskOff, Reason: fmt.Sprintf("this %s window matches none of this session's allowed titles", class)}
		}
	}
	for _, r := range s.rules {
		if r.Site() && w.Site != "" {
			return Verdict{Task: TaskOff, Reason: fmt.Sprintf("%s is not among this session's allowed sites", SiteHost(w.Site))}
		}
	}
	return Verdict{Task: TaskOff, Reason: fmt.Sprintf("%s is not in this session's allowlist", class)}
}

// cleanReason is a judge's reason as a person may see it: one line, no
// control characters and no bidirectional controls (each run of them, and
// of spaces, becomes one space), at most MaxReasonLen characters. A model's
// reason is text from outside, and a window title can talk a model into
// writing one: it must not be able to forge lines in a log or a panel,
// write escape sequences to a terminal, or reorder the text around it.
// Whoever renders DriftReason still makes it inert for its reader.
func cleanReason(r string) string {
	if !utf8.ValidString(r) {
		r = strings.ToValidUTF8(r, "�")
	}
	r = strings.Join(strings.FieldsFunc(r, func(c rune) bool {
		return unicode.IsSpace(c) || unicode.IsControl(c) || unicode.Is(unicode.Bidi_Control, c)
	}), " ")
	return clip(r, MaxReasonLen)
}

// displayClass is how a window is named to a person: its class, or its
// instance when the class is empty. Never its title, which is private.
func displayClass(w Window) string {
	switch {
	case w.Class != "":
		return w.Class
	case w.Instance != "":
		return w.Instance
	}
	return "this window"
}
