package report

import (
	"cmp"
	"slices"
	"time"

	"github.com/antidrift/antidrift/service"
)

// windowTally adds up the period's time per window class and title, split
// into on task and drift where a raw log says which.
type windowTally struct {
	o       Options
	classes map[string]*classTime
}

type classTime struct {
	on, drift, unsplit time.Duration
	titles             map[string]time.Duration
}

func newWindowTally(o Options) *windowTally {
	return &windowTally{o: o, classes: map[string]*classTime{}}
}

func (w *windowTally) class(name string) *classTime {
	c := w.classes[name]
	if c == nil {
		c = &classTime{titles: map[string]time.Duration{}}
		w.classes[name] = c
	}
	return c
}

// addTimeline adds a replayed session: each stretch knows its verdict.
func (w *windowTally) addTimeline(segs []service.Segment) {
	for _, g := range segs {
		if g.Class == "" {
			continue // away, unavailable, (other): not a window
		}
		c, d := w.class(g.Class), g.To.Sub(g.From)
		if g.Kind == service.SegmentDrift {
			c.drift += d
		} else {
			c.on += d
		}
		c.titles[g.Title] += d
	}
}

// addSummary adds a session known only by its summary: without drift, its
// windows were all on task; with drift, which window drifted is unknown.
func (w *windowTally) addSummary(sum service.Summary) {
	for _, b := range sum.Buckets {
		if b.Class == "" {
			continue
		}
		c, d := w.class(b.Class), time.Duration(b.Seconds)*time.Second
		if sum.DriftSeconds == 0 {
			c.on += d
		} else {
			c.unsplit += d
		}
		c.titles[b.Title] += d
	}
}

// top is the n classes with the most time, each with its longest titles
// (private ones left out), ties in name order so the report is stable.
func (w *windowTally) top(n int) []WindowTime {
	out := make([]WindowTime, 0, len(w.classes))
	for name, c := range w.classes {
		wt := WindowTime{Class: name, OnTaskSeconds: secs(c.on), DriftSeconds: secs(c.drift), UnsplitSeconds: secs(c.unsplit), Titles: []Bucket{}}
		titles := map[string]time.Duration{}
		for t, d := range c.titles {
			if b := w.o.bucket(name, t, 0); b.Title != "" {
				titles[b.Title] += d
			}
		}
		for t, d := range titles {
			wt.Titles = append(wt.Titles, Bucket{Class: name, Title: t, Seconds: secs(d)})
		}
		slices.SortFunc(wt.Titles, func(a, b Bucket) int {
			return cmp.Or(cmp.Compare(b.Seconds, a.Seconds), cmp.Compare(a.Title, b.Title))
		})
		wt.Titles = wt.Titles[:min(len(wt.Titles), titlesPerWindow)]
		out = append(out, wt)
	}
	total := func(w WindowTime) uint64 { return w.OnTaskSeconds + w.DriftSeconds + w.UnsplitSeconds }
	slices.SortFunc(out, func(a, b WindowTime) int {
		return cmp.Or(cmp.Compare(total(b), total(a)), cmp.Compare(a.Class, b.Class))
	})
	return out[:min(len(out), n)]
}

// secs rounds to whole seconds as the summaries do.
func secs(d time.Duration) uint64 {
	if d <= 0 {
		return 0
	}
	return uint64(d.Round(time.Second) / time.Second)
}
