package service

import "fmt"

// The words of antidrift's notifications. Only the app is named (its
// desktop entry's name, else its class): a title is private and never goes
// to a notification server.

// driftNotification is the nudge about window w. "Allow" allows w's
// class; a window that names no class or instance has none to allow, so it
// is offered only "Not a distraction", which remembers the window itself.
func (s *Service) driftNotification(w Window) Notification {
	class, name := displayClass(w), displayName(w)
	n := Notification{
		Summary:  "Drifting: " + name,
		Body:     s.commitmentText(),
		Category: "x-antidrift.drift",
		Urgency:  s.nudgeUrgency(),
		Actions:  []Action{{Key: "refocus", Label: "Back to work"}},
	}
	hint := "Run `antidrift refocus` to go back to work"
	switch {
	case s.level == LevelLocked:
	case w.Class == "" && w.Instance == "":
		n.Actions = append(n.Actions, Action{Key: "not_distraction", Label: "Not a distraction"})
	default:
		n.Actions = append(n.Actions, Action{Key: "allow", Label: "Allow " + name}, Action{Key: "not_distraction", Label: "Not a distraction"})
		hint += fmt.Sprintf(", or `antidrift allow %s` to allow it", shellWord(LiteralRule(class)))
	}
	n.NoActionsHint = hint + "."
	return n
}

func (s *Service) deadlineNotification() Notification {
	return Notification{
		Summary:       "Time's up",
		Body:          s.commitmentText(),
		Category:      "x-antidrift.deadline",
		Urgency:       s.nudgeUrgency(),
		Actions:       []Action{{Key: "complete", Label: "Done"}, {Key: "extend", Label: "+10 min"}},
		NoActionsHint: "Run `antidrift end` to seal the session, or `antidrift extend 10m` for more time.",
	}
}

func (s *Service) commitmentText() string {
	return fmt.Sprintf("Next: %s\nDone when: %s", s.nextAction, s.successCond)
}

// nudgeUrgency is normal, or critical in a quiet session: the servers that
// hold other apps' notifications back under Do Not Disturb still show
// critical ones (GNOME Shell's banners), so antidrift's own nudges reach
// the person the quiet session is for.
func (s *Service) nudgeUrgency() byte {
	if s.quiet {
		return 2
	}
	return 1
}
