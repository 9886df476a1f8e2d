package service

import "time"

// NotificationAction is the person choosing an action on one of our
// notifications. Actions on notifications that are not ours are ignored,
// and each maps to exactly one method, which the permission table still
// permits or refuses: Refocus, Allow (also "Not a distraction", which widens the
// session as Allow does), Complete or Extend.
func (s *Service) NotificationAction(id uint32, key string) {
	if s.nudges == nil {
		return
	}
	kind, about := s.nudges.whose(id)
	var err error
	switch {
	case kind == "drift" && key == "refocus":
		err = s.Refocus()
	case kind == "drift" && key == "allow":
		err = s.Allow(LiteralRule(about.class))
	case kind == "drift" && key == "not_distraction":
		err = s.notDistraction(about.class, about.title)
	case kind == "deadline" && key == "complete":
		// At the deadline the session is already in review, where Complete
		// is refused: "Done" then just acknowledges, and End seals it.
		if err = s.Complete(); err != nil && s.View().State == StateReview {
			err = nil
		}
		s.nudges.closeDeadline()
	case kind == "deadline" && key == "extend":
		err = s.Extend(600)
	default:
		return
	}
	if err != nil {
		s.log.Info("a notification action was refused", "action", key, "err", err)
	}
}

// maxExempt bounds the windows one session may mark "not a distraction".
const maxExempt = 1000

// notDistraction is the nudge's "Not a distraction": the window it is about
// (its class and scrubbed title) counts as on task for the rest of the
// session. It widens the session as Allow does, so Allow's entry in the
// permission table permits it (and locked refuses it). The raw log records
// it, so a restarted daemon replays the same exemption and decides alike.
func (s *Service) notDistraction(class, title string) error {
	return s.widen(func(w *writes, now time.Time) *Error {
		k := exemptKey(class, title)
		switch {
		case s.drift.exempt[k]:
			return nil
		case len(s.drift.exempt) >= maxExempt:
			return invalid("this session already has %d windows marked not a distraction, the most there can be; allow the class instead", maxExempt)
		}
		s.drift.exempt[k] = true
		s.account(w, FocusEvent{AtUnixMillis: now.UnixMilli(), Mark: MarkNotDistraction, Class: class, Title: title})
		s.redecideLocked(w, now)
		return nil
	})
}
