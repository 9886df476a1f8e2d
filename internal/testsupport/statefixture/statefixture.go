// Package statefixture writes synthetic but realistic state directories —
// an audit chain sealed by persist, raw logs, pending summaries — for the
// report's golden tests and benchmarks. Everything derives from a seed, so
// the same call writes the same bytes.
package statefixture

import (
	"cmp"
	"fmt"
	"math/rand/v2"
	"slices"
	"time"

	"github.com/antidrift/antidrift/persist"
	"github.com/antidrift/antidrift/service"
)

// Spec says what to write.
type Spec struct {
	Seed     uint64
	Sessions int       // sessions, one after another, oldest first
	First    time.Time // the midnight of the first day
	// Slots are the start times of a day's sessions, as offsets from
	// midnight: sessions fill one day's slots, then the next day's.
	Slots []time.Duration
	// EventsPerSession is roughly how many focus changes each has.
	EventsPerSession int
	// KeepRawLogs: sessions from this index on keep their raw log (the
	// older ones have it pruned, as retention does).
	KeepRawLogs int
	// Pending: the last this many sessions stay pending in state.json
	// instead of being sealed.
	Pending int
}

// window is a window a fixture session visits.
type window struct {
	class, instance, title string
	offTask                bool
}

var windows = []window{
	{"Emacs", "emacs", "intro.tex - Emacs", false},
	{"Emacs", "emacs", "notes.org - Emacs", false},
	{"kitty", "kitty", "make test", false},
	{"firefox", "Navigator", "Go documentation — Mozilla Firefox", false},
	{"firefox", "Navigator", "Hacker News — Mozilla Firefox", true},
	{"firefox", "Navigator", "Inbox (12) - alice@example.org - Mail", true},
	{"Slack", "slack", "#general | team - Slack", true},
	{"KeePassXC", "keepassxc", "Passwords.kdbx - KeePassXC", false},
	{"mpv", "mpv", "talk.mkv 12:30 / 45:00 - mpv", true},
}

var nextActions = []string{
	"write the intro", "fix the flaky replay test", "review Ana's patch", "draft the budget mail",
	"outline chapter 3", "triage the bug queue", "read the SYNC spec", "answer the support thread",
}

// Write seals spec's sessions into dir, which must not hold a state
// directory yet, and returns their summaries (pending ones included) in
// order.
func Write(dir string, spec Spec) ([]service.Summary, error) {
	rng := rand.New(rand.NewPCG(spec.Seed, 42))
	st, _, err := persist.Open(dir)
	if err != nil {
		return nil, err
	}
	defer st.Close()
	var out, pending []service.Summary
	for i := range spec.Sessions {
		day, slot := i/len(spec.Slots), spec.Slots[i%len(spec.Slots)]
		start := spec.First.AddDate(0, 0, day).Add(slot + time.Duration(rng.IntN(30))*time.Minute)
		id := fmt.Sprintf("0197a3c4-0000-7000-8000-%012d", i+1)
		events, sum := session(rng, id, start, spec.EventsPerSession)
		if i >= spec.KeepRawLogs {
			for _, e := range events {
				if err := st.AppendEvent(id, e); err != nil {
					return nil, err
				}
			}
			if err := st.CloseSession(id); err != nil {
				return nil, err
			}
		}
		if i >= spec.Sessions-spec.Pending {
			pending = append(pending, sum)
			out = append(out, sum)
			continue
		}
		sealed, err := st.AppendAudit(sum)
		if err != nil {
			return nil, err
		}
		out = append(out, sealed)
	}
	if len(pending) > 0 {
		err = st.SaveSnapshot(service.Snapshot{State: service.StateLocked, Pending: pending})
	}
	return out, err
}

// session makes one session's raw events and the summary the core would
// seal for them: its buckets and drift come from replaying the events
// through service.Timeline, the core's own accounting.
func session(rng *rand.Rand, id string, start time.Time, n int) ([]service.FocusEvent, service.Summary) {
	timebox := time.Duration(15+5*rng.IntN(10)) * time.Minute
	outcome := []service.Outcome{service.OutcomeCompleted, service.OutcomeCompleted, service.OutcomeCompleted,
		service.OutcomeExpired, service.OutcomeAbandoned}[rng.IntN(5)]
	length := timebox
	if outcome != service.OutcomeExpired {
		length = timebox * time.Duration(40+rng.IntN(60)) / 100
	}
	level := service.Levels[rng.IntN(len(service.Levels))]
	ms := func(t time.Time) int64 { return t.UnixMilli() }
	var events []service.FocusEvent
	minimized := uint32(0)
	step := length / time.Duration(n+1)
	for i := range n {
		at := start.Add(time.Duration(i) * step)
		if i > 0 {
			at = at.Add(time.Duration(rng.Int64N(int64(step / 2))))
		}
		switch r := rng.IntN(20); {
		case i > 0 && r == 0:
			events = append(events, service.FocusEvent{AtUnixMillis: ms(at), Mark: service.MarkAway, Reason: service.AwayIdle},
				service.FocusEvent{AtUnixMillis: ms(at.Add(step / 2)), Mark: service.MarkBack})
			continue
		case i > 0 && r == 1:
			events = append(events, service.FocusEvent{AtUnixMillis: ms(at), Reason: "no window has focus"})
			continue
		}
		w := windows[rng.IntN(len(windows))]
		if i == 0 || rng.IntN(3) > 0 {
			w = windows[rng.IntN(3)] // mostly at work
		}
		events = append(events, service.FocusEvent{AtUnixMillis: ms(at), Class: w.class, Instance: w.instance,
			Title: w.title, Available: true, OffTask: w.offTask})
		if w.offTask && (level == service.LevelBlock || level == service.LevelLocked) {
			minimized++
			events = append(events, service.FocusEvent{AtUnixMillis: ms(at.Add(step / 4)), Mark: service.MarkMinimized})
		}
	}
	end := start.Add(length)
	events = append(events, service.FocusEvent{AtUnixMillis: ms(end), Mark: service.MarkPause})

	tl := service.NewTimeline()
	for _, e := range events {
		tl.Add(e)
	}
	segs := tl.Segments()
	type key struct{ class, title string }
	times := map[key]time.Duration{}
	var drift, away time.Duration
	switches, last := uint32(0), key{}
	for i, g := range segs {
		d := g.To.Sub(g.From)
		times[key{g.Class, g.Title}] += d
		switch g.Kind {
		case service.SegmentDrift:
			drift += d
		case service.SegmentAway:
			away += d
		}
		k := key{g.Class, g.Title}
		if g.Class != "" && i > 0 && last != (key{}) && k != last {
			switches++
		}
		if g.Class != "" {
			last = k
		}
	}
	var buckets []service.Bucket
	for k, d := range times {
		buckets = append(buckets, service.Bucket{Class: k.class, Title: k.title, Seconds: secs(d)})
	}
	slices.SortFunc(buckets, func(a, b service.Bucket) int {
		return cmp.Or(cmp.Compare(b.Seconds, a.Seconds), cmp.Compare(a.Class, b.Class), cmp.Compare(a.Title, b.Title))
	})
	sum := service.Summary{
		SessionID:        id,
		NextAction:       nextActions[rng.IntN(len(nextActions))],
		SuccessCondition: "it is done",
		Outcome:          outcome,
		Enforcement:      level,
		StartedUnix:      start.Unix(),
		EndedUnix:        end.Unix(),
		TimeboxSecs:      uint64(timebox / time.Second),
		SwitchCount:      switches,
		DriftSeconds:     secs(drift),
		AwaySeconds:      secs(away),
		MinimizeCount:    minimized,
		BreakGlass:       level == service.LevelLocked && outcome == service.OutcomeAbandoned,
		Buckets:          buckets,
	}
	return events, sum
}

func secs(d time.Duration) uint64 { return uint64(d.Round(time.Second) / time.Second) }
