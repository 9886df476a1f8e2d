package service

// Quieter is the port that keeps other apps' notifications from popping
// up while a quiet session is active (Do Not Disturb): one leaf per
// notification server (the dnd package) does it the way that server is
// silenced. The core decides when: a quiet session, active, the person
// present; never in planning, review, after End or while away.
//
// Quiet must not block: the core calls it after releasing its lock, in
// the order its decisions were made, and the leaf does the bus or settings
// work on its own goroutine. The leaf says what it did — banners that were
// already off, a server it cannot silence, a dunst that holds the nudges
// too — through Service.SetQuietNote.
type Quieter interface {
	Quiet(on bool)
}

// SetQuiet says whether a session is quiet: other apps' notifications do
// not pop up while it is active. In an active session it applies at once;
// in locked and planning it is what the next Start uses (the configured
// `quiet` otherwise), so Start's signature stays as it was. Plan and
// CancelPlan forget it, as they do the planned level.
func (s *Service) SetQuiet(quiet bool) error {
	s.mu.Lock()
	if err := s.permit(MethodSetQuiet, ""); err != nil {
		s.mu.Unlock()
		return err
	}
	if s.state == StateActive {
		s.quiet = quiet
		s.log.Info("session quiet changed", "session_id", s.sessionID, "quiet", quiet)
	} else {
		s.plannedQuiet = &quiet
	}
	s.commitUnlocks(writes{snapshot: s.snapshotLocked()})
	return nil
}

// SetQuietNote is the Quieter's sentence for the person about the quiet
// session ("" when there is nothing to say), shown in the QuietNote
// property; the listeners are told.
func (s *Service) SetQuietNote(note string) {
	s.mu.Lock()
	if s.quietNote == note {
		s.mu.Unlock()
		return
	}
	s.quietNote = note
	s.commitUnlocks(writes{})
}

// quietWantedLocked is the core's one decision about Do Not Disturb:
// other apps are silenced while a quiet session is active and the person
// is at the desk.
func (s *Service) quietWantedLocked() bool {
	return s.state == StateActive && s.quiet && s.awayMarked == ""
}

// quietShownLocked is what the Quiet property says: the session's choice,
// or in locked and planning the one the next Start will use.
func (s *Service) quietShownLocked() bool {
	switch s.state {
	case StateActive, StateReview:
		return s.quiet
	}
	if s.plannedQuiet != nil {
		return *s.plannedQuiet
	}
	return s.quietDefault
}

// tellQuieter hands the Quieter the core's decision when it changed (and
// the first one, so a record left by a crash is put back). Caller holds io.
func (s *Service) tellQuieter(want bool) {
	if s.quieter == nil || (s.quietTold && s.quietSent == want) {
		return
	}
	s.quietTold, s.quietSent = true, want
	s.quieter.Quiet(want)
}
