package service

import (
	"fmt"
	"slices"
	"time"
)

// RulesFile is the rules file antidrift owns beside the person's config
// (config/rules.go): applying a proposal writes there, so the person's own
// config.toml is never rewritten. Apply may block on disk; the core never
// calls it under its lock.
type RulesFile interface {
	// Apply adds p's change to the file durably (atomically) and returns
	// the file's path.
	Apply(p ReviewProposal) (path string, err error)
}

// reviewCache keeps a session's proposals as first listed, so their
// numbers hold while some are applied (an applied allow no longer has
// evidence against the new rules, and would otherwise renumber the rest).
type reviewCache struct {
	session string
	ended   time.Time
	list    []ReviewProposal
	applied map[uint32]string // number → the sentence ApplyProposal returned
}

// reviewSettingsLocked are the settings the proposals are measured against.
func (s *Service) reviewSettingsLocked() ReviewSettings {
	return ReviewSettings{
		Level:        s.level,
		DefaultLevel: s.defaultLevel,
		Grace:        s.driftGrace,
		NudgeRepeat:  s.nudgeRepeat,
		Nudges:       s.nudges != nil,
		Allowed:      s.compileRules("allowed_classes", s.defaultAllowed),
		Distractions: s.distractions,
	}
}

// proposalsLocked is the reviewed session's proposals (permitted only in
// review, where the stats are the session's).
func (s *Service) proposalsLocked() *reviewCache {
	c := &s.review
	if c.session != s.sessionID || !c.ended.Equal(s.endedAt) || c.applied == nil {
		var ev ReviewEvidence
		if s.stats != nil {
			ev = s.stats.review.evidence()
		}
		*c = reviewCache{session: s.sessionID, ended: s.endedAt, list: Proposals(ev, s.reviewSettingsLocked()), applied: map[uint32]string{}}
	}
	return c
}

// ReviewProposals lists the changes the session in review argues for. An
// applied one stays in the list under its number, its reason saying so.
func (s *Service) ReviewProposals() ([]ReviewProposal, error) {
	s.mu.Lock()
	defer s.mu.Unlock()
	if err := s.permit(MethodReviewProposals, ""); err != nil {
		return nil, err
	}
	c := s.proposalsLocked()
	out := slices.Clone(c.list)
	for i, p := range out {
		if done, ok := c.applied[p.Number]; ok {
			out[i].Reason = p.Reason + " (applied: " + done + ")"
		}
	}
	return out, nil
}

// ApplyProposal writes proposal n's change to the rules file and applies it
// to the settings the next session starts from. It returns a sentence of
// what was written and where.
func (s *Service) ApplyProposal(n uint32) (string, error) {
	s.mu.Lock()
	if err := s.permit(MethodApplyProposal, ""); err != nil {
		s.mu.Unlock()
		return "", err
	}
	c := s.proposalsLocked()
	session, ended := c.session, c.ended
	if n == 0 || int(n) > len(c.list) {
		count := len(c.list)
		s.mu.Unlock()
		return "", (&Fault{Argument: "number", Rule: RuleProposal, Got: uint64(n), Limit: int64(count)}).err()
	}
	p := c.list[n-1]
	if done, ok := c.applied[n]; ok {
		s.mu.Unlock()
		return "already applied: " + done, nil
	}
	s.mu.Unlock()

	if s.rulesFile == nil {
		return "", &Error{Kind: Storage, Msg: "this daemon has no rules file to write to (it runs without a config directory)"}
	}
	s.rulesMu.Lock()
	defer s.rulesMu.Unlock()
	path, err := s.rulesFile.Apply(p)
	if err != nil {
		return "", &Error{Kind: Storage, Msg: fmt.Sprintf("could not write the rules file: %v; nothing was applied", err)}
	}
	done := fmt.Sprintf("wrote %s to %s; the next session uses it", p.Change, path)

	s.mu.Lock()
	defer s.mu.Unlock()
	switch p.Kind {
	case ProposeAllow:
		if !containsFold(s.defaultAllowed, p.Rule) {
			s.defaultAllowed = append(s.defaultAllowed, p.Rule)
		}
	case ProposeDistraction:
		if r, err := ParseRule(p.Rule); err == nil {
			s.distractions = append(slices.Clone(s.distractions), r)
		}
	case ProposeGrace:
		s.driftGrace = p.Grace
	case ProposeLevel:
		s.defaultLevel = p.Level
	}
	if s.review.session == session && s.review.ended.Equal(ended) && s.review.applied != nil {
		s.review.applied[n] = done
	}
	return done, nil
}
