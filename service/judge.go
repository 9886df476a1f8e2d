package service

import (
	"fmt"
	"strings"
)

// AllowlistJudge is the default judge: a window is on task when its
// WM_CLASS class or instance matches an allowed class, case-insensitively.
// It always answers at once.
type AllowlistJudge struct{}

func (AllowlistJudge) Judge(w Window, allowed []string, _ func(Verdict)) (Verdict, bool) {
	for _, a := range allowed {
		if strings.EqualFold(a, w.Class) || (w.Instance != "" && strings.EqualFold(a, w.Instance)) {
			return Verdict{Task: TaskOn, Reason: fmt.Sprintf("%s is allowed in this session", displayClass(w))}, true
		}
	}
	return Verdict{Task: TaskOff, Reason: fmt.Sprintf("%s is not in this session's allowlist", displayClass(w))}, true
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
