package service

import "time"

// State is where a session is in its life. Locked → Planning → Active →
// Review → Locked.
type State string

const (
	StateLocked   State = "locked"
	StatePlanning State = "planning"
	StateActive   State = "active"
	StateReview   State = "review"
)

// phrase is the state as it reads after "antidrift is".
func (s State) phrase() string {
	if s == StateReview {
		return "in review"
	}
	return string(s)
}

// States lists every state, in life order. Tests sweep it.
var States = []State{StateLocked, StatePlanning, StateActive, StateReview}

// Outcome is how an active session ended its active phase.
type Outcome string

const (
	OutcomeNone      Outcome = ""
	OutcomeCompleted Outcome = "completed" // Complete was called
	OutcomeExpired   Outcome = "expired"   // the deadline passed
	OutcomeAbandoned Outcome = "abandoned" // Abandon was called
)

// Level is how hard the session pushes back on drift.
type Level string

const (
	LevelObserve Level = "observe" // track only
	LevelWarn    Level = "warn"    // nudge
	LevelBlock   Level = "block"   // nudge and iconify
	LevelLocked  Level = "locked"  // block, and no abandoning, relaxing or widening before the deadline
)

// Levels lists every level from gentlest to strictest; rank is the index.
var Levels = []Level{LevelObserve, LevelWarn, LevelBlock, LevelLocked}

// LevelNames is Levels as the words a person types.
func LevelNames() []string {
	names := make([]string, len(Levels))
	for i, l := range Levels {
		names[i] = string(l)
	}
	return names
}

// rank orders levels so "lowering" has a meaning. Unknown levels rank -1.
func (l Level) rank() int {
	for i, x := range Levels {
		if x == l {
			return i
		}
	}
	return -1
}

// Window is what the focus sensor saw: the active window, or why there is
// none to see. Title is the raw title; it is private and never logged above
// debug level.
type Window struct {
	// ID is an opaque handle that only the evidence source that made it
	// interprets (an X11 window id, a Wayland foreign-toplevel handle, KWin's
	// internalId, a Mutter window id); "" when unknown. The core compares
	// handles and hands them back to the Guard, nothing more.
	ID       string
	Class    string // WM_CLASS class part, e.g. "Firefox"
	Instance string // WM_CLASS instance part, e.g. "Navigator"
	Title    string // _NET_WM_NAME (or WM_NAME), unscrubbed
	// AppID is the app id the window itself states where the source reads
	// one (X11: _GTK_APPLICATION_ID); "" else. Only matched to a desktop
	// entry (AppDirectory), never shown, stored or judged.
	AppID string
	// Site is the page in front when the window is a browser's and its
	// extension's tab report fits it (TabFits): host and path, uncut
	// (SiteFromParts); DisplaySite where it is shown or stored.
	// Only the core sets it; sources leave it "".
	Site string
	// App is the window's desktop entry, as the AppDirectory names it; only
	// the core sets it, where the window enters (RecordWindow).
	App       App
	Available bool
	Reason    string // why evidence is unavailable; empty when Available
}

// App is a window's desktop entry: its desktop id (without ".desktop"),
// its name as the desktop shows it (localized; outside text, exact) and
// its Icon= value. The zero App is none.
type App struct {
	ID, Name, Icon string
}

// displayName is how a window is named to a person in a nudge: its app's
// name when it has a desktop entry, else displayClass.
func displayName(w Window) string {
	if w.App.Name != "" {
		return w.App.Name
	}
	return displayClass(w)
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

// FocusEvent is one line of a session's raw log (sessions/<id>.jsonl). The
// raw log is the source of truth for a session's accounting: replaying it
// through the same code that accounted the live events rebuilds identical
// stats.
type FocusEvent struct {
	// Version is the raw-log line's format: absent (1), or
	// RawLogTaskVersion for a MarkTask line.
	Version      int    `json:"version,omitempty"`
	AtUnixMillis int64  `json:"at_unix_millis"`
	Class        string `json:"class"`
	Instance     string `json:"instance,omitempty"`
	Title        string `json:"title"`
	// Site is the page in front (host and path, never a query), for a
	// browser window whose tab report fits it.
	Site      string `json:"site,omitempty"`
	Available bool   `json:"available"`
	Reason    string `json:"reason"`
	// OffTask is the verdict on this window: its time counts as
	// drift. Recorded so replay rebuilds drift_seconds without deciding again.
	OffTask bool `json:"off_task,omitempty"`
	// Mark is empty for a focus event; otherwise see the Mark* constants.
	Mark string `json:"mark,omitempty"`
	// JumpMillis is, for MarkClock, how far the wall clock was set
	// (forward > 0) since the event before.
	JumpMillis int64 `json:"jump_millis,omitempty"`
	// Task is, for MarkTask, the task the session works on.
	Task *SessionTask `json:"task,omitempty"`
}

// RawLogTaskVersion is the raw-log line format of a MarkTask line (an
// older reader would take it for a window); every other line stays 1.
const RawLogTaskVersion = 2

// FocusEvent marks: things that happened to the session that are not a
// change of window, recorded so replay rebuilds identical stats.
const (
	// MarkPause: accounting stopped (the session went to review). The next
	// focus event resumes it without crediting the gap to anyone.
	MarkPause = "pause"
	// MarkVerdict: the current window was decided again (a class was
	// allowed, or a slow verdict arrived); OffTask is the new verdict.
	MarkVerdict = "verdict"
	// MarkMinimized: the guard iconified the drifting window.
	MarkMinimized = "minimized"
	// MarkTabBlocked: the browser's extension was told to replace the
	// drifting tab's page (Site) with its own; the window stayed.
	MarkTabBlocked = "tab_blocked"
	// MarkTask: the session works on Task (its first line, for a session
	// started from a task); accounting ignores it.
	MarkTask = "task"
	// MarkNotDistraction: the person said the window of Class and (scrubbed)
	// Title is not a distraction; it counts as on task for the rest of the
	// session. Replay restores the exemption; accounting ignores the mark
	// (the MarkVerdict after it, if any, moves the drift time).
	MarkNotDistraction = "not_distraction"
	// MarkAway: the person went away (Reason is an AwayReason); time
	// accrues to (away), or (suspended), until MarkBack.
	MarkAway = "away"
	MarkBack = "back"
	// MarkClock: the wall clock was set by JumpMillis. The time since the
	// event before is what the boot clock measured, not the jump; the
	// jump is counted (clock_jumps).
	MarkClock = "clock"
)

// AwayReason is why the person is away from the desk.
type AwayReason = string

const (
	AwayIdle      AwayReason = "idle"      // no input for idle_after
	AwayLocked    AwayReason = "locked"    // the screen is locked
	AwaySuspended AwayReason = "suspended" // the machine is asleep
	// AwayBreak: the desktop's break manager says the person is taking the
	// break it asked for (GNOME Shell's ScreenTime state IN_BREAK).
	AwayBreak AwayReason = "break"
)

// Bucket is the time one (class, scrubbed title) held focus.
type Bucket struct {
	Class   string `json:"class"`
	Title   string `json:"title"`
	Seconds uint64 `json:"seconds"`
}

// SiteTime is the time pages of one host were in front, and how much of
// it was drift.
type SiteTime struct {
	Host         string `json:"host"`
	Seconds      uint64 `json:"seconds"`
	DriftSeconds uint64 `json:"drift_seconds,omitempty"`
}

// Summary is one ended session as sealed into the audit chain. The field
// order is the audit line's key order and is part of the file format: the
// hash covers the line's exact bytes. Seq, PrevHash and Hash are assigned by
// the store when the summary is appended.
type Summary struct {
	// Version is the audit line's format: absent (1), or
	// SummaryTaskVersion for a summary with a Task.
	Version          int     `json:"version,omitempty"`
	Seq              uint64  `json:"seq"`
	PrevHash         string  `json:"prev_hash"`
	SessionID        string  `json:"session_id"`
	NextAction       string  `json:"next_action"`
	SuccessCondition string  `json:"success_condition"`
	Outcome          Outcome `json:"outcome"`
	Enforcement      Level   `json:"enforcement"`
	StartedUnix      int64   `json:"started_unix"`
	EndedUnix        int64   `json:"ended_unix"`
	TimeboxSecs      uint64  `json:"timebox_secs"`
	SwitchCount      uint32  `json:"switch_count"`
	DriftSeconds     uint64  `json:"drift_seconds"`
	AwaySeconds      uint64  `json:"away_seconds"`
	MinimizeCount    uint32  `json:"minimize_count"`
	BreakGlass       bool    `json:"break_glass"`
	// ClockJumps counts the times the wall clock was set during the
	// session; the timebox ran on the boot clock regardless.
	ClockJumps uint32   `json:"clock_jumps,omitempty"`
	Buckets    []Bucket `json:"buckets"`
	// Sites is the time per host of the pages in front (TopSites of
	// them, the rest in (other)); hosts only, never a path.
	Sites []SiteTime `json:"sites,omitempty"`
	// Task is the task the session worked on and what became of it
	// (nil: the next action was typed by hand).
	Task *TaskRecord `json:"task,omitempty"`
	Hash string      `json:"hash"`
}

// AuditReport is the result of walking the audit chain.
type AuditReport struct {
	OK      bool
	Entries uint32 // lines that verify before the first bad one
	// Problem says in sentences what is wrong (empty when OK): how many
	// lines are bad, the first few by line and seq, whether the lines after
	// the first bad one still chain among themselves, and whether the file
	// ends short of the recorded head.
	Problem string
	// BadLines counts the lines that do not verify; FirstBad names the
	// first few.
	BadLines uint32
	FirstBad []string
	// RestChains is true when every line after the first bad one links to
	// the line before it: one altered line, not a rewritten tail.
	RestChains bool
	// Head is the last line's seq and hash; Anchor the head recorded at
	// the last seal (zero when none is known). MissingTail is set when the
	// file does not reach or does not match the anchor.
	Head        AuditHead
	Anchor      AuditHead
	MissingTail bool
}

// AuditHead is the end of the chain as recorded at a seal: its seq, hash,
// and when it was sealed. state.json and the journal keep it, so a chain
// cut short at a line boundary no longer verifies.
type AuditHead struct {
	Seq             uint64 `json:"seq"`
	Hash            string `json:"hash"`
	SealedUnixMilli int64  `json:"sealed_unix_millis,omitempty"`
}

// AuditHeadMessageID is the journal MESSAGE_ID of the entry logged at
// every seal (ANTIDRIFT_AUDIT_SEQ, ANTIDRIFT_AUDIT_HASH,
// ANTIDRIFT_SESSION_ID): antidrift verify --journal reads them back.
const AuditHeadMessageID = "257ea6b803dc4cdd96f89ac361a274a7"

// Snapshot is the latest-wins record of the core's durable state
// (state.json). It is written on every transition, never per focus event:
// per-event detail lives in the raw log.
type Snapshot struct {
	Version           int      `json:"version"`
	State             State    `json:"state"`
	SessionID         string   `json:"session_id,omitempty"`
	NextAction        string   `json:"next_action,omitempty"`
	SuccessCondition  string   `json:"success_condition,omitempty"`
	TimeboxSecs       uint64   `json:"timebox_secs,omitempty"`
	StartedUnixMilli  int64    `json:"started_unix_millis,omitempty"`
	DeadlineUnixMilli int64    `json:"deadline_unix_millis,omitempty"`
	Enforcement       Level    `json:"enforcement,omitempty"`
	AllowedClasses    []string `json:"allowed_classes,omitempty"`
	Outcome           Outcome  `json:"outcome,omitempty"`
	// EndedUnixMilli is when the active phase ended (the move to review).
	EndedUnixMilli      int64 `json:"ended_unix_millis,omitempty"`
	BreakGlassUnixMilli int64 `json:"break_glass_unix_millis,omitempty"`
	// Pending are ended sessions whose summary is not yet in the audit chain
	// (the append failed, or the daemon died between End and the append).
	Pending []Summary `json:"pending,omitempty"`
	// AuditHead is the head of audit.jsonl at the last seal, written only
	// after that line was durable. The store owns it: it fills it in on
	// save, and keeps it when the file falls short of it.
	AuditHead *AuditHead `json:"audit_head,omitempty"`
	// The wall and boot clocks at the last event before the save, and the
	// boot they belong to: a restart in the same boot compares them to
	// find a date set while the daemon was down.
	ClockWallUnixMilli int64  `json:"clock_wall_unix_millis,omitempty"`
	ClockBootMillis    int64  `json:"clock_boot_millis,omitempty"`
	BootID             string `json:"boot_id,omitempty"`
	// ClockSetBackMillis sums how far the date was set back during the
	// session: replay accepts raw-log lines that much outside its span.
	ClockSetBackMillis int64 `json:"clock_set_back_millis,omitempty"`
	// Quiet says the session is quiet (Do Not Disturb while active).
	Quiet bool `json:"quiet,omitempty"`
	// Task is the session's task (nil: typed by hand); TaskResult what
	// became of it.
	Task       *SessionTask `json:"task,omitempty"`
	TaskResult string       `json:"task_result,omitempty"`
}

// SnapshotVersion is the newest state.json format this build reads and
// writes: 2 added task and task_result. A snapshot without them is written
// as version 1 (Format), so a daemon from before tasks still reads it.
const SnapshotVersion = 2

// SummaryTaskVersion is the audit line format of a summary with a task
// (an older reader would drop it); one without stays version 1.
const SummaryTaskVersion = 2

// Format is the version snap is written in: the oldest that holds it.
func (snap Snapshot) Format() int {
	if snap.Task != nil || snap.TaskResult != "" {
		return 2
	}
	for _, p := range snap.Pending {
		if p.Task != nil {
			return 2
		}
	}
	return 1
}

func unixMilli(t time.Time) int64 {
	if t.IsZero() {
		return 0
	}
	return t.UnixMilli()
}

func fromUnixMilli(ms int64) time.Time {
	if ms == 0 {
		return time.Time{}
	}
	return time.UnixMilli(ms)
}

func unixSeconds(t time.Time) int64 {
	if t.IsZero() {
		return 0
	}
	return t.Unix()
}
