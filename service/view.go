package service

import "slices"

// TopBuckets is how many buckets the View carries.
const TopBuckets = 20

// Drift values. Outside an active session drift is "none".
const (
	DriftNone     = "none"
	DriftUnknown  = "unknown"
	DriftOnTask   = "on_task"
	DriftDrifting = "drifting"
)

// View is everything a client can read about the core, one field per
// D-Bus property. It is a copy; holding it holds no lock.
type View struct {
	State             State
	SessionID         string
	NextAction        string
	SuccessCondition  string
	TimeboxSeconds    uint64
	StartedAt         int64 // unix seconds, 0 when none
	Deadline          int64 // unix seconds, 0 when none
	Outcome           Outcome
	Enforcement       Level
	AllowedClasses    []string
	Drift             string
	DriftReason       string
	Enforced          bool
	MinimizeCount     uint32
	CurrentClass      string
	CurrentTitle      string
	EvidenceAvailable bool
	EvidenceReason    string
	SwitchCount       uint32
	Buckets           []Bucket // top TopBuckets, as of the last focus event
	BreakGlassAt      int64
	AuditHead         string
	AuditPending      uint32
	Problems          []string
	Version           string
}

// View returns the current view.
func (s *Service) View() View {
	s.mu.Lock()
	defer s.mu.Unlock()
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
		EvidenceAvailable: s.window.Available,
		EvidenceReason:    s.window.Reason,
		BreakGlassAt:      unixSeconds(s.breakGlassAt),
		AuditHead:         s.auditHead.Load().(string),
		AuditPending:      s.pendingCount.Load(),
		Problems:          s.problems.list(),
		Version:           s.version,
	}
	if v.AllowedClasses == nil {
		v.AllowedClasses = []string{}
	}
	v.Buckets = []Bucket{}
	if s.stats != nil {
		v.SwitchCount = s.stats.switches
		v.Buckets = s.stats.sorted(TopBuckets)
	}
	if s.state == StateActive {
		v.Drift, v.DriftReason = DriftUnknown, "drift is not judged yet"
	}
	return v
}
