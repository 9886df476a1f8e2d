package service

import (
	"fmt"
	"slices"
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
	// AllowedDuring are the entries the person allowed while the session
	// was active (Allow, a nudge's "Allow"): each is proposed for every
	// session unless the person's rules already hold it.
	AllowedDuring []string
}

// Proposals computes the review's proposals: allows (most drift first),
// then the distraction, the grace and the level.
func Proposals(ev ReviewEvidence, set ReviewSettings) []ReviewProposal {
	var out []ReviewProposal
	allowed := map[string]bool{}
	for _, w := range ev.Windows {
		if w.Drift <= 0 && w.Answers == 0 || coveredBy(set.Allowed, w) || coveredBy(set.Distractions, w) {
			continue
		}
		if !ruleOK(w) {
			continue
		}
		lookupsOK := w.Lookups >= LookupMinVisits && 2*w.Lookups > w.Visits && w.Longest <= LookupMaxVisit
		if w.Answers == 0 && !lookupsOK {
			continue
		}
		allowed[w.key()] = true
		if titles := titleRules(w, set.Allowed); titles != nil {
			// The answers exempted some titles, and the class drew drift on
			// others after them: allow those titles, not the whole class.
			for _, tr := range titles {
				out = append(out, ReviewProposal{Kind: ProposeAllow, Change: fmt.Sprintf("allowed_classes + %q", tr), Rule: tr,
					Reason: fmt.Sprintf("you answered \"not a distraction\" for this %s title, and %s's other titles drew %s of drift after that: allow the title, not the whole class",
						w.Class, w.Class, reviewDur(w.DriftAfter))})
			}
			continue
		}
		rule := ruleFor(w)
		var why string
		if w.Answers > 0 {
			why = fmt.Sprintf("you answered \"not a distraction\" for %s %s; it held %s on task and %s judged drift",
				windowName(w), timesWord(w.Answers), reviewDur(w.OnTask), reviewDur(w.Drift))
		} else {
			why = fmt.Sprintf("%s was judged drift for %s in %d visits, %d of them a quick look (the longest %s) followed straight by on-task work: it looks part of the task",
				windowName(w), reviewDur(w.Drift), w.Visits, w.Lookups, reviewDur(w.Longest))
		}
		out = append(out, ReviewProposal{Kind: ProposeAllow, Change: fmt.Sprintf("allowed_classes + %q", rule), Reason: why, Rule: rule})
	}

	for _, text := range set.AllowedDuring {
		if slices.ContainsFunc(out, func(p ReviewProposal) bool { return strings.EqualFold(p.Rule, text) }) ||
			slices.ContainsFunc(set.Allowed, func(r Rule) bool { return strings.EqualFold(r.Text, text) }) {
			continue
		}
		r, err := ParseRule(text)
		if err != nil {
			continue
		}
		why := fmt.Sprintf("you allowed %s during this session", text)
		if !r.Narrowed() || r.Site() {
			var on time.Duration
			for _, w := range ev.Windows {
				if coveredBy([]Rule{r}, w) {
					on += w.OnTask
				}
			}
			why += fmt.Sprintf("; it held %s on task", reviewDur(on))
		}
		out = append(out, ReviewProposal{Kind: ProposeAllow, Change: fmt.Sprintf("allowed_classes + %q", text), Rule: text, Reason: why + ": keep it for every session"})
	}

	var total time.Duration
	for _, w := range ev.Windows {
		total += w.Drift
	}
	during := make([]Rule, 0, len(set.AllowedDuring))
	for _, text := range set.AllowedDuring {
		if r, err := ParseRule(text); err == nil {
			during = append(during, r)
		}
	}
	for _, w := range ev.Windows { // most drift first: the first that fits
		if allowed[w.key()] || coveredBy(set.Allowed, w) || coveredBy(during, w) {
			continue
		}
		if w.Drift < DistractionMinDrift {
			break
		}
		if coveredBy(set.Distractions, w) {
			break // the worst is already a distraction
		}
		if !ruleOK(w) {
			continue
		}
		rule := ruleFor(w)
		out = append(out, ReviewProposal{Kind: ProposeDistraction, Change: fmt.Sprintf("distractions + %q", rule), Rule: rule,
			Reason: fmt.Sprintf("%s drew the most drift: %s of the session's %s, in %d visits (the longest %s)",
				windowName(w), reviewDur(w.Drift), reviewDur(total), w.Visits, reviewDur(w.Longest))})
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
				near, outlasted, reviewDur(set.Grace), reviewDur(GraceNearMiss), reviewDur(longestNear), reviewDur(g))})
	}
	if set.Nudges && set.Level == LevelWarn && set.DefaultLevel.rank() < LevelBlock.rank() && ignored >= IgnoredMin {
		out = append(out, ReviewProposal{Kind: ProposeLevel, Change: fmt.Sprintf("enforcement = %q", LevelBlock), Level: LevelBlock,
			Reason: fmt.Sprintf("%d nudges were ignored: drift went on for a whole nudge repeat (%s) after them, the longest episode %s; at block the drifting window is minimized",
				ignored, reviewDur(set.NudgeRepeat), reviewDur(longestIgnored))})
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

// titleRules are the CLASS:TITLE entries for the titles of w answered "not
// a distraction", when its class drew drift on other titles after the
// first answer; nil when the class as a whole is the proposal. A title
// already allowed, empty (a private class's), or that no rule could hold
// is left out.
func titleRules(w WindowEvidence, allowed []Rule) []string {
	if w.Host != "" || w.Answers == 0 || w.DriftAfter <= 0 {
		return nil
	}
	out := []string{}
	for _, title := range w.Titles {
		if strings.TrimSpace(title) == "" {
			continue
		}
		text := LiteralRule(w.Class) + ":" + LiteralRule(title)
		if _, err := ParseRule(text); err != nil {
			continue
		}
		win := Window{Class: w.Class, Title: title, Available: true}
		if slices.ContainsFunc(allowed, func(r Rule) bool { return matches(r, win, FoldTitle(title)) }) {
			continue
		}
		out = append(out, text)
	}
	return out
}

// ruleOK reports whether w's entry is one the rules file can hold: a
// window's class is its program's choice, and one with control characters
// or past the length a rule may have is never proposed (applying it would
// leave a rules file antidrift refuses to read).
func ruleOK(w WindowEvidence) bool {
	_, err := ParseRule(ruleFor(w))
	return err == nil
}

// coveredBy reports whether a rule of rules already covers w whatever its
// title.
func coveredBy(rules []Rule, w WindowEvidence) bool {
	win := Window{Class: w.Class, Available: true}
	if w.Host != "" {
		win.Site = w.Host + "/"
	}
	for _, r := range rules {
		if r.Narrowed() && !r.Site() {
			continue // a title rule covers some titles, not the window
		}
		if matches(r, win, "") {
			return true
		}
	}
	return false
}

func windowName(w WindowEvidence) string {
	if w.Host != "" {
		return w.Host
	}
	return w.Class
}

func timesWord(n int) string {
	if n == 1 {
		return "once"
	}
	return fmt.Sprintf("%d times", n)
}

// reviewDur is a duration as a person reads it: 1m30s, and to a tenth of a
// second under ten seconds (1.4s), where whole seconds would blur a grace.
func reviewDur(d time.Duration) string {
	if d < 10*time.Second {
		return d.Round(100 * time.Millisecond).String()
	}
	return d.Round(time.Second).String()
}
