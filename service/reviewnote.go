package service

import (
	"cmp"
	"context"
	"slices"
	"strings"
	"unicode"
	"unicode/utf8"
)

// The review's note: with a model configured, two sentences about the
// session written from its scrubbed summary — figures, window classes and
// site hosts, never a title — shown beside the figures (ReviewNote) and
// kept beside the sealed summary, never in it: the chain's hash does not
// cover it. Asked off the lock when the session goes to review; a slow or
// failing model changes nothing but the note, which stays "".

// ReviewNoter writes the note (llmjudge). It may block on the network;
// the core calls it off its lock, in the background.
type ReviewNoter interface {
	ReviewNote(ctx context.Context, f ReviewFacts) (string, error)
}

// ReviewNoteStore keeps a session's note beside its sealed summary. A Store
// that implements it is told each note as it arrives.
type ReviewNoteStore interface {
	SaveReviewNote(sessionID, note string) error
	// ReviewNoteOf is the note kept for a session ("" when none), so a
	// daemon restarted during the review shows it again.
	ReviewNoteOf(sessionID string) (string, error)
}

// ReviewFacts are what the model is told: the commitment and the figures,
// the time per window class (titles left out) and per site host, and the
// changes the review proposes.
type ReviewFacts struct {
	NextAction       string         `json:"next_action"`
	SuccessCondition string         `json:"success_condition"`
	Outcome          Outcome        `json:"outcome"`
	Enforcement      Level          `json:"enforcement"`
	TimeboxSecs      uint64         `json:"timebox_secs"`
	DriftSeconds     uint64         `json:"drift_seconds"`
	AwaySeconds      uint64         `json:"away_seconds"`
	SwitchCount      uint32         `json:"switch_count"`
	Classes          []ClassSeconds `json:"classes"`
	Sites            []SiteTime     `json:"sites,omitempty"`
	Proposals        []string       `json:"proposals,omitempty"`
}

// ClassSeconds is the time of one window class.
type ClassSeconds struct {
	Class   string `json:"class"`
	Seconds uint64 `json:"seconds"`
}

// MaxReviewNote bounds the note as kept and shown, in characters.
const MaxReviewNote = 400

// reviewFactsLocked is the scrubbed summary of the session in review.
func (s *Service) reviewFactsLocked() ReviewFacts {
	sum := s.summaryLocked()
	f := ReviewFacts{NextAction: sum.NextAction, SuccessCondition: sum.SuccessCondition, Outcome: sum.Outcome,
		Enforcement: sum.Enforcement, TimeboxSecs: sum.TimeboxSecs, DriftSeconds: sum.DriftSeconds,
		AwaySeconds: sum.AwaySeconds, SwitchCount: sum.SwitchCount, Sites: sum.Sites}
	by := map[string]uint64{}
	for _, b := range sum.Buckets {
		if b.Class != "" {
			by[b.Class] += b.Seconds
		}
	}
	for c, secs := range by {
		f.Classes = append(f.Classes, ClassSeconds{c, secs})
	}
	slices.SortFunc(f.Classes, func(a, b ClassSeconds) int {
		return cmp.Or(cmp.Compare(b.Seconds, a.Seconds), cmp.Compare(a.Class, b.Class))
	})
	for _, p := range s.proposalsLocked().list {
		f.Proposals = append(f.Proposals, p.Change)
	}
	return f
}

// askReviewNoteLocked starts asking for the note of the session that just
// went to review, in the background once w is committed.
func (s *Service) askReviewNoteLocked(w *writes) {
	if s.noter == nil || s.stats == nil {
		return
	}
	facts, id, ended := s.reviewFactsLocked(), s.sessionID, s.endedAt
	w.effects = append(w.effects, func() {
		s.inBackground(func() {
			note, err := s.noter.ReviewNote(s.stopCtx, facts)
			if err != nil {
				s.log.Info("no review note", "err", err)
				return
			}
			if note = cleanNote(note); note == "" {
				return
			}
			s.mu.Lock()
			if s.state != StateReview || s.sessionID != id || !s.endedAt.Equal(ended) {
				s.mu.Unlock()
				return // ended, or extended, meanwhile
			}
			s.reviewNote = note
			s.commitUnlocks(writes{})
			if ns, ok := s.store.(ReviewNoteStore); ok {
				if err := ns.SaveReviewNote(id, note); err != nil {
					s.log.Warn("keeping the review note failed", "session_id", id, "err", err)
				}
			}
		})
	})
}

// inBackground runs f in a goroutine Shutdown waits for, unless shutting
// down.
func (s *Service) inBackground(f func()) {
	s.bgMu.Lock()
	defer s.bgMu.Unlock()
	if s.bgStopped {
		return
	}
	s.background.Add(1)
	go func() {
		defer s.background.Done()
		f()
	}()
}

// cleanNote is a model's text as kept: white space runs and control
// characters made single spaces, trimmed, at most MaxReviewNote characters.
func cleanNote(note string) string {
	if !utf8.ValidString(note) {
		note = strings.ToValidUTF8(note, "\uFFFD")
	}
	note = strings.Join(strings.FieldsFunc(note, func(r rune) bool { return unicode.IsSpace(r) || unicode.IsControl(r) }), " ")
	return clip(note, MaxReviewNote)
}

// reviewNoteLocked is the note while the session is in review, else "".
func (s *Service) reviewNoteLocked() string {
	if s.state != StateReview {
		return ""
	}
	return s.reviewNote
}
