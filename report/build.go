package report

import (
	"cmp"
	"math"
	"regexp"
	"slices"
	"time"

	"github.com/antidrift/antidrift/apps"
	"github.com/antidrift/antidrift/persist"
	"github.com/antidrift/antidrift/service"
)

// Options are the settings a report honours.
type Options struct {
	// PrivateClasses and RedactTitles are today's private_classes and
	// redact_titles, applied again to titles recorded under older ones.
	PrivateClasses []string
	RedactTitles   []*regexp.Regexp
	// Apps names window classes by their desktop entries (an
	// *apps.Index); nil names none.
	Apps AppLookup
}

// AppLookup finds a window's desktop entry, as *apps.Index does. A report
// knows only the classes its summaries keep: instance and appID are "".
type AppLookup interface {
	Lookup(class, instance, appID string) (apps.Entry, bool)
}

// nameApps sets the App beside every class in r that has a desktop entry,
// each class looked up once.
func (o Options) nameApps(r *Report) {
	if o.Apps == nil {
		return
	}
	known := map[string]App{}
	of := func(class string) App {
		if class == "" {
			return App{} // away, no evidence, (other): not a window
		}
		a, ok := known[class]
		if !ok {
			if e, found := o.Apps.Lookup(class, "", ""); found {
				a = App{Name: e.Name, DesktopID: e.ID, Icon: e.Icon}
			}
			known[class] = a
		}
		return a
	}
	for i := range r.Sessions {
		s := &r.Sessions[i]
		for j := range s.Timeline {
			s.Timeline[j].App = of(s.Timeline[j].Class)
		}
		for j := range s.Top {
			s.Top[j].App = of(s.Top[j].Class)
		}
	}
	for i := range r.Windows {
		w := &r.Windows[i]
		w.App = of(w.Class)
		for j := range w.Titles {
			w.Titles[j].App = w.App
		}
	}
}

// Top sizes: what a person reads at a glance.
const (
	sessionTopBuckets = 5
	topWindows        = 10
	titlesPerWindow   = 3
)

// Build verifies the chain, then reads the sessions that started in span
// (and in the period before it, for the comparison) from r. Sessions
// whose raw log is retained get a timeline replayed through the core's own
// accounting. Only a failure to read audit.jsonl at all is an error; what
// else cannot be read is named in Problems.
func Build(r *persist.Reader, span Span, o Options) (*Report, error) {
	v := r.VerifyAudit()
	rep := &Report{
		Schema:   Schema,
		Period:   periodOf(span),
		Chain:    Chain{OK: v.OK, Entries: v.Entries, Problem: v.Problem},
		Problems: []string{},
		Days:     emptyDays(span),
		Sessions: []Session{},
		Windows:  []WindowTime{},
		Sites:    []SiteTime{},
	}
	if err := r.LaterVersion(); err != nil {
		// Read anyway (nothing is written), but what this build does not
		// know of that file is not in the report: say so first.
		rep.Problems = append(rep.Problems, err.Error()+"; this report may leave out what that version added")
	}
	sums, err := r.History()
	if err != nil {
		return nil, err
	}
	sealed := make(map[string]bool, len(sums))
	for _, s := range sums {
		sealed[s.SessionID] = true
	}
	type ended struct {
		service.Summary
		pending bool
	}
	all := make([]ended, 0, len(sums))
	for _, s := range sums {
		all = append(all, ended{Summary: s})
	}
	pending, problem, err := r.Pending()
	if err != nil {
		rep.Problems = append(rep.Problems, err.Error())
	}
	if problem != "" {
		rep.Problems = append(rep.Problems, problem)
	}
	for _, s := range pending {
		if !sealed[s.SessionID] {
			rep.Pending++
			all = append(all, ended{Summary: s, pending: true})
		}
	}
	slices.SortStableFunc(all, func(a, b ended) int { return cmp.Compare(a.StartedUnix, b.StartedUnix) })

	since, until, prev := span.Since.Unix(), span.Until.Unix(), span.Prev.Unix()
	rep.Totals = Totals{SinceUnix: since, UntilUnix: until}
	rep.Previous = Totals{SinceUnix: prev, UntilUnix: since}
	windows := newWindowTally(o)
	sites := siteTally{}
	for _, e := range all {
		switch {
		case e.StartedUnix >= prev && e.StartedUnix < since:
			s := sessionOf(e.Summary, o)
			rep.Previous.add(s)
		case e.StartedUnix >= since && e.StartedUnix < until:
			s := sessionOf(e.Summary, o)
			s.Pending = e.pending
			if r.HasRawLog(s.SessionID) {
				tl := service.NewTimeline()
				err := r.EachEvent(s.SessionID, tl.Add)
				segs := tl.Segments()
				if err != nil {
					rep.Problems = append(rep.Problems, err.Error())
				} else {
					s.Timeline = stretches(segs)
					windows.addTimeline(segs)
				}
			}
			if s.Timeline == nil {
				windows.addSummary(e.Summary)
			}
			sites.add(e.Summary)
			rep.Totals.add(s)
			if d := daysBetween(span.day(span.Since), span.day(time.Unix(s.StartedUnix, 0))); d >= 0 && d < len(rep.Days) {
				rep.Days[d].add(s)
			}
			rep.Sessions = append(rep.Sessions, s)
		}
	}
	rep.Totals.finish()
	rep.Previous.finish()
	rep.Windows = windows.top(topWindows)
	rep.Sites = sites.top(topSites)
	o.nameApps(rep)
	return rep, nil
}

func periodOf(span Span) Period {
	first, last := span.day(span.Since), span.day(span.Until.Add(-time.Nanosecond))
	return Period{
		SinceUnix: span.Since.Unix(),
		UntilUnix: span.Until.Unix(),
		FirstDay:  first.Format(time.DateOnly),
		LastDay:   last.Format(time.DateOnly),
		Days:      daysBetween(first, last) + 1,
		TimeZone:  span.Since.Location().String(),
	}
}

func emptyDays(span Span) []Day {
	p := periodOf(span)
	days := make([]Day, max(p.Days, 0))
	first := span.day(span.Since)
	for i := range days {
		days[i].Date = first.AddDate(0, 0, i).Format(time.DateOnly)
	}
	return days
}

// sessionOf is a summary's figures, its titles as today's settings allow.
func sessionOf(sum service.Summary, o Options) Session {
	s := Session{
		Seq:            sum.Seq,
		SessionID:      sum.SessionID,
		StartedUnix:    sum.StartedUnix,
		EndedUnix:      sum.EndedUnix,
		NextAction:     sum.NextAction,
		Outcome:        string(sum.Outcome),
		Enforcement:    string(sum.Enforcement),
		TimeboxSeconds: sum.TimeboxSecs,
		DriftSeconds:   sum.DriftSeconds,
		AwaySeconds:    sum.AwaySeconds,
		Switches:       sum.SwitchCount,
		Minimized:      sum.MinimizeCount,
		BreakGlass:     sum.BreakGlass,
		Top:            []Bucket{},
	}
	s.ActiveSeconds = sum.ActiveSeconds() // the figure `history` shows too
	for i, b := range sum.Buckets {
		if b.Class == "" && b.Title == service.UnavailableTitle {
			s.UnavailableSeconds += b.Seconds
		}
		if i < sessionTopBuckets {
			s.Top = append(s.Top, o.bucket(b.Class, b.Title, b.Seconds))
		}
	}
	s.OnTaskSeconds = sub(sub(sub(s.ActiveSeconds, s.DriftSeconds), s.AwaySeconds), s.UnavailableSeconds)
	s.DriftShare = share(s.DriftSeconds, s.ActiveSeconds)
	return s
}

// bucket is a bucket with its title as today's settings allow.
func (o Options) bucket(class, title string, secs uint64) Bucket {
	if class != "" {
		title = service.PrivateTitle(o.PrivateClasses, o.RedactTitles, class, "", title)
	}
	return Bucket{Class: class, Title: title, Seconds: secs}
}

func (t *Totals) add(s Session) {
	t.Sessions++
	switch service.Outcome(s.Outcome) {
	case service.OutcomeCompleted:
		t.Completed++
	case service.OutcomeExpired:
		t.Expired++
	case service.OutcomeAbandoned:
		t.Abandoned++
	}
	t.CommittedSeconds += s.TimeboxSeconds
	t.ActiveSeconds += s.ActiveSeconds
	t.OnTaskSeconds += s.OnTaskSeconds
	t.DriftSeconds += s.DriftSeconds
	t.AwaySeconds += s.AwaySeconds
	t.UnavailableSeconds += s.UnavailableSeconds
	t.Switches += uint64(s.Switches)
	t.Minimized += uint64(s.Minimized)
	// A hold started but never used up (the session was then completed,
	// or ran out) broke no glass: only an abandon through it is a use.
	if s.BreakGlass && service.Outcome(s.Outcome) == service.OutcomeAbandoned {
		t.BreakGlass++
	}
}

// finish derives the rates once every session is added.
func (t *Totals) finish() {
	t.CompletionRate = share(uint64(t.Completed), uint64(t.Sessions))
	if desk := sub(t.ActiveSeconds, t.AwaySeconds); desk > 0 {
		t.SwitchesPerHour = round(float64(t.Switches)*3600/float64(desk), 100)
	}
}

func (d *Day) add(s Session) {
	d.Sessions++
	d.OnTaskSeconds += s.OnTaskSeconds
	d.DriftSeconds += s.DriftSeconds
	d.AwaySeconds += s.AwaySeconds
	d.UnavailableSeconds += s.UnavailableSeconds
}

// stretches is a timeline for the JSON: neighbours of one kind and class
// merged (titles stay out: they are many, and private).
func stretches(segs []service.Segment) []Stretch {
	out := make([]Stretch, 0, len(segs))
	for _, g := range segs {
		from, to := g.From.UnixMilli(), g.To.UnixMilli()
		if n := len(out); n > 0 && out[n-1].ToUnixMillis == from && out[n-1].Kind == string(g.Kind) && out[n-1].Class == g.Class {
			out[n-1].ToUnixMillis = to
			continue
		}
		out = append(out, Stretch{FromUnixMillis: from, ToUnixMillis: to, Kind: string(g.Kind), Class: g.Class})
	}
	return out
}

func sub(a, b uint64) uint64 {
	if b > a {
		return 0
	}
	return a - b
}

// share is part/whole to four places, 0 when whole is.
func share(part, whole uint64) float64 {
	if whole == 0 {
		return 0
	}
	return round(float64(part)/float64(whole), 10000)
}

func round(x, places float64) float64 { return math.Round(x*places) / places }
