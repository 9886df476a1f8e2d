package service

import (
	"fmt"
	"log/slog"
	"regexp"
	"slices"
	"sync"
	"sync/atomic"
	"time"

	"github.com/google/uuid"
)

// Options configure a Service. Zero values mean the documented defaults.
type Options struct {
	Store   Store
	Clock   Clock        // default SystemClock
	Logger  *slog.Logger // default slog.Default()
	Version string

	DefaultLevel   Level         // used when Start passes ""; default warn
	DefaultAllowed []string      // used when Start passes no classes
	BreakGlassHold time.Duration // default 5 minutes
	DriftGrace     time.Duration // how long an off-task window may hold focus before it is drift; 0 = at once
	NudgeRepeat    time.Duration // how often a nudge repeats while drift lasts; default 2 minutes

	IdleAfter time.Duration // the idle threshold, for the words of DriftReason

	// PrivateClasses never have their title recorded anywhere, and
	// RedactTitles matches are replaced with "…" before a title is.
	PrivateClasses []string
	RedactTitles   []*regexp.Regexp

	Judge    Judge    // default AllowlistJudge
	Guard    Guard    // nil: nothing is enforced
	Notifier Notifier // nil: no notifications

	// Problems found before the core started (damaged files set aside,
	// loosened permissions), shown in the Problems property.
	Problems []string
}

// Service is the decision core. All its methods are safe for concurrent
// use.
//
// Two locks, and the order matters. mu guards the state and is held only
// for computation, never for I/O. io orders durable writes: a method that
// changed state takes io while still holding mu, releases mu, then writes
// (hand over hand), so the files see changes in the order they were made
// while readers of the state never wait for a disk. Nothing takes mu while
// holding io.
type Service struct {
	store          Store
	clock          Clock
	log            *slog.Logger
	version        string
	defaultLevel   Level
	defaultAllowed []string
	breakGlassHold time.Duration
	driftGrace     time.Duration
	nudgeRepeat    time.Duration
	judge          Judge
	guard          Guard
	idleAfter      time.Duration
	privacy        privacy
	nudges         *nudger        // nil without a notifier
	background     sync.WaitGroup // enforcement goroutines

	mu           sync.Mutex
	listeners    []Listener
	state        State
	sessionID    string
	nextAction   string
	successCond  string
	timebox      time.Duration
	startedAt    time.Time
	deadline     time.Time
	endedAt      time.Time
	level        Level // the session's level; in planning, the planned one
	allowed      []string
	outcome      Outcome
	breakGlassAt time.Time
	timer        Timer
	stats        *stats // nil when no session is live
	window       Window // the latest the sensor reported, session or not
	drift        drift
	presence     map[string]AwayReason // source → reason, for sources saying away
	awayMarked   AwayReason            // what the session's raw log says now ("" = present)
	lastWall     time.Time             // the clock at the last event, to catch suspends
	lastMono     time.Duration

	io      sync.Mutex
	pending []Summary // guarded by io: ended sessions not yet in the chain

	// Published by the io side for View, which must not wait for io.
	auditHead    atomic.Value // string
	pendingCount atomic.Uint32
	problems     problems
}

// New builds a Service in the locked state. Call Recover before serving.
func New(o Options) *Service {
	s := &Service{
		store:          o.Store,
		clock:          o.Clock,
		log:            o.Logger,
		version:        o.Version,
		defaultLevel:   o.DefaultLevel,
		defaultAllowed: slices.Clone(o.DefaultAllowed),
		breakGlassHold: o.BreakGlassHold,
		driftGrace:     o.DriftGrace,
		nudgeRepeat:    o.NudgeRepeat,
		judge:          o.Judge,
		guard:          o.Guard,
		idleAfter:      o.IdleAfter,
		privacy:        privacy{classes: slices.Clone(o.PrivateClasses), redact: slices.Clone(o.RedactTitles)},
		presence:       map[string]AwayReason{},
		state:          StateLocked,
		window:         Window{Reason: "no focus information yet"},
	}
	if s.clock == nil {
		s.clock = SystemClock{}
	}
	if s.log == nil {
		s.log = slog.Default()
	}
	if s.defaultLevel == "" {
		s.defaultLevel = LevelWarn
	}
	if s.breakGlassHold == 0 {
		s.breakGlassHold = 5 * time.Minute
	}
	if s.nudgeRepeat <= 0 {
		s.nudgeRepeat = 2 * time.Minute
	}
	if s.judge == nil {
		s.judge = AllowlistJudge{}
	}
	if o.Notifier != nil {
		s.nudges = newNudger(o.Notifier, s.log)
	}
	s.resetDriftLocked()
	for i, p := range o.Problems {
		s.problems.set(fmt.Sprintf("startup-%d", i), p)
	}
	s.auditHead.Store(s.store.AuditHead())
	return s
}

// AddListener registers a listener told about every change. Add them
// before serving.
func (s *Service) AddListener(l Listener) {
	s.mu.Lock()
	s.listeners = append(s.listeners, l)
	s.mu.Unlock()
}

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
	w.nudged = append(w.nudged, o.nudged...)
}

// commit hands over from mu to io, performs w, and tells the listener. It
// must be called with mu held and returns with mu released. It returns the
// audit hash of w.seal ("" when there was none or it stays pending).
func (s *Service) commit(w writes) (hash string) {
	s.io.Lock()
	listeners := s.listeners
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
	s.io.Unlock()

	for _, effect := range w.effects {
		effect()
	}
	for _, l := range listeners {
		for _, n := range w.nudged {
			l.Nudged(n[0], n[1])
		}
		if w.seal != nil {
			l.SessionEnded(w.seal.SessionID, w.seal.Outcome, hash)
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
	}
}

// eventOf is the raw-log event for window w seen at t.
func eventOf(w Window, t time.Time) FocusEvent {
	e := FocusEvent{AtUnixMillis: t.UnixMilli(), Available: w.Available, Reason: w.Reason}
	if w.Available {
		e.Class, e.Instance, e.Title = w.Class, w.Instance, w.Title
	}
	return e
}

// account feeds e to the live stats and queues it for the raw log. Caller
// holds mu and a session is live.
func (s *Service) account(w *writes, e FocusEvent) {
	s.stats.apply(e)
	w.sessionID = s.sessionID
	w.events = append(w.events, e)
}

// RecordWindow is the sensor's report of the active window. It is always
// shown; it is accounted only while a session is active.
func (s *Service) RecordWindow(win Window) {
	win = s.privacy.scrub(win)
	s.mu.Lock()
	if win == s.window {
		s.mu.Unlock()
		return
	}
	s.window = win
	var w writes
	now := s.tickLocked(&w)
	if s.state == StateActive {
		s.observeLocked(&w, now)
	}
	s.commit(w)
}

// observeLocked accounts and judges the current window as of now. Caller
// holds mu and a session is active.
func (s *Service) observeLocked(w *writes, now time.Time) {
	v := s.judgeLocked()
	e := eventOf(s.window, now)
	e.OffTask = v.Task == TaskOff
	s.account(w, e)
	s.applyVerdictLocked(w, v, now)
}

// Plan moves locked → planning.
func (s *Service) Plan() error { return s.planTransition(MethodPlan, StatePlanning) }

// CancelPlan moves planning → locked.
func (s *Service) CancelPlan() error { return s.planTransition(MethodCancelPlan, StateLocked) }

// planTransition moves between locked and planning, where nothing is
// committed yet; the planned level starts afresh either way.
func (s *Service) planTransition(m Method, to State) error {
	s.mu.Lock()
	if err := s.permit(m, ""); err != nil {
		s.mu.Unlock()
		return err
	}
	s.state, s.level = to, ""
	s.commit(writes{snapshot: s.snapshotLocked()})
	return nil
}

// Start commits to a next action, a success condition and a timebox, and
// starts accounting. enforcement "" means the level planned in planning, or
// the configured default; no classes means the configured default ones.
func (s *Service) Start(nextAction, successCondition string, timeboxSecs uint64, enforcement string, allowed []string) (string, error) {
	next, err := cleanText("next_action", nextAction, true)
	if err != nil {
		return "", err
	}
	success, err := cleanText("success_condition", successCondition, true)
	if err != nil {
		return "", err
	}
	if err := checkTimebox("timebox_secs", timeboxSecs); err != nil {
		return "", err
	}
	var level Level
	if enforcement != "" {
		if level, err = parseLevel("enforcement", enforcement); err != nil {
			return "", err
		}
	}
	classes, err := cleanClasses(allowed)
	if err != nil {
		return "", err
	}
	id, uerr := uuid.NewV7()
	if uerr != nil {
		return "", &Error{Kind: Storage, Msg: "could not make a session id: " + uerr.Error()}
	}

	s.mu.Lock()
	if err := s.permit(MethodStart, ""); err != nil {
		s.mu.Unlock()
		return "", err
	}
	if level == "" {
		level = s.level // planned in planning; "" when straight from locked
	}
	if level == "" {
		level = s.defaultLevel
	}
	if len(classes) == 0 {
		classes = slices.Clone(s.defaultAllowed)
	}
	now := s.clock.Now()
	s.state, s.sessionID = StateActive, id.String()
	s.nextAction, s.successCond = next, success
	s.timebox = time.Duration(timeboxSecs) * time.Second
	s.startedAt, s.deadline, s.endedAt = now, now.Add(s.timebox), time.Time{}
	s.level, s.allowed, s.outcome, s.breakGlassAt = level, classes, OutcomeNone, time.Time{}
	s.stats = newStats()
	s.resetDriftLocked()
	s.armTimerLocked()
	s.lastWall, s.lastMono, s.awayMarked = now, s.clock.Mono(), ""
	w := writes{snapshot: s.snapshotLocked()}
	s.observeLocked(&w, now)
	s.syncAwayLocked(&w, now)
	s.log.Info("session started", "session_id", s.sessionID, "state", s.state, "timebox", s.timebox, "enforcement", level)
	s.commit(w)
	return id.String(), nil
}

// Complete ends the active phase with success.
func (s *Service) Complete() error {
	return s.endActive(MethodComplete, OutcomeCompleted, "")
}

// Abandon ends the active phase without success.
func (s *Service) Abandon(reason string) error {
	reason, err := cleanText("reason", reason, false)
	if err != nil {
		return err
	}
	return s.endActive(MethodAbandon, OutcomeAbandoned, reason)
}

func (s *Service) endActive(m Method, o Outcome, reason string) error {
	s.mu.Lock()
	var w writes
	now := s.tickLocked(&w)
	if err := s.permit(m, ""); err != nil {
		s.commit(w)
		return err
	}
	s.log.Info("session "+string(o), "session_id", s.sessionID, "state", StateReview, "reason", reason)
	w.merge(s.toReviewLocked(o, now))
	s.commit(w)
	return nil
}

// toReviewLocked ends the active phase at t: accounting stops there and
// the stats freeze. Caller holds mu.
func (s *Service) toReviewLocked(o Outcome, t time.Time) writes {
	s.stopTimerLocked()
	var w writes
	s.endEpisodeLocked(&w)
	s.closeNoticeLocked(&w)
	s.state, s.outcome, s.endedAt, s.awayMarked = StateReview, o, t, ""
	s.account(&w, FocusEvent{AtUnixMillis: t.UnixMilli(), Mark: MarkPause})
	if o == OutcomeExpired && s.nudges != nil {
		note := s.deadlineNotification()
		w.effects = append(w.effects, func() { s.nudges.showDeadline(note) })
	}
	w.snapshot = s.snapshotLocked()
	return w
}

// Extend adds secs to an active session's timebox, or revives an expired
// session in review with a fresh deadline secs from now.
func (s *Service) Extend(secs uint64) error {
	if err := checkTimebox("secs", secs); err != nil {
		return err
	}
	s.mu.Lock()
	var w writes
	now := s.tickLocked(&w)
	if err := s.permit(MethodExtend, ""); err != nil {
		s.commit(w)
		return err
	}
	add := time.Duration(secs) * time.Second
	if s.timebox+add > MaxTimebox {
		s.commit(w)
		return invalid("secs: extending by %d s would make the timebox %s; a session is at most 24 hours", secs, (s.timebox + add).Round(time.Second))
	}
	s.timebox += add
	if s.state == StateReview {
		s.state, s.outcome, s.endedAt, s.deadline = StateActive, OutcomeNone, time.Time{}, now.Add(add)
		s.closeDeadlineLocked(&w)
		s.observeLocked(&w, now)
		s.syncAwayLocked(&w, now)
	} else {
		s.deadline = s.deadline.Add(add)
	}
	s.armTimerLocked()
	w.snapshot = s.snapshotLocked()
	s.commit(w)
	return nil
}

// End seals a reviewed session into the audit chain and returns to locked.
// The hash is "" when sealing failed; the summary then stays pending.
func (s *Service) End() (string, error) {
	s.mu.Lock()
	if err := s.permit(MethodEnd, ""); err != nil {
		s.mu.Unlock()
		return "", err
	}
	sum := s.summaryLocked()
	id := s.sessionID
	s.clearSessionLocked()
	w := writes{snapshot: s.snapshotLocked(), seal: &sum, closeSession: id}
	s.closeDeadlineLocked(&w)
	s.log.Info("session ended", "session_id", id, "state", s.state, "outcome", sum.Outcome)
	return s.commit(w), nil
}

func (s *Service) closeDeadlineLocked(w *writes) {
	if s.nudges != nil {
		w.effects = append(w.effects, s.nudges.closeDeadline)
	}
}

func (s *Service) summaryLocked() Summary {
	return Summary{
		SessionID:        s.sessionID,
		NextAction:       s.nextAction,
		SuccessCondition: s.successCond,
		Outcome:          s.outcome,
		Enforcement:      s.level,
		StartedUnix:      s.startedAt.Unix(),
		EndedUnix:        s.endedAt.Unix(),
		TimeboxSecs:      uint64(s.timebox / time.Second),
		SwitchCount:      s.stats.switches,
		DriftSeconds:     seconds(s.stats.drift),
		AwaySeconds:      seconds(s.stats.away),
		MinimizeCount:    s.stats.minimizes,
		BreakGlass:       !s.breakGlassAt.IsZero(),
		Buckets:          s.stats.sorted(0),
	}
}

func (s *Service) clearSessionLocked() {
	s.stopTimerLocked()
	s.state, s.sessionID, s.nextAction, s.successCond = StateLocked, "", "", ""
	s.timebox, s.startedAt, s.deadline, s.endedAt = 0, time.Time{}, time.Time{}, time.Time{}
	s.level, s.allowed, s.outcome, s.breakGlassAt = "", nil, OutcomeNone, time.Time{}
	s.stats = nil
	s.awayMarked = ""
	s.resetDriftLocked()
}

// Refocus acknowledges drift while active.
func (s *Service) Refocus() error {
	s.mu.Lock()
	if err := s.permit(MethodRefocus, ""); err != nil {
		s.mu.Unlock()
		return err
	}
	var w writes
	s.endEpisodeLocked(&w)
	s.closeNoticeLocked(&w)
	if back := s.drift.onTask; s.guard != nil && back.ID != 0 && back.ID != s.window.ID {
		w.effects = append(w.effects, func() { s.activate(back) })
	}
	if s.drift.verdict.Task == TaskOff {
		// Still looking at the distraction: a fresh episode, grace and all.
		s.startEpisodeLocked(&w, s.clock.Now())
	}
	s.commit(w)
	return nil
}

// Allow adds a window class to the session's allowlist.
func (s *Service) Allow(class string) error {
	class, err := cleanClass(class)
	if err != nil {
		return err
	}
	s.mu.Lock()
	if err := s.permit(MethodAllow, ""); err != nil {
		s.mu.Unlock()
		return err
	}
	if containsFold(s.allowed, class) {
		s.mu.Unlock()
		return nil
	}
	if len(s.allowed) >= MaxAllowed {
		s.mu.Unlock()
		return invalid("window_class: this session already allows %d classes, the most there can be", MaxAllowed)
	}
	s.allowed = append(s.allowed, class)
	clear(s.drift.cache)
	w := writes{snapshot: s.snapshotLocked()}
	if v := s.judgeLocked(); v != s.drift.verdict {
		s.recordVerdictLocked(&w, v, s.clock.Now())
	}
	if s.drift.offSince.IsZero() {
		s.closeNoticeLocked(&w) // it offered to allow what is now allowed
	}
	s.commit(w)
	return nil
}

// SetEnforcement changes the session's level (in planning, the planned
// level Start will use).
func (s *Service) SetEnforcement(level string) error {
	l, err := parseLevel("level", level)
	if err != nil {
		return err
	}
	s.mu.Lock()
	if err := s.permit(MethodSetEnforcement, l); err != nil {
		s.mu.Unlock()
		return err
	}
	s.level = l
	s.commit(writes{snapshot: s.snapshotLocked()})
	return nil
}

// BreakGlass starts the hold after which a locked session may be
// abandoned, and returns the seconds left. Calling it again does not
// restart the hold; it reports what is left.
func (s *Service) BreakGlass(reason string) (uint64, error) {
	reason, err := cleanText("reason", reason, true)
	if err != nil {
		return 0, err
	}
	s.mu.Lock()
	if err := s.permit(MethodBreakGlass, ""); err != nil {
		s.mu.Unlock()
		return 0, err
	}
	var w writes
	if s.breakGlassAt.IsZero() {
		s.breakGlassAt = s.clock.Now()
		s.log.Info("break-glass hold started", "session_id", s.sessionID, "hold", s.breakGlassHold, "reason", reason)
		w.snapshot = s.snapshotLocked()
	}
	left := s.breakGlassRemaining()
	s.commit(w)
	return uint64((left + time.Second - 1) / time.Second), nil
}

func (s *Service) breakGlassRemaining() time.Duration {
	if s.breakGlassAt.IsZero() {
		return s.breakGlassHold
	}
	return max(0, s.breakGlassAt.Add(s.breakGlassHold).Sub(s.clock.Now()))
}

func (s *Service) breakGlassElapsed() bool {
	return !s.breakGlassAt.IsZero() && s.breakGlassRemaining() == 0
}

// VerifyAudit walks the audit chain. Permitted in every state; the table
// is still asked so a future change to it is honoured here.
func (s *Service) VerifyAudit() (AuditReport, error) {
	if err := s.permitted(MethodVerifyAudit); err != nil {
		return AuditReport{}, err
	}
	return s.store.VerifyAudit(), nil
}

// History returns sealed summaries, newest first. limit 0 means 50.
func (s *Service) History(limit uint32) ([]Summary, error) {
	if limit > MaxHistoryLimit {
		return nil, invalid("limit must be at most %d; got %d", MaxHistoryLimit, limit)
	}
	if limit == 0 {
		limit = DefaultHistoryLimit
	}
	if err := s.permitted(MethodHistory); err != nil {
		return nil, err
	}
	h, err := s.store.History(int(limit))
	if err != nil {
		return nil, &Error{Kind: Storage, Msg: fmt.Sprintf("could not read audit.jsonl: %v", err)}
	}
	return h, nil
}

// permitted asks the table for a method that needs no state change.
func (s *Service) permitted(m Method) error {
	s.mu.Lock()
	defer s.mu.Unlock()
	if err := s.permit(m, ""); err != nil {
		return err
	}
	return nil
}

// armTimerLocked (re)arms the one deadline timer. Caller holds mu.
func (s *Service) armTimerLocked() {
	s.stopTimerLocked()
	id, d := s.sessionID, s.deadline.Sub(s.clock.Now())
	s.timer = s.clock.AfterFunc(d, func() { s.expire(id) })
}

func (s *Service) stopTimerLocked() {
	if s.timer != nil {
		s.timer.Stop()
		s.timer = nil
	}
}

// expire moves session id to review when its deadline has passed. A timer
// that fires late for a session that was extended or ended does nothing.
func (s *Service) expire(id string) {
	s.mu.Lock()
	if s.state != StateActive || s.sessionID != id {
		s.mu.Unlock()
		return
	}
	var w writes
	if now := s.tickLocked(&w); s.state == StateActive && now.Before(s.deadline) {
		s.armTimerLocked() // the wall clock was set back: wait for the deadline in wall time
	}
	s.commit(w)
}

// Recover restores the state a previous run left in snap (the zero
// Snapshot when there was none): it replays the raw log to rebuild the
// stats exactly, re-arms the deadline or expires the session if it passed
// meanwhile, and seals summaries left pending.
func (s *Service) Recover(snap Snapshot) error {
	var events []FocusEvent
	live := snap.State == StateActive || snap.State == StateReview
	if live && snap.SessionID != "" {
		var err error
		if events, err = s.store.ReplayEvents(snap.SessionID); err != nil {
			s.problems.set("replay", fmt.Sprintf("The raw log of session %s could not be read (%v); its time is counted as evidence unavailable.", snap.SessionID, err))
		}
	}

	s.mu.Lock()
	s.io.Lock()
	s.pending = slices.Clone(snap.Pending)
	s.io.Unlock()
	w := writes{flushPending: true}
	if snap.State == "" || (live && snap.SessionID == "") {
		snap.State = StateLocked
	}
	s.state, s.sessionID = snap.State, snap.SessionID
	s.nextAction, s.successCond = snap.NextAction, snap.SuccessCondition
	s.timebox = time.Duration(snap.TimeboxSecs) * time.Second
	s.startedAt, s.deadline = fromUnixMilli(snap.StartedUnixMilli), fromUnixMilli(snap.DeadlineUnixMilli)
	s.endedAt = fromUnixMilli(snap.EndedUnixMilli)
	s.level, s.allowed, s.outcome = snap.Enforcement, slices.Clone(snap.AllowedClasses), snap.Outcome
	s.breakGlassAt = fromUnixMilli(snap.BreakGlassUnixMilli)
	s.resetDriftLocked()
	now := s.clock.Now()
	s.lastWall, s.lastMono = now, s.clock.Mono()
	if live {
		s.stats = newStats()
		for _, e := range events {
			s.stats.apply(e)
		}
		if s.stats.isAway && s.state == StateActive {
			// Nobody knows whether the person is still away: count the
			// downtime as away and let the sources say so again.
			s.account(&w, FocusEvent{AtUnixMillis: now.UnixMilli(), Mark: MarkBack})
		}
		if len(events) == 0 {
			s.account(&w, FocusEvent{AtUnixMillis: s.startedAt.UnixMilli(), Reason: "the raw log of this session was missing"})
			if s.state == StateReview {
				s.account(&w, FocusEvent{AtUnixMillis: s.endedAt.UnixMilli(), Mark: MarkPause})
			}
		}
	}
	if s.state == StateActive {
		if now.Before(s.deadline) {
			s.armTimerLocked()
		} else {
			s.log.Info("session expired while the daemon was down", "session_id", s.sessionID)
			expired := s.toReviewLocked(OutcomeExpired, s.deadline)
			w.events = append(w.events, expired.events...)
			w.sessionID, w.snapshot = expired.sessionID, expired.snapshot
		}
	}
	if w.snapshot == nil {
		w.snapshot = s.snapshotLocked()
	}
	s.commit(w)
	return nil
}

// Shutdown records that the daemon is stopping, so the downtime is not
// credited to the last window, and stops the deadline timer. The process
// is expected to exit after it.
func (s *Service) Shutdown() {
	defer s.background.Wait()
	s.mu.Lock()
	s.stopTimerLocked()
	s.stopDriftTimersLocked()
	var w writes
	if s.state == StateActive {
		s.account(&w, FocusEvent{AtUnixMillis: s.clock.Now().UnixMilli(), Reason: "daemon stopped"})
	}
	s.commit(w)
	if s.nudges != nil {
		s.nudges.stop()
	}
}
