package service

import (
	"fmt"
	"strings"
)

// ruleVerdictLocked decides window w, keyed key, by the rules a person
// wrote, strongest first (step 3 of the path): a window they marked "not a
// distraction" this session, then the distractions, then the session's
// allowed entries. decided is false when no rule covers w; then the judge
// (if any) is asked, or the allowlist's default applies.
func (s *Service) ruleVerdictLocked(w Window, key verdictKey) (v Verdict, decided bool) {
	class, name := displayClass(w), displayName(w)
	if w.Site == BlockedPageSite {
		return Verdict{Task: TaskUnknown, Reason: "a page of antidrift's own extension is in front"}, true
	}
	if s.drift.exempt[exemptKey(class, key.title)] {
		return Verdict{Task: TaskOn, Reason: "you marked this " + name + " window as not a distraction"}, true
	}
	for _, r := range s.distractions {
		if matches(r, w, key.title) {
			return Verdict{Task: TaskOff, Reason: "matches distraction " + r.Text}, true
		}
	}
	for _, r := range s.rules {
		if !matches(r, w, key.title) {
			continue
		}
		if !r.Narrowed() {
			return Verdict{Task: TaskOn, Reason: fmt.Sprintf("%s is allowed in this session", name)}, true
		}
		return Verdict{Task: TaskOn, Reason: "matches allowed " + r.Text}, true
	}
	return Verdict{}, false
}

// allowlistVerdictLocked is the verdict on a window no rule covers when no
// judge is configured: off task, since the session's allowlist does not
// name it — unless the session allows nothing, which decides nothing.
func (s *Service) allowlistVerdictLocked(w Window) Verdict {
	class := displayName(w)
	if len(s.rules) == 0 {
		return Verdict{Task: TaskUnknown, Reason: "this session allows no window classes, so nothing is judged off task"}
	}
	for _, r := range s.rules {
		if matchesClass(r, w) {
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

// exemptKey is how a "not a distraction" window is remembered: by its
// lower-cased class and folded title, whatever its instance or page.
func exemptKey(class, title string) verdictKey {
	return verdictKey{class: strings.ToLower(class), title: title}
}
