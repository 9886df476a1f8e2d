package service

import (
	"fmt"
	"slices"
	"time"
)

// writes is what a change must make durable, captured under mu and
// performed by commit under io, after mu is released.
type writes struct {
	sessionID    string
	events       []FocusEvent
	snapshot     *Snapshot
	seal         *Summary // a session just ended: make it pending, then seal it
	flushPending bool     // try to seal summaries left pending earlier
	closeSession string
	// effects run after the writes, off both locks, in order: notification
	// ops and enforcement. Closures capture values, not the state.
	effects []func()
	nudged  [][2]string // Nudge signals to emit: class, reason
	// tabOrders are for the browsers' extensions, through the listeners
	// that are TabGuards: block a tab, or restore every blocked one.
	tabOrders []TabOrder
}

// merge appends the work of o, which was captured after w's.
func (w *writes) merge(o writes) {
	if o.sessionID != "" {
		w.sessionID = o.sessionID
	}
	w.events = append(w.events, o.events...)
	if o.snapshot != nil {
		w.snapshot = o.snapshot
	}
	w.effects = append(w.effects, o.effects...)
	w.tabOrders = append(w.tabOrders, o.tabOrders...)
	w.nudged = append(w.nudged, o.nudged...)
}

// commit hands over from mu to io, performs w, and tells the listener. It
// must be called with mu held and returns with mu released. It returns the
// audit hash of w.seal ("" when there was none or it stays pending).
func (s *Service) commit(w writes) (hash string) {
	s.io.Lock()
	listeners := s.listeners
	quiet := s.quietWantedLocked()
	s.mu.Unlock()

	for _, e := range w.events {
		s.appendEvent(w.sessionID, e)
	}
	if w.seal != nil {
		s.pending = append(s.pending, *w.seal)
	}
	if w.snapshot != nil {
		s.saveSnapshot(*w.snapshot)
	}
	if w.seal != nil || w.flushPending {
		hash = s.sealPending(w.seal, w.snapshot)
	}
	if w.closeSession != "" {
		if err := s.store.CloseSession(w.closeSession); err != nil {
			s.log.Warn("closing the raw log failed", "session_id", w.closeSession, "err", err)
		}
	}
	s.pendingCount.Store(uint32(len(s.pending)))
	// Effects only enqueue or start goroutines, so they run under io: that
	// keeps them in the order the changes were made (a "close the nudge"
	// must never overtake the "show" of the commit before it).
	for _, effect := range w.effects {
		effect()
	}
	s.tellQuieter(quiet)
	s.io.Unlock()

	for _, l := range listeners {
		for _, n := range w.nudged {
			l.Nudged(n[0], n[1])
		}
		if w.seal != nil {
			l.SessionEnded(w.seal.SessionID, w.seal.Outcome, hash)
		}
		if g, ok := l.(TabGuard); ok {
			for _, o := range w.tabOrders {
				g.TabOrder(o)
			}
		}
		l.Changed()
	}
	return hash
}

func (s *Service) appendEvent(id string, e FocusEvent) {
	if err := s.store.AppendEvent(id, e); err != nil {
		s.log.Error("appending to the raw log failed", "session_id", id, "err", err)
		s.problems.set("rawlog", fmt.Sprintf("The raw focus log of session %s could not be written (%v); accounting goes on in memory, but a crash now would lose detail.", id, err))
		return
	}
	s.problems.clear("rawlog")
}

// saveSnapshot writes snap with the current pending list. Caller holds io.
func (s *Service) saveSnapshot(snap Snapshot) {
	snap.Pending = slices.Clone(s.pending)
	if err := s.store.SaveSnapshot(snap); err != nil {
		s.log.Error("saving state.json failed", "err", err)
		s.problems.set("snapshot", fmt.Sprintf("state.json could not be written (%v); the change is in memory and is saved with the next one.", err))
		return
	}
	s.problems.clear("snapshot")
}

// sealPending appends pending summaries to the audit chain, oldest first,
// and returns the hash of just (when it was sealed). A summary already in
// the chain (the daemon died between the append and the snapshot) is
// dropped, not sealed twice. Caller holds io; snap is the snapshot to save
// again when the pending list shrank (nil: none to save).
func (s *Service) sealPending(just *Summary, snap *Snapshot) (hash string) {
	before := len(s.pending)
	for len(s.pending) > 0 {
		p := s.pending[0]
		sealed, err := s.store.AuditContains(p.SessionID)
		if err == nil && !sealed {
			var written Summary
			written, err = s.store.AppendAudit(p)
			if err == nil {
				s.auditHead.Store(written.Hash)
				// The journal keeps every head the chain had, where the
				// user's own processes cannot rewrite it (verify --journal).
				s.log.Info("sealed into audit.jsonl", "MESSAGE_ID", AuditHeadMessageID,
					"audit_seq", written.Seq, "audit_hash", written.Hash, "session_id", written.SessionID)
				if just != nil && p.SessionID == just.SessionID {
					hash = written.Hash
				}
			}
		}
		if err != nil {
			s.log.Error("sealing a summary into audit.jsonl failed; it stays pending", "session_id", p.SessionID, "err", err)
			s.problems.set("audit", fmt.Sprintf("%d ended session(s) could not be sealed into audit.jsonl (%v); they are kept in state.json and sealed on the next End or start.", len(s.pending), err))
			break
		}
		s.pending = s.pending[1:]
	}
	if len(s.pending) == 0 {
		s.problems.clear("audit")
	}
	if len(s.pending) != before && snap != nil {
		s.saveSnapshot(*snap)
	}
	return hash
}

// snapshotLocked captures the durable core state. Caller holds mu.
func (s *Service) snapshotLocked() *Snapshot {
	return &Snapshot{
		Version:             SnapshotVersion,
		State:               s.state,
		SessionID:           s.sessionID,
		NextAction:          s.nextAction,
		SuccessCondition:    s.successCond,
		TimeboxSecs:         uint64(s.timebox / time.Second),
		StartedUnixMilli:    unixMilli(s.startedAt),
		DeadlineUnixMilli:   unixMilli(s.deadline),
		Enforcement:         s.level,
		AllowedClasses:      slices.Clone(s.allowed),
		Outcome:             s.outcome,
		EndedUnixMilli:      unixMilli(s.endedAt),
		BreakGlassUnixMilli: unixMilli(s.breakGlassAt),
		ClockWallUnixMilli:  unixMilli(s.lastWall),
		ClockBootMillis:     s.lastBoot.Milliseconds(),
		BootID:              s.bootID,
		ClockSetBackMillis:  s.clockSetBack.Milliseconds(),
		Quiet:               s.quiet,
		Task:                s.taskCopyLocked(),
		TaskResult:          s.taskResult,
	}
}
