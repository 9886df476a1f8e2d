package report

import (
	"cmp"
	"fmt"
	"slices"
	"time"

	"github.com/antidrift/antidrift/persist"
	"github.com/antidrift/antidrift/service"
)

// Devices says which machines a report covers.
type Devices struct {
	// SyncDir is sync_dir: "" reports on this machine alone, as Build does.
	SyncDir string
	// ThisName is this machine's label (device_name, else the hostname).
	ThisName string
	// Only narrows the report to one machine, by its name or device id
	// ("" is every machine).
	Only string
	// Now is when the report is made: a machine whose sessions end after
	// it by more than ClockSlack has a clock far off.
	Now time.Time
}

// ClockSlack is how far ahead of this machine's clock another machine's
// record may reach before its clock is called far off: more than the
// time Syncthing takes, and than a clock that NTP has not yet corrected.
const ClockSlack = 10 * time.Minute

// StateForm is a DeviceTotals.Form: this machine, read from its state
// directory rather than from its published copy.
const StateForm = "state"

// BuildAll is Build over every machine that publishes into d.SyncDir:
// this machine's sessions from its state directory (counted once: its own
// copy in sync_dir is not read again), every other machine's from its
// copy, each verified on its own. A copy that does not verify is named and
// left out of every figure; sessions are merged by start time, each named
// with its machine; Totals is all machines together, with time active
// counted once where sessions on two machines overlap.
func BuildAll(local *persist.Reader, span Span, o Options, d Devices) (*Report, error) {
	rep, err := Build(local, span, o)
	if err != nil {
		return rep, err
	}
	if d.SyncDir == "" {
		// This machine alone: Only may name it, and nothing else.
		if d.Only != "" && d.Only != d.ThisName && d.Only != local.DeviceID() {
			return nil, &service.NoSuchDevice{Device: d.Only, Devices: []string{d.ThisName}}
		}
		return rep, nil
	}
	choice, err := ChooseDevices(local, d)
	if err != nil {
		return nil, err
	}
	thisID := choice.ThisID
	rep.Problems = append(rep.Problems, choice.Problems...)

	this := DeviceTotals{DeviceID: thisID, Name: d.ThisName, ThisDevice: true, Form: StateForm,
		OK: rep.Chain.OK, Entries: rep.Chain.Entries, Problem: rep.Chain.Problem, Totals: rep.Totals, Key: choice.ThisKey}
	sessions := slices.Clone(rep.Sessions)
	for i := range sessions {
		sessions[i].Device, sessions[i].DeviceID = d.ThisName, thisID
	}
	rep.Devices = []DeviceTotals{this}
	previous := rep.Previous
	windows := newWindowTally(o)
	for _, w := range rep.Windows {
		windows.addWindowTime(w)
	}
	if !choice.ThisShown {
		rep.Devices[0].Totals = Totals{SinceUnix: rep.Totals.SinceUnix, UntilUnix: rep.Totals.UntilUnix}
		sessions, previous, windows = nil, Totals{SinceUnix: rep.Previous.SinceUnix, UntilUnix: rep.Previous.UntilUnix}, newWindowTally(o)
	}
	for _, dev := range choice.Others {
		dt := DeviceTotals{DeviceID: dev.ID, Name: dev.Label(), Form: dev.Form, OK: dev.OK, Entries: dev.Entries, Problem: dev.Problem,
			Key: dev.Key, Pinned: dev.Pinned, Totals: Totals{SinceUnix: rep.Totals.SinceUnix, UntilUnix: rep.Totals.UntilUnix}}
		if !dev.Counts || !dev.Shown {
			dt.Totals.finish()
			rep.Devices = append(rep.Devices, dt)
			continue
		}
		since, until, prev := span.Since.Unix(), span.Until.Unix(), span.Prev.Unix()
		for _, sum := range dev.Summaries {
			switch {
			case sum.StartedUnix >= prev && sum.StartedUnix < since:
				previous.add(sessionOf(sum, o))
			case sum.StartedUnix >= since && sum.StartedUnix < until:
				s := sessionOf(sum, o)
				s.Device, s.DeviceID = dev.Label(), dev.ID
				dt.Totals.add(s)
				windows.addSummary(sum)
				sessions = append(sessions, s)
			}
		}
		dt.Totals.finish()
		rep.Devices = append(rep.Devices, dt)
	}
	// Ties in the second go by session id (a UUIDv7: finer time, then
	// random), so every machine lists the same sessions in the same order.
	slices.SortStableFunc(sessions, func(a, b Session) int {
		return cmp.Or(cmp.Compare(a.StartedUnix, b.StartedUnix), cmp.Compare(a.SessionID, b.SessionID))
	})
	rep.Sessions = sessions
	if rep.Sessions == nil {
		rep.Sessions = []Session{}
	}
	rep.Totals = Totals{SinceUnix: rep.Totals.SinceUnix, UntilUnix: rep.Totals.UntilUnix}
	rep.Days = emptyDays(span)
	for _, s := range sessions {
		rep.Totals.add(s)
		if n := daysBetween(span.day(span.Since), span.day(time.Unix(s.StartedUnix, 0))); n >= 0 && n < len(rep.Days) {
			rep.Days[n].add(s)
		}
	}
	union := activeUnion(sessions)
	rep.Totals.OverlapSeconds = sub(rep.Totals.ActiveSeconds, union)
	rep.Totals.ActiveSeconds = union
	rep.Totals.finish()
	previous.finish()
	rep.Previous = previous
	rep.Windows = windows.top(topWindows)
	o.nameApps(rep)
	return rep, nil
}

// activeUnion is the time at least one of sessions was active, each
// counted as its start plus its active time (never past its end): two
// machines' sessions at once are an hour active, not two.
func activeUnion(sessions []Session) uint64 {
	type span struct{ from, to int64 }
	spans := make([]span, 0, len(sessions))
	for _, s := range sessions {
		to := min(s.StartedUnix+int64(s.ActiveSeconds), max(s.EndedUnix, s.StartedUnix))
		if s.EndedUnix <= s.StartedUnix {
			to = s.StartedUnix + int64(s.ActiveSeconds)
		}
		if to > s.StartedUnix {
			spans = append(spans, span{s.StartedUnix, to})
		}
	}
	slices.SortFunc(spans, func(a, b span) int { return cmp.Compare(a.from, b.from) })
	var total uint64
	var cur span
	for i, sp := range spans {
		switch {
		case i == 0:
			cur = sp
		case sp.from <= cur.to:
			cur.to = max(cur.to, sp.to)
		default:
			total += uint64(cur.to - cur.from)
			cur = sp
		}
	}
	if len(spans) > 0 {
		total += uint64(cur.to - cur.from)
	}
	return total
}

// clockOff says when a machine's sessions end past now by more than
// ClockSlack: its clock (or this one) is far off, and its sessions sit in
// the future. (A clock far behind cannot be told from old sessions.)
func clockOff(dev persist.SharedDevice, now time.Time) string {
	if now.IsZero() {
		return ""
	}
	var latest int64
	for _, s := range dev.Summaries {
		latest = max(latest, s.EndedUnix)
	}
	ahead := time.Unix(latest, 0).Sub(now)
	if ahead <= ClockSlack {
		return ""
	}
	return fmt.Sprintf("device %q: its record reaches %s past this machine's clock (to %s UTC), so one of the two clocks is far off and its sessions are placed on the wrong days. "+
		"Fix: turn on network time on both (timedatectl set-ntp true) and compare `date -u` on each",
		dev.Label(), ahead.Round(time.Minute), time.Unix(latest, 0).UTC().Format("2006-01-02 15:04"))
}

// addWindowTime adds a class's figures already tallied (this machine's,
// from Build) to a tally over many machines.
func (w *windowTally) addWindowTime(wt WindowTime) {
	c := w.class(wt.Class)
	c.on += time.Duration(wt.OnTaskSeconds) * time.Second
	c.drift += time.Duration(wt.DriftSeconds) * time.Second
	c.unsplit += time.Duration(wt.UnsplitSeconds) * time.Second
	for _, b := range wt.Titles {
		c.titles[b.Title] += time.Duration(b.Seconds) * time.Second
	}
}
