package service

import (
	"cmp"
	"slices"
	"strings"
	"time"
)

// The evidence a review proposes from (review.go): kept by the same
// accounting that builds the buckets, so replaying the raw log rebuilds it
// and nothing new is written to state.json or the raw log for it.

// maxEpisodes bounds the off-task episode lengths one session keeps; later
// episodes are still counted in the windows' figures.
const maxEpisodes = 10000

// WindowEvidence is what one window of the session showed: a window class,
// or the host of the pages in front of a browser (then Host is set).
type WindowEvidence struct {
	Class string // as the window gave it (the first spelling seen)
	Host  string // "" for a window; the host for browser pages
	// Drift is the time it was judged off task; OnTask the time it was
	// judged on task.
	Drift, OnTask time.Duration
	// Visits counts its stretches of drift (one focus of it, or of its
	// page, while off task); Lookups those followed straight by an
	// on-task window: a quick look and back to work.
	Visits, Lookups int
	Longest         time.Duration // the longest visit
	// Answers counts the nudges about it answered "not a distraction";
	// Titles are the (scrubbed) titles they were about, the first
	// maxAnsweredTitles distinct ones, for a window without a host; and
	// DriftAfter is its drift after the first answer, on titles the
	// answers did not exempt.
	Answers    int
	Titles     []string
	DriftAfter time.Duration
}

// maxAnsweredTitles bounds the titles one window keeps from answers.
const maxAnsweredTitles = 3

// key is how a window is told apart: its host, else its lower-cased class.
func (w WindowEvidence) key() string { return evidenceKey(w.Class, w.Host) }

func evidenceKey(class, host string) string {
	if host != "" {
		return "url:" + strings.ToLower(host)
	}
	return strings.ToLower(class)
}

// ReviewEvidence is a session's evidence for the review.
type ReviewEvidence struct {
	// Windows are every window and site with drift, on-task time or an
	// answer, most drift first (ties by key).
	Windows []WindowEvidence
	// Episodes are the lengths of the off-task episodes in order: a
	// stretch of off-task time, hopping between off-task windows included
	// (as the grace counts it), ended by an on-task window, a window that
	// gives no evidence, going away or the end of the active time.
	Episodes []time.Duration
}

// reviewTally builds ReviewEvidence from credited stretches of time.
type reviewTally struct {
	windows map[string]*WindowEvidence
	eps     []time.Duration
	lastTo  time.Time // the end of the last stretch credited
	epOpen  bool
	epLen   time.Duration
	visit   *WindowEvidence // the window of the open visit; nil when none
	visitD  time.Duration
	// gapped is the window of a visit that ended in a window giving no
	// evidence — the moment of no focus a window manager passes through
	// between two windows: it is a look-up still if an on-task window
	// comes next.
	gapped *WindowEvidence
	gapD   time.Duration
}

// maxGap is the longest stretch without evidence a look-up passes through.
const maxGap = 10 * time.Second

func newReviewTally() *reviewTally {
	return &reviewTally{windows: map[string]*WindowEvidence{}}
}

// window is the entry for (class, host), made when there is room.
func (t *reviewTally) window(class, host string) *WindowEvidence {
	k := evidenceKey(class, host)
	w := t.windows[k]
	if w == nil && len(t.windows) < MaxBucketKeys {
		w = &WindowEvidence{Class: class, Host: host}
		t.windows[k] = w
	}
	return w
}

// credit hears of one stretch of credited time (stats.flush).
func (t *reviewTally) credit(from, to time.Time, class, host string, kind SegmentKind) {
	d := to.Sub(from)
	joined := t.lastTo.Equal(from)
	t.lastTo = to
	if kind == SegmentDrift && class != "" {
		t.gapped = nil
		w := t.window(class, host)
		if !joined || !t.epOpen {
			t.closeEpisode()
			t.closeVisit(false)
			t.epOpen = true
		}
		if t.visit != w {
			t.closeVisit(false) // hopping to another off-task window
			t.visit = w
		}
		t.epLen += d
		t.visitD += d
		if w != nil {
			w.Drift += d
			if w.Answers > 0 {
				w.DriftAfter += d
			}
		}
		return
	}
	t.closeEpisode()
	gapped := t.gapped
	t.gapped = nil
	switch {
	case kind == SegmentUnavailable && joined:
		switch {
		case t.visit != nil && d <= maxGap:
			t.gapped, t.gapD = t.visit, d
		case gapped != nil && t.gapD+d <= maxGap:
			t.gapped, t.gapD = gapped, t.gapD+d // still in the gap
		}
		t.closeVisit(false)
	case kind == SegmentOnTask && joined && t.visit == nil && gapped != nil:
		gapped.Lookups++
	default:
		t.closeVisit(joined && kind == SegmentOnTask)
	}
	if kind == SegmentOnTask && class != "" {
		if w := t.window(class, host); w != nil {
			w.OnTask += d
		}
	}
}

func (t *reviewTally) closeEpisode() {
	if t.epOpen && len(t.eps) < maxEpisodes {
		t.eps = append(t.eps, t.epLen)
	}
	t.epOpen, t.epLen = false, 0
}

func (t *reviewTally) closeVisit(lookup bool) {
	if w := t.visit; w != nil {
		w.Visits++
		w.Longest = max(w.Longest, t.visitD)
		if lookup {
			w.Lookups++
		}
	}
	t.visit, t.visitD = nil, 0
}

// answered counts a "not a distraction" answer about class and its
// scrubbed title (host: the page in front when it was given, if any).
func (t *reviewTally) answered(class, title, host string) {
	w := t.window(class, host)
	if w == nil {
		return
	}
	w.Answers++
	if host == "" && len(w.Titles) < maxAnsweredTitles && !slices.Contains(w.Titles, title) {
		w.Titles = append(w.Titles, title)
	}
}

// evidence is the tally as of now, the open episode and visit counted as
// ended (without ending them: an extended session goes on).
func (t *reviewTally) evidence() ReviewEvidence {
	c := reviewTally{windows: make(map[string]*WindowEvidence, len(t.windows)), eps: slices.Clone(t.eps),
		epOpen: t.epOpen, epLen: t.epLen, visitD: t.visitD}
	for k, w := range t.windows {
		cw := *w
		cw.Titles = slices.Clone(w.Titles)
		c.windows[k] = &cw
		if w == t.visit {
			c.visit = &cw
		}
	}
	c.closeEpisode()
	c.closeVisit(false)
	c.gapped = nil
	ev := ReviewEvidence{Episodes: c.eps}
	for _, w := range c.windows {
		ev.Windows = append(ev.Windows, *w)
	}
	slices.SortFunc(ev.Windows, func(a, b WindowEvidence) int {
		return cmp.Or(cmp.Compare(b.Drift, a.Drift), cmp.Compare(a.key(), b.key()))
	})
	return ev
}
