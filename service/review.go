package service

import (
	"fmt"
	"strings"
	"time"
)

// The review's proposals: changes to the person's rules that a session's
// own evidence (reviewevidence.go) argues for, each with its reason and the
// figures behind it. Proposals is a pure function of the evidence and the
// settings, so the same session always proposes the same changes; nothing
// is applied unless the person asks (ApplyProposal). docs/plan-and-review.md
// states each rule in words; keep the two together.

// ReviewProposal kinds.
const (
	ProposeAllow       = "allow"       // add an entry to allowed_classes
	ProposeDistraction = "distraction" // add an entry to distractions
	ProposeGrace       = "grace"       // set drift_grace
	ProposeLevel       = "level"       // set enforcement
)

// The thresholds of the proposals, in the words docs/plan-and-review.md uses.
const (
	// LookupMinVisits: a window judged drift is proposed for allowing when
	// at least this many of its visits were look-ups (followed straight by
	// an on-task window), they were most of its visits, and none of its
	// visits was longer than LookupMaxVisit.
	LookupMinVisits = 3
	LookupMaxVisit  = 3 * time.Minute
	// DistractionMinDrift: the window that drew the most drift is proposed
	// as a distraction when it drew at least this much.
	DistractionMinDrift = time.Minute
	// GraceNearMiss: an episode that outlasted the grace by at most this
	// much is a near miss; GraceMinEpisodes episodes must have outlasted
	// it, and more than half of them be near misses, for a longer grace to
	// be proposed: the longest near miss rounded up to the next multiple
	// of GraceStep (strictly longer).
	GraceNearMiss    = 15 * time.Second
	GraceMinEpisodes = 3
	GraceStep        = 5 * time.Second
	// IgnoredMin: a nudge was ignored when its episode went on for a
	// whole nudge_repeat after the grace (so the nudge repeated) — this
	// many ignored nudges at level warn propose level block.
	IgnoredMin = 2
)

// ReviewProposal is one change the review proposes.
type ReviewProposal struct {
	Number uint32 // from 1, in the order listed
	Kind   string // ProposeAllow, ProposeDistraction, ProposeGrace, ProposeLevel
	// Change is the setting as the rules file gets it:
	// allowed_classes + "url:docs.python.org", drift_grace = "20s".
	Change string
	Reason string // why, with the figures
	// What is written: Rule for allow and distraction, Grace, Level.
	Rule  string
	Grace time.Duration
	Level Level
}

// ReviewSettings are the settings the proposals are measured against.
type ReviewSettings struct {
	Level        Level         // the session's level
	DefaultLevel Level         // the person's (config and rules file)
	Grace        time.Duration // drift_grace
	NudgeRepeat  time.Duration // nudge_repeat
	Nudges       bool          // nudges are shown (a notifier is there)
	// Allowed and Distractions are the person's rules (config and rules
	// file): a window they already cover is not proposed again.
	Allowed, Distractions []Rule
}

// Proposals computes the review's proposals: allows (most drift first),
// then the distraction, the grace and the level.
func Proposals(ev ReviewEvidence, set ReviewSettings) []ReviewProposal {
	var out []ReviewProposal
	allowed := map[string]bool{}
	for _, w := range ev.Windows {
		if w.Drift <= 0 && w.Answers == 0 || covered(set.Allowed, w) || covered(set.Distractions, w) {
			continue
		}
		lookupsOK := w.Lookups >= LookupMinVisits && 2*w.Lookups > w.Visits && w.Longest <= LookupMaxVisit
		if w.Answers == 0 && !lookupsOK {
			continue
		}
		rule := ruleFor(w)
		var why string
		if w.Answers > 0 {
			why = fmt.Sprintf("you answered \"not a distraction\" for %s %s; it held %s on task and %s judged drift",
				name(w), times(w.Answers), dur(w.OnTask), dur(w.Drift))
		} else {
			why = fmt.Sprintf("%s was judged drift for %s in %d visits, %d of them a quick look (the longest %s) followed straight by on-task work: it looks part of the task",
				name(w), dur(w.Drift), w.Visits, w.Lookups, dur(w.Longest))
		}
		allowed[w.key()] = true
		out = append(out, ReviewProposal{Kind: ProposeAllow, Change: fmt.Sprintf("allowed_classes + %q", rule), Reason: why, Rule: rule})
	}

	var total time.Duration
	for _, w := range ev.Windows {
		total += w.Drift
	}
	for _, w := range ev.Windows { // most drift first: the first that fits
		if allowed[w.key()] || covered(set.Allowed, w) {
			continue
		}
		if w.Drift < DistractionMinDrift {
			break
		}
		if covered(set.Distractions, w) {
			break // the worst is already a distraction
		}
		rule := ruleFor(w)
		out = append(out, ReviewProposal{Kind: ProposeDistraction, Change: fmt.Sprintf("distractions + %q", rule), Rule: rule,
			Reason: fmt.Sprintf("%s drew the most drift: %s of the session's %s, in %d visits (the longest %s)",
				name(w), dur(w.Drift), dur(total), w.Visits, dur(w.Longest))})
		break
	}

	var outlasted, near, ignored int
	var longestNear, longestIgnored time.Duration
	for _, l := range ev.Episodes {
		if l <= set.Grace {
			continue
		}
		outlasted++
		if l-set.Grace <= GraceNearMiss {
			near++
			longestNear = max(longestNear, l)
		}
		if set.NudgeRepeat > 0 && l >= set.Grace+set.NudgeRepeat {
			ignored++
			longestIgnored = max(longestIgnored, l)
		}
	}
	if outlasted >= GraceMinEpisodes && 2*near > outlasted {
		g := (longestNear/GraceStep + 1) * GraceStep
		out = append(out, ReviewProposal{Kind: ProposeGrace, Change: fmt.Sprintf("drift_grace = %q", g.String()), Grace: g,
			Reason: fmt.Sprintf("%d of the %d episodes that outlasted the grace of %s did so by %s or less (the longest %s): a grace of %s covers them",
				near, outlasted, dur(set.Grace), dur(GraceNearMiss), dur(longestNear), dur(g))})
	}
	if set.Nudges && set.Level == LevelWarn && set.DefaultLevel.rank() < LevelBlock.rank() && ignored >= IgnoredMin {
		out = append(out, ReviewProposal{Kind: ProposeLevel, Change: fmt.Sprintf("enforcement = %q", LevelBlock), Level: LevelBlock,
			Reason: fmt.Sprintf("%d nudges were ignored: drift went on for a whole nudge repeat (%s) after them, the longest episode %s; at block the drifting window is minimized",
				ignored, dur(set.NudgeRepeat), dur(longestIgnored))})
	}
	for i := range out {
		out[i].Number = uint32(i + 1)
	}
	return out
}

// ruleFor is the entry that covers w: url:HOST for pages, else the class
// as a literal.
func ruleFor(w WindowEvidence) string {
	if w.Host != "" {
		return SiteRulePrefix + strings.ToLower(w.Host)
	}
	return LiteralRule(w.Class)
}

// covered reports whether a rule of rules already covers w whatever its
// title.
func covered(rules []Rule, w WindowEvidence) bool {
	win := Window{Class: w.Class, Available: true}
	if w.Host != "" {
		win.Site = w.Host + "/"
	}
	for _, r := range rules {
		if r.Narrowed() && !r.Site() {
			continue // a title rule covers some titles, not the window
		}
		if r.matches(win, "") {
			return true
		}
	}
	return false
}

func name(w WindowEvidence) string {
	if w.Host != "" {
		return w.Host
	}
	return w.Class
}

func times(n int) string {
	if n == 1 {
		return "once"
	}
	return fmt.Sprintf("%d times", n)
}

// dur is a duration in whole seconds as a person reads it (1m30s).
func dur(d time.Duration) string { return d.Round(time.Second).String() }
