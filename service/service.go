package service

import (
	"context"
	"fmt"
	"log/slog"
	"maps"
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
	// EvidenceSource names where window evidence comes from (x11,
	// wlroots, kwin, gnome-shell, none), for the EvidenceSource property.
	// The core never branches on it.
	EvidenceSource string

	DefaultLevel   Level    // used when Start passes ""; default warn
	DefaultAllowed []string // used when Start passes no classes
	// Distractions are rules (CLASS or CLASS:TITLE-GLOB) that are always
	// off task, even in an allowed class. Entries that do not parse are
	// skipped with a log line (config checks them first).
	Distractions   []string
	BreakGlassHold time.Duration // the wait before a locked session may be abandoned; zero is none
	DriftGrace     time.Duration // how long an off-task window may hold focus before it is drift; 0 = at once
	NudgeRepeat    time.Duration // how often a nudge repeats while drift lasts; default 2 minutes

	IdleAfter time.Duration // the idle threshold, for the words of DriftReason

	// PrivateClasses never have their title recorded anywhere, and
	// RedactTitles matches are replaced with "…" before a title is.
	PrivateClasses []string
	RedactTitles   []*regexp.Regexp

	// JudgeSitePaths tells the judge a page's path beside its host
	// (judge_site_paths); by default it hears the host only.
	JudgeSitePaths bool

	Judge    Judge        // asked about windows no rule decides; nil: they are off task
	Coach    Coach        // asked for a proposal in planning; nil: Coach answers NoModel
	Guard    Guard        // nil: nothing is enforced
	Notifier Notifier     // nil: no notifications
	Reporter Reporter     // nil: Report answers that reports are unavailable
	Quieter  Quieter      // nil: quiet sessions silence nothing
	Apps     AppDirectory // nil: windows are named by their class only
	// Tasks are the task managers a session may start from (none: only
	// by hand), each under its own Name.
	Tasks []TaskSource
	// RulesFile is where ApplyProposal writes (config's rules.toml); nil:
	// proposals cannot be applied.
	RulesFile RulesFile
	// Noter writes the review's note (the model, llmjudge); nil: none.
	Noter ReviewNoter

	// Quiet makes every session quiet unless Start is told otherwise
	// (SetQuiet): other apps' notifications do not pop up while it is
	// active (config's quiet).
	Quiet bool

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
	store           Store
	clock           Clock
	bootID          string // the clock's BootID, read once
	log             *slog.Logger
	version         string
	evidenceSource  string
	defaultLevel    Level
	defaultAllowed  []string
	breakGlassHold  time.Duration
	driftGrace      time.Duration
	nudgeRepeat     time.Duration
	judge           Judge // nil: rules only
	coach           Coach // nil: no model to coach with
	judgeHearsPaths bool  // the judge is told a site's path, not just its host
	distractions    []Rule
	guard           Guard
	reporter        Reporter
	idleAfter       time.Duration
	privacy         privacy
	nudges          *nudger         // nil without a notifier
	quieter         Quieter         // nil: nothing is silenced
	apps            AppDirectory    // nil: no desktop entries
	rulesFile       RulesFile       // nil: proposals cannot be applied
	rulesMu         sync.Mutex      // orders writes of the rules file; never held with mu waiting on it
	noter           ReviewNoter     // nil: no review note
	stopCtx         context.Context // cancelled when Shutdown starts: ends a note being asked
	stopBg          context.CancelFunc
	quietDefault    bool           // config's quiet
	background      sync.WaitGroup // enforcement goroutines
	bgMu            sync.Mutex     // orders background.Add before Shutdown's Wait
	bgStopped       bool
	tasks           tasksPart

	mu            sync.Mutex
	listeners     []Listener
	state         State
	sessionID     string
	nextAction    string
	successCond   string
	timebox       time.Duration
	startedAt     time.Time
	deadline      time.Time
	endedAt       time.Time
	level         Level    // the session's level; in planning, the planned one
	allowed       []string // the session's allowed entries, as written
	allowedDuring []string // those of them Allow added while active (the review proposes them)
	rules         []Rule   // allowed, compiled
	outcome       Outcome
	breakGlassAt  time.Time
	timer         Timer
	stats         *stats // nil when no session is live
	window        Window // the latest the sensor reported, session or not, with the site its tab report gives it
	tabs          tabs   // what the browsers' extensions report, and how it fits window
	drift         drift
	presence      map[string]AwayReason // source → reason, for sources saying away
	awayMarked    AwayReason            // what the session's raw log says now ("" = present)
	breakDue      bool                  // the desktop's break manager says a break is due
	lastWall      time.Time             // the clock at the last event, to catch suspends and a set date
	lastMono      time.Duration
	lastBoot      time.Duration
	clockSetBack  time.Duration      // how far the date was set back this session
	quiet         bool               // the session is quiet (Do Not Disturb)
	plannedQuiet  *bool              // in locked and planning: SetQuiet's choice for the next Start
	quietNote     string             // the Quieter's sentence for the person
	appsSeen      map[string]seenApp // class → the app it was last seen as (BucketApps)
	appsGen       atomic.Uint64      // AppsChanged calls: a lookup made across one is made again
	task          *SessionTask       // the session's task; nil: typed by hand
	taskResult    string             // what became of it: TaskResult
	taskEnding    taskEnd            // how the active phase now ending ends the task
	review        reviewCache        // the reviewed session's proposals (reviewapply.go)
	reviewNote    string             // the model's note on the session in review (reviewnote.go)
	proposal      Proposal           // the coach's, kept until Start, CancelPlan or the next Coach
	coachGen      uint64             // counts Coach calls, Starts and CancelPlans: an older answer is dropped

	io      sync.Mutex
	pending []Summary // guarded by io: ended sessions not yet in the chain
	// Guarded by io: what the Quieter was last told, so it hears each
	// change once and in order.
	quietTold, quietSent bool

	// Published by the io side for View, which must not wait for io.
	auditHead    atomic.Value // string
	pendingCount atomic.Uint32
	problems     problems
}

// New builds a Service in the locked state. Call Recover before serving.
func New(o Options) *Service {
	s := &Service{
		store:           o.Store,
		clock:           o.Clock,
		log:             o.Logger,
		version:         o.Version,
		evidenceSource:  o.EvidenceSource,
		defaultLevel:    o.DefaultLevel,
		defaultAllowed:  slices.Clone(o.DefaultAllowed),
		breakGlassHold:  o.BreakGlassHold,
		driftGrace:      o.DriftGrace,
		nudgeRepeat:     o.NudgeRepeat,
		judge:           o.Judge,
		coach:           o.Coach,
		judgeHearsPaths: o.JudgeSitePaths,
		guard:           o.Guard,
		reporter:        o.Reporter,
		quieter:         o.Quieter,
		apps:            o.Apps,
		rulesFile:       o.RulesFile,
		noter:           o.Noter,
		quietDefault:    o.Quiet,
		idleAfter:       o.IdleAfter,
		privacy:         privacy{classes: slices.Clone(o.PrivateClasses), redact: slices.Clone(o.RedactTitles)},
		presence:        map[string]AwayReason{},
		state:           StateLocked,
		window:          Window{Reason: "no focus information yet"},
	}
	s.tabs = newTabs(s.window)
	s.tasks.sources = map[string]TaskSource{}
	for _, src := range o.Tasks {
		s.tasks.sources[src.Name()] = src
	}
	s.tasks.names = slices.Sorted(maps.Keys(s.tasks.sources))
	s.stopCtx, s.stopBg = context.WithCancel(context.Background())
	if s.clock == nil {
		s.clock = SystemClock{}
	}
	s.bootID = s.clock.BootID()
	if s.log == nil {
		s.log = slog.Default()
	}
	if s.defaultLevel == "" {
		s.defaultLevel = LevelWarn
	}
	if s.nudgeRepeat <= 0 {
		s.nudgeRepeat = 2 * time.Minute
	}
	s.distractions = s.compileRules("distractions", o.Distractions)
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
	s.state, s.level, s.plannedQuiet = to, "", nil
	s.dropProposalLocked()
	s.commitUnlocks(writes{snapshot: s.snapshotLocked()})
	return nil
}

// Start commits to a next action, a success condition and a timebox, and
// starts accounting. enforcement "" means the level planned in planning, or
// the configured default; no classes means the configured default ones.
func (s *Service) Start(nextAction, successCondition string, timeboxSecs uint64, enforcement string, allowed []string) (string, error) {
	return s.start(MethodStart, nextAction, successCondition, timeboxSecs, enforcement, allowed, nil)
}

// start is Start as method m, with the session's task (nil: none).
func (s *Service) start(m Method, nextAction, successCondition string, timeboxSecs uint64, enforcement string, allowed []string, task *SessionTask) (string, error) {
	a, err := checkStart(nextAction, successCondition, timeboxSecs, enforcement, allowed)
	if err != nil {
		return "", err
	}
	next, success, level, classes, rules := a.next, a.success, a.level, a.classes, a.rules
	id, uerr := uuid.NewV7()
	if uerr != nil {
		return "", &Error{Kind: Storage, Msg: "could not make a session id: " + uerr.Error()}
	}

	s.mu.Lock()
	if err := s.permit(m, ""); err != nil {
		s.mu.Unlock()
		return "", err
	}
	if level == "" {
		level = s.level // planned in planning; "" when straight from locked
	}
	quiet := s.plannedQuiet // SetQuiet's choice before Start; nil: the configured one
	if level == "" {
		level = s.defaultLevel
	}
	if len(classes) == 0 {
		classes = slices.Clone(s.defaultAllowed)
		rules = s.compileRules("allowed_classes", classes)
	}
	now := s.clock.Now()
	s.dropProposalLocked()
	s.state, s.sessionID = StateActive, id.String()
	s.nextAction, s.successCond = next, success
	s.timebox = time.Duration(timeboxSecs) * time.Second
	s.startedAt, s.deadline, s.endedAt = now, now.Add(s.timebox), time.Time{}
	s.level, s.allowed, s.rules, s.outcome, s.breakGlassAt = level, classes, rules, OutcomeNone, time.Time{}
	s.allowedDuring = nil
	s.stats = newStats()
	s.resetDriftLocked()
	s.armTimerLocked()
	s.lastWall, s.lastMono, s.lastBoot, s.awayMarked = now, s.clock.Mono(), s.clock.Boot(), ""
	s.clockSetBack = 0
	s.quiet, s.plannedQuiet = s.quietDefault, nil
	if quiet != nil {
		s.quiet = *quiet
	}
	s.task, s.taskResult, s.taskEnding = task, "", taskEndWriteBack
	w := writes{snapshot: s.snapshotLocked()}
	if task != nil {
		s.account(&w, FocusEvent{Version: RawLogTaskVersion, AtUnixMillis: now.UnixMilli(), Mark: MarkTask, Task: s.taskCopyLocked()})
	}
	s.startedTaskLocked(&w)
	s.syncAwayLocked(&w, now) // away before the first verdict: no drift while away
	s.observeLocked(&w, now)
	s.log.Info("session started", "session_id", s.sessionID, "state", s.state, "timebox", s.timebox, "enforcement", level, "quiet", s.quiet)
	s.commitUnlocks(w)
	return id.String(), nil
}

// Complete ends the active phase with success.
func (s *Service) Complete() error {
	return s.endActive(MethodComplete, OutcomeCompleted, "", taskEndWriteBack)
}

// Abandon ends the active phase without success.
func (s *Service) Abandon(reason string) error {
	reason, err := cleanText("reason", reason, false)
	if err != nil {
		return err
	}
	return s.endActive(MethodAbandon, OutcomeAbandoned, reason, taskEndWriteBack)
}

// toReviewLocked ends the active phase at t: accounting stops there and
// the stats freeze. Caller holds mu.
func (s *Service) toReviewLocked(o Outcome, t time.Time) writes {
	s.stopTimerLocked()
	var w writes
	s.endEpisodeLocked(&w)
	s.closeNoticeLocked(&w)
	s.restoreTabsLocked(&w)
	s.state, s.outcome, s.endedAt, s.awayMarked = StateReview, o, t, ""
	s.account(&w, FocusEvent{AtUnixMillis: t.UnixMilli(), Mark: MarkPause})
	if o == OutcomeExpired && s.nudges != nil {
		note := s.deadlineNotification()
		w.effects = append(w.effects, func() { s.nudges.showDeadline(note) })
	}
	s.taskEndLocked(&w, o)
	w.snapshot = s.snapshotLocked()
	s.reviewNote = ""
	s.askReviewNoteLocked(&w)
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
		s.commitUnlocks(w)
		return err
	}
	add := time.Duration(secs) * time.Second
	if s.timebox+add > MaxTimebox {
		s.commitUnlocks(w)
		total := uint64((s.timebox + add).Round(time.Second) / time.Second)
		return (&Fault{Argument: "secs", Rule: RuleTimeboxTotal, Got: secs, Total: total, Limit: int64(MaxTimebox / time.Second)}).err()
	}
	s.timebox += add
	if s.state == StateReview {
		s.state, s.outcome, s.endedAt, s.deadline = StateActive, OutcomeNone, time.Time{}, now.Add(add)
		s.taskResult = ""
		s.closeDeadlineLocked(&w)
		s.syncAwayLocked(&w, now)
		s.observeLocked(&w, now)
	} else {
		s.deadline = s.deadline.Add(add)
	}
	s.armTimerLocked()
	w.snapshot = s.snapshotLocked()
	s.commitUnlocks(w)
	return nil
}

// End seals a reviewed session into the audit chain and returns to locked.
// The hash is "" when sealing failed; the summary then stays pending.
func (s *Service) End() (string, error) {
	s.awaitTaskResult()
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
	return s.commitUnlocks(w), nil
}

func (s *Service) closeDeadlineLocked(w *writes) {
	if s.nudges != nil {
		w.effects = append(w.effects, s.nudges.closeDeadline)
	}
}

func (s *Service) summaryLocked() Summary {
	sum := Summary{
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
		ClockJumps:       s.stats.clockJumps,
		Buckets:          s.stats.topN(), // bounded: a few KB whatever the session saw
		Sites:            s.stats.topSites(),
		Task:             s.taskRecordLocked(),
	}
	if sum.Task != nil {
		sum.Version = SummaryTaskVersion
	}
	return sum
}

func (s *Service) clearSessionLocked() {
	s.stopTimerLocked()
	s.state, s.sessionID, s.nextAction, s.successCond = StateLocked, "", "", ""
	s.timebox, s.startedAt, s.deadline, s.endedAt = 0, time.Time{}, time.Time{}, time.Time{}
	s.level, s.allowed, s.rules, s.outcome, s.breakGlassAt = "", nil, nil, OutcomeNone, time.Time{}
	s.allowedDuring = nil
	s.stats = nil
	s.awayMarked = ""
	s.quiet, s.plannedQuiet = false, nil
	s.task, s.taskResult, s.taskEnding = nil, "", taskEndWriteBack
	s.reviewNote = ""
	s.resetDriftLocked()
}

// Refocus acknowledges drift while active.
func (s *Service) Refocus() error {
	s.mu.Lock()
	var w writes
	now := s.tickLocked(&w)
	if err := s.permit(MethodRefocus, ""); err != nil {
		s.commitUnlocks(w)
		return err
	}
	s.endEpisodeLocked(&w)
	s.closeNoticeLocked(&w)
	if back := s.drift.onTask; s.guard != nil && back.ID != "" && back.ID != s.window.ID {
		w.effects = append(w.effects, func() { s.activate(back) })
	}
	if s.drift.verdict.Task == TaskOff && s.awayMarked == "" {
		// Still looking at the distraction: a fresh episode, grace and all.
		s.startEpisodeLocked(&w, now, now)
	}
	s.commitUnlocks(w)
	return nil
}

// Allow adds an entry to the session's allowlist: a window class, or a
// class narrowed to titles (CLASS:TITLE-GLOB).
func (s *Service) Allow(entry string) error {
	rule, err := cleanRule("window_class", 0, entry)
	if err != nil {
		return err
	}
	return s.widen(func(w *writes, now time.Time) *Error {
		switch {
		case containsFold(s.allowed, rule.Text):
			return nil
		case len(s.allowed) >= MaxAllowed:
			return (&Fault{Argument: "window_class", Rule: RuleAllowFull, Limit: MaxAllowed}).err()
		}
		s.allowed, s.rules = append(s.allowed, rule.Text), append(s.rules, rule)
		s.allowedDuring = append(s.allowedDuring, rule.Text)
		w.snapshot = s.snapshotLocked()
		s.redecideLocked(w, now)
		return nil
	})
}

// widen runs add, which widens the session (Allow, "Not a distraction"),
// under the lock once Allow's entry in the permission table permits it, and
// commits what add recorded.
func (s *Service) widen(add func(w *writes, now time.Time) *Error) error {
	s.mu.Lock()
	var w writes
	now := s.tickLocked(&w)
	err := s.permit(MethodAllow, "")
	if err == nil {
		err = add(&w, now)
	}
	s.commitUnlocks(w)
	if err != nil {
		return err
	}
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
	s.commitUnlocks(writes{snapshot: s.snapshotLocked()})
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
	var w writes
	now := s.tickLocked(&w) // a date set since the last event must not move the hold
	if err := s.permit(MethodBreakGlass, ""); err != nil {
		s.commitUnlocks(w)
		return 0, err
	}
	if s.breakGlassAt.IsZero() {
		s.breakGlassAt = now
		s.log.Info("break-glass hold started", "session_id", s.sessionID, "hold", s.breakGlassHold, "reason", reason)
		w.snapshot = s.snapshotLocked()
		s.armHoldLocked()
	}
	left := s.breakGlassRemaining()
	s.commitUnlocks(w)
	return uint64((left + time.Second - 1) / time.Second), nil
}

func (s *Service) breakGlassRemaining() time.Duration {
	if s.breakGlassAt.IsZero() {
		return s.breakGlassHold
	}
	return max(0, s.breakGlassAt.Add(s.breakGlassHold).Sub(s.liveNowLocked()))
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
	r := s.store.VerifyAudit()
	s.checkChain(r)
	s.mu.Lock()
	s.commitUnlocks(writes{}) // Problems may have changed
	return r, nil
}

// checkChain keeps a sentence in Problems while the audit chain does not
// verify. New summaries are still sealed after a damaged line: refusing
// them would lose sessions to protect a chain that is already broken, and
// the damage stays in place, named, for a person to look at.
func (s *Service) checkChain(r AuditReport) {
	if r.OK {
		s.problems.clear("chain")
	} else {
		s.problems.set("chain", "audit.jsonl does not verify: "+r.Problem+". Sessions are still sealed after it; the damaged line is left as it is.")
	}
}

// History returns sealed summaries, newest first. limit 0 means 50.
func (s *Service) History(limit uint32) ([]Summary, error) {
	if limit > MaxHistoryLimit {
		return nil, (&Fault{Argument: "limit", Rule: RuleAtMost, Got: uint64(limit), Limit: MaxHistoryLimit}).err()
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
