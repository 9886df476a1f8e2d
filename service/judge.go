package service

import (
	"strings"
	"unicode"
	"unicode/utf8"
)

// MaxReasonLen bounds a judge's reason as DriftReason shows it, so a model
// that rambles cannot fill a panel or the Nudge signal.
const MaxReasonLen = 200

// maxJudged bounds the verdicts the judge is remembered for, so a session
// that sees thousands of titles keeps flat memory: past it the memory
// starts over.
const maxJudged = 1000

// awaitingJudge is the reason a window reads while a slow judge thinks
// about it.
const awaitingJudge = "judging…"

// judgeVerdictLocked is the judge's verdict on window w, keyed key (step 4
// of the path): the one it gave this session, or what it answers now. A
// slow judge answers later through late, and the window reads "judging…"
// meanwhile. Its on and off verdicts are remembered for the session, its
// unknown ones are not, so a judge that failed is asked again.
func (s *Service) judgeVerdictLocked(w Window, key verdictKey, late func(Verdict)) Verdict {
	if v, ok := s.drift.judged[key]; ok {
		return v
	}
	q := Question{NextAction: s.nextAction, SuccessCondition: s.successCond, Class: displayClass(w), Title: key.title, Site: key.site}
	v, ok := s.judge.Judge(q, late)
	if !ok {
		return Verdict{Task: TaskUnknown, Reason: awaitingJudge}
	}
	return s.rememberJudgedLocked(key, v)
}

// rememberJudgedLocked is the judge's verdict v on key as the core keeps
// it: its reason cleaned, and remembered for the session unless unknown.
func (s *Service) rememberJudgedLocked(key verdictKey, v Verdict) Verdict {
	v.Reason = cleanReason(v.Reason)
	if v.Task == TaskUnknown {
		return v
	}
	if len(s.drift.judged) >= maxJudged {
		clear(s.drift.judged)
	}
	s.drift.judged[key] = v
	return v
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
