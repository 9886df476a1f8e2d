package service

import (
	"fmt"
	"slices"
	"time"
)

// TopBuckets is how many buckets the View carries and a summary seals by
// name; a remainder per class named and the reserved buckets follow (see
// stats.listed), so the list stays bounded and adds up.
const TopBuckets = 20

// Drift values. Outside an active session drift is "none".
const (
	DriftNone     = "none"
	DriftUnknown  = "unknown"
	DriftOnTask   = "on_task"
	DriftDrifting = "drifting"
	DriftAway     = "away"
	// DriftBreak is away for a break the desktop asked for (GNOME's break
	// reminders): like away, never drift.
	DriftBreak = "break"
)

// View is everything a client can read about the core, one field per
// D-Bus property. It is a copy; holding it holds no lock.
type View struct {
	State            State
	SessionID        string
	NextAction       string
	SuccessCondition string
	TimeboxSeconds   uint64
	StartedAt        int64 // unix seconds, 0 when none
	Deadline         int64 // unix seconds, 0 when none
	Outcome          Outcome
	Enforcement      Level
	AllowedClasses   []string
	Drift            string
	DriftReason      string
	// BreakDue: the desktop's break manager says a break is due and the
	// person is still working (GNOME's BREAK_DUE), in any state.
	BreakDue      bool
	Enforced      bool
	MinimizeCount uint32
	CurrentClass  string
	CurrentTitle  string
	// CurrentApp is the focused window's desktop entry (zero: none; show
	// CurrentClass).
	CurrentApp App
	// CurrentSite is the page in front (host and path) when the focused
	// window is a browser's whose extension's tab report fits it; "" else.
	CurrentSite string
	// SiteReason says why a focused browser window has no CurrentSite (no
	// extension connected, a private window, waiting for the report); ""
	// when there is a site or the window is not a browser's.
	SiteReason        string
	EvidenceAvailable bool
	EvidenceReason    string
	EvidenceSource    string
	SwitchCount       uint32
	Buckets           []Bucket // bounded (see TopBuckets), the current window's time counted up to the moment of reading
	// BucketApps is the desktop entry of each class in Buckets and of the
	// focused window that has one.
	BucketApps   []BucketApp
	BreakGlassAt int64
	AuditHead    string
	AuditPending uint32
	Problems     []string
	// Permitted lists the methods the permission table permits now, so a
	// panel greys out exactly what the daemon would refuse.
	Permitted []string
	Version   string
	// Quiet says the session is quiet (in locked and planning: whether the
	// next Start's will be); QuietNote is what the Quieter said about it.
	Quiet bool
	// TaskRef is the session's task as source:id ("" when the next action
	// was typed by hand), TaskTitle its title as the source has it (outside
	// text: neutralize where rendered), TaskResult what became of it:
	// "", done, kept, left open, or a sentence when the write-back failed
	// or was refused.
	TaskRef, TaskTitle, TaskResult string
	QuietNote                      string
	// Proposal is the coach's proposal kept in planning (Empty when none).
	Proposal Proposal
	// ChangesIn, when not 0, is how long after this view was read its
	// Buckets will read differently with no change announced in between
	// (the current window's seconds tick). 0: nothing in it moves with
	// time alone; it holds until the next change a listener hears of.
	ChangesIn time.Duration
}

// View returns the current view.
func (s *Service) View() View {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.viewLocked()
}

func (s *Service) viewLocked() View {
	v := View{
		State:             s.state,
		SessionID:         s.sessionID,
		NextAction:        s.nextAction,
		SuccessCondition:  s.successCond,
		TimeboxSeconds:    seconds(s.timebox),
		StartedAt:         unixSeconds(s.startedAt),
		Deadline:          unixSeconds(s.deadline),
		Outcome:           s.outcome,
		Enforcement:       s.level,
		AllowedClasses:    slices.Clone(s.allowed),
		Drift:             DriftNone,
		CurrentClass:      s.window.Class,
		CurrentTitle:      s.window.Title,
		CurrentApp:        s.window.App,
		CurrentSite:       DisplaySite(s.window.Site),
		SiteReason:        s.tabs.reason,
		EvidenceAvailable: s.window.Available,
		EvidenceReason:    s.window.Reason,
		EvidenceSource:    s.evidenceSource,
		BreakGlassAt:      unixSeconds(s.breakGlassAt),
		AuditHead:         s.auditHead.Load().(string),
		AuditPending:      s.pendingCount.Load(),
		Problems:          s.problems.list(),
		Version:           s.version,
		Quiet:             s.quietShownLocked(),
		QuietNote:         s.quietNote,
		TaskResult:        s.taskResult,
		Proposal:          s.proposal,
	}
	if s.task != nil {
		v.TaskRef, v.TaskTitle = s.task.Ref(), s.task.Title
	}
	v.Proposal.Allowed = slices.Clone(s.proposal.Allowed)
	if s.state == StatePlanning && v.Enforcement == "" {
		v.Enforcement = s.defaultLevel // what Start will use unless told otherwise
	}
	if v.AllowedClasses == nil {
		v.AllowedClasses = []string{}
	}
	v.Buckets = []Bucket{}
	if s.stats != nil {
		v.SwitchCount = s.stats.switches
		if s.state == StateActive {
			v.Buckets, v.ChangesIn = s.stats.liveTopN(s.liveNowLocked())
		} else {
			v.Buckets = s.stats.topN()
		}
	}
	v.BucketApps = s.bucketAppsLocked(v.Buckets)
	v.BreakDue = s.breakDue
	if s.state == StateActive && s.awayMarked != "" {
		v.Drift, v.DriftReason = DriftAway, awayDrift(s.awayMarked, s.idleAfter)
		if s.awayMarked == AwayBreak {
			v.Drift = DriftBreak
		}
	} else if s.state == StateActive {
		v.Drift, v.DriftReason = s.driftLocked()
		v.Enforced = v.Drift == DriftDrifting && (s.level == LevelBlock || s.level == LevelLocked)
		if s.breakDue {
			v.DriftReason = joinReason(v.DriftReason, breakDueNote)
		}
	}
	if s.stats != nil {
		v.MinimizeCount = s.stats.minimizes
	}
	v.Permitted = s.permittedNow()
	return v
}

// driftLocked is the Drift property and its reason while active. During
// the grace an off-task window reads on_task: it is not drift yet, and the
// reason says so. (The reason names the grace, not the seconds left: a
// property that changed every second would wake every client.)
func (s *Service) driftLocked() (string, string) {
	d := s.drift
	switch {
	case d.drifting:
		return DriftDrifting, d.verdict.Reason
	case d.verdict.Task == TaskOff && !d.offSince.IsZero():
		return DriftOnTask, fmt.Sprintf("%s; it becomes drift after %s unless you go back", d.verdict.Reason, s.driftGrace)
	case d.verdict.Task == TaskOn:
		return DriftOnTask, d.verdict.Reason
	}
	return DriftUnknown, d.verdict.Reason
}

// breakDueNote is what DriftReason adds while the desktop says a break is
// due.
const breakDueNote = "the desktop says a break is due"

func joinReason(reason, note string) string {
	if reason == "" {
		return note
	}
	return reason + "; " + note
}
