package service

import (
	"context"
	"errors"
	"strings"
	"time"
	"unicode"
	"unicode/utf8"
)

// Coach is the coach: a model (llmjudge) that turns a person's vague
// intention into a proposal for a commitment. It is a port like Judge, but
// asked from a method call rather than from the core's path: the core
// calls it off its lock, from the goroutine of the Coach call, and that
// call alone waits for it (every other method answers meanwhile). It may
// block on the network until ctx ends or its own timeout passes.
type Coach interface {
	Coach(ctx context.Context, b Brief) (Proposal, error)
}

// Brief is everything the coach is told. Nothing else: no window title,
// no window handle, no page path.
type Brief struct {
	Intention string // as the person wrote it, checked like a next action
	// TaskTitle is the title of the task the intention is for ("" when
	// none), as its source has it, on one line.
	TaskTitle string
	// Allowed are the person's configured allowed entries (allowed_classes
	// of config.toml): their own rules, as they wrote them.
	Allowed []string
	// Recent are the person's own recent sealed sessions whose next action
	// or success condition shares a word with the intention, newest first,
	// at most MaxCoachRecent.
	Recent []RecentSession
}

// RecentSession is what the coach hears of one past session: what it was
// for, how it ended, and where the time went by window class and site host
// (never a title, never a path).
type RecentSession struct {
	NextAction       string
	SuccessCondition string
	TimeboxSecs      uint64
	Outcome          Outcome
	Classes          []string // the classes that held most of its time, most first
	Sites            []string // the hosts it was mostly on task in, most time first
}

// Proposal is the coach's answer, as the Coach method returns it and the
// Proposal property keeps it. Its fields are checked exactly as Start
// checks its arguments before the core keeps it.
type Proposal struct {
	NextAction       string
	SuccessCondition string
	TimeboxSecs      uint64
	Allowed          []string
	Why              string // one line, at most MaxReasonLen characters
}

// UnusableProposal is a coach's reply that is not a proposal at all (not
// the JSON asked for, cut off): Why says what is wrong with it. A coach
// returns it so the person hears it as such, not as an outage.
type UnusableProposal struct{ Why string }

func (e *UnusableProposal) Error() string { return "the model's proposal was not usable: " + e.Why }

// Empty reports whether p is no proposal.
func (p Proposal) Empty() bool { return p.NextAction == "" }

// The coach's bounds: how much of the past it hears, how many rules a
// proposal may carry, and how long the core waits at most whatever the
// coach's own timeout says.
const (
	MaxCoachRecent  = 5
	MaxCoachHistory = 50 // sealed sessions looked through for matching ones
	MaxCoachAllowed = 8
	coachClasses    = 5 // classes and hosts told per recent session
	coachCeiling    = 2 * time.Minute
)

// Coach asks the coach for a proposal for intention, and for the task
// taskRef names when it is not "" (its title is read from its source, off
// the lock; intention may then be ""). Planning, or locked, which it moves
// to planning as Plan would. Without a coach it fails with
// NoModel and changes nothing. The model is asked off the core's lock; its
// reply is checked as Start checks its arguments, and a reply that is not a
// usable proposal fails with CoachFailed and is not kept, not even in part.
// A usable one is kept as the Proposal until Start, CancelPlan or the next
// Coach. Nothing starts: the person accepts it with Start.
func (s *Service) Coach(intention, taskRef string) (Proposal, error) {
	hasTask := strings.TrimSpace(taskRef) != ""
	intention, err := cleanText("intention", intention, !hasTask)
	if err != nil {
		return Proposal{}, err
	}
	if err := s.coachable(); err != nil {
		return Proposal{}, err // before asking any task source
	}
	var taskTitle string
	if hasTask {
		if taskTitle, err = s.coachTask(taskRef); err != nil {
			return Proposal{}, err
		}
	}
	s.mu.Lock()
	if err := s.coachableLocked(); err != nil {
		s.mu.Unlock()
		return Proposal{}, err
	}
	s.coachGen++
	gen := s.coachGen
	w := writes{}
	if s.state == StateLocked {
		s.state, s.level, s.plannedQuiet = StatePlanning, "", nil
		w.snapshot = s.snapshotLocked()
	}
	s.proposal = Proposal{} // the old one goes: a new one is being asked for
	allowed := append([]string(nil), s.defaultAllowed...)
	s.commit(w)

	brief := Brief{Intention: intention, TaskTitle: taskTitle, Allowed: allowed, Recent: s.recentFor(intention + " " + taskTitle)}
	ctx, cancel := context.WithTimeout(context.Background(), coachCeiling)
	p, cerr := s.coach.Coach(ctx, brief)
	cancel()
	var unusable *UnusableProposal
	switch {
	case errors.As(cerr, &unusable):
		s.log.Info("the coach's proposal was refused", "err", unusable.Why)
		return Proposal{}, &Error{Kind: CoachFailed, Msg: unusable.Error() + "; nothing was changed"}
	case cerr != nil:
		return Proposal{}, &Error{Kind: CoachFailed, Msg: "the coach could not make a proposal: " + cerr.Error() + "; nothing was changed"}
	}
	p, err = checkProposal(p)
	if err != nil {
		s.log.Info("the coach's proposal was refused", "err", err.Msg)
		return Proposal{}, &Error{Kind: CoachFailed, Msg: "the model's proposal was not usable: " + err.Msg + "; nothing was changed"}
	}

	s.mu.Lock()
	if s.coachGen != gen || s.state != StatePlanning {
		s.mu.Unlock()
		return Proposal{}, &Error{Kind: CoachFailed, Msg: "the plan changed while the model was thinking (a session started, planning was cancelled or the coach was asked again), so this proposal was dropped"}
	}
	s.proposal = p
	s.commit(writes{})
	return p, nil
}

// coachable answers whether Coach may ask now: the permission table, then
// a model to ask (NoModel, which changes nothing).
func (s *Service) coachable() *Error {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.coachableLocked()
}

func (s *Service) coachableLocked() *Error {
	if err := s.permit(MethodCoach, ""); err != nil {
		return err
	}
	if s.coach == nil {
		return &Error{Kind: NoModel, Msg: "no model is configured for the coach: it uses the judge's model ([judge] kind = \"llm\" in config.toml); nothing was changed"}
	}
	return nil
}

// coachTask is the title of the task ref names, read from its source off
// the lock (TaskListTimeout), as a next action would be: one line.
func (s *Service) coachTask(ref string) (string, *Error) {
	src, id, err := s.parseTaskRef(ref)
	if err != nil {
		return "", err
	}
	ctx, cancel := context.WithTimeout(context.Background(), TaskListTimeout)
	it, gerr := src.Get(ctx, id)
	cancel()
	if gerr != nil {
		return "", taskError(src.Name(), gerr)
	}
	return taskAction(it), nil
}

// checkProposal checks a coach's proposal exactly as Start checks its
// arguments (the argument names are Start's), and cleans its why as a
// judge's reason is cleaned. It returns the proposal as the core keeps it.
func checkProposal(p Proposal) (Proposal, *Error) {
	var err *Error
	if p.NextAction, err = cleanText("next_action", p.NextAction, true); err != nil {
		return Proposal{}, err
	}
	if p.SuccessCondition, err = cleanText("success_condition", p.SuccessCondition, true); err != nil {
		return Proposal{}, err
	}
	if err = checkTimebox("timebox_secs", p.TimeboxSecs); err != nil {
		return Proposal{}, err
	}
	if len(p.Allowed) > MaxCoachAllowed {
		return Proposal{}, (&Fault{Argument: "allowed_classes", Rule: RuleEntries, Got: uint64(len(p.Allowed)), Limit: MaxCoachAllowed}).err()
	}
	if p.Allowed, _, err = cleanRules("allowed_classes", p.Allowed); err != nil {
		return Proposal{}, err
	}
	p.Why = cleanReason(p.Why)
	return p, nil
}

// recentFor reads the person's own recent sessions (off the lock: it
// reads the audit log) and keeps those that share a word with intention.
// A log that cannot be read is no history: the coach still answers.
func (s *Service) recentFor(intention string) []RecentSession {
	h, err := s.store.History(MaxCoachHistory)
	if err != nil {
		s.log.Info("the coach hears no past sessions: the audit log could not be read", "err", err)
		return nil
	}
	return matchingSessions(intention, h)
}

// matchingSessions are the sessions of h (newest first) whose next action
// or success condition shares a word of four letters or more with
// intention, as the coach hears them; at most MaxCoachRecent.
func matchingSessions(intention string, h []Summary) []RecentSession {
	words := coachWords(intention)
	var out []RecentSession
	for _, sum := range h {
		if len(out) == MaxCoachRecent {
			break
		}
		if !sharesWord(words, coachWords(sum.NextAction+" "+sum.SuccessCondition)) {
			continue
		}
		r := RecentSession{NextAction: sum.NextAction, SuccessCondition: sum.SuccessCondition, TimeboxSecs: sum.TimeboxSecs, Outcome: sum.Outcome}
		for _, b := range sum.Buckets { // sealed most time first; titles are never told
			if len(r.Classes) == coachClasses {
				break
			}
			if b.Class != "" && !strings.HasPrefix(b.Class, "(") && !containsFold(r.Classes, b.Class) {
				r.Classes = append(r.Classes, b.Class)
			}
		}
		for _, site := range sum.Sites {
			if len(r.Sites) == coachClasses {
				break
			}
			if site.Host != "" && !strings.HasPrefix(site.Host, "(") && site.DriftSeconds*2 < site.Seconds {
				r.Sites = append(r.Sites, site.Host)
			}
		}
		out = append(out, r)
	}
	return out
}

func coachWords(s string) []string {
	var out []string
	for _, w := range strings.FieldsFunc(strings.ToLower(s), func(r rune) bool { return !unicode.IsLetter(r) && !unicode.IsDigit(r) }) {
		if utf8.RuneCountInString(w) >= 4 {
			out = append(out, w)
		}
	}
	return out
}

func sharesWord(a, b []string) bool {
	for _, x := range a {
		for _, y := range b {
			if x == y {
				return true
			}
		}
	}
	return false
}

// dropProposalLocked forgets the proposal and any answer still coming
// (Start, CancelPlan).
func (s *Service) dropProposalLocked() {
	s.proposal = Proposal{}
	s.coachGen++
}
