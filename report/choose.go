package report

import (
	"github.com/antidrift/antidrift/persist"
	"github.com/antidrift/antidrift/service"
)

// Chosen is another machine as every reader of sync_dir takes it: report,
// history, verify and the daemon's Report all take their machines from
// ChooseDevices, so they count the same sessions and say the same
// problems.
type Chosen struct {
	persist.SharedDevice
	// Counts is whether its Summaries count: the lines signed by its
	// pinned key that chain, with good figures (a forged or impossible
	// line beside them is left out and said in Problem). A copy rewritten
	// under the head this machine remembers counts not at all: then OK is
	// false, Entries 0 and Problem says it.
	Counts bool
	// Shown is whether Devices.Only names it (always when Only is "").
	Shown bool
}

// Choice is what ChooseDevices found.
type Choice struct {
	ThisID, ThisName string
	// ThisKey is the fingerprint this machine's own copy is held to, ""
	// when it has none in sync_dir.
	ThisKey string
	// ThisShown is whether Devices.Only names this machine.
	ThisShown bool
	Others    []Chosen
	// Problems is everything wrong in sync_dir, each said once: the
	// read's own (layouts, conflict copies, what the bounds left out),
	// this machine's copy, then each other machine's in folder order
	// (its Problem, a copy behind the remembered head, a clock far off).
	Problems []string
}

// ChooseDevices reads sync_dir (d.SyncDir, which must be set) for local,
// this machine's state directory, and judges every other machine's copy
// once. A d.Only that no machine has is *service.NoSuchDevice.
func ChooseDevices(local *persist.Reader, d Devices) (Choice, error) {
	c := Choice{ThisID: local.DeviceID(), ThisName: d.ThisName}
	include := func(id, name string) bool { return d.Only == "" || d.Only == id || d.Only == name }
	c.ThisShown = include(c.ThisID, d.ThisName)
	shared, problems, err := persist.ReadShared(d.SyncDir, persist.LoadTrust(local.Dir()))
	if err != nil {
		c.Problems = append(c.Problems, err.Error())
	}
	c.Problems = append(c.Problems, problems...)
	seen := local.SeenHeads()
	names := []string{d.ThisName}
	for _, dev := range shared {
		if c.ThisID != "" && dev.ID == c.ThisID {
			// This machine: counted from its state directory, once. Its
			// copy is checked: held to this machine's key, and holding no
			// session this machine never sealed.
			c.ThisKey = dev.Key
			if dev.Problem != "" {
				c.Problems = append(c.Problems, dev.Problem)
			}
			if !local.CopyIsOurs(dev) {
				c.Problems = append(c.Problems, persist.SameIDProblem(dev))
			}
			continue
		}
		ch := Chosen{SharedDevice: dev, Counts: len(dev.Summaries) > 0, Shown: include(dev.ID, dev.Label())}
		names = append(names, dev.Label())
		if dev.Problem != "" {
			c.Problems = append(c.Problems, dev.Problem)
		}
		if ch.Counts {
			if head, ok := seen[persist.SeenKey(dev.ID, dev.Form)]; ok {
				if behind, rewritten := persist.Behind(dev, head); behind != "" {
					c.Problems = append(c.Problems, behind)
					if rewritten {
						ch.Counts, ch.OK, ch.Entries, ch.Problem = false, false, 0, behind
					}
				}
			}
		}
		if ch.Counts {
			if off := clockOff(dev, d.Now); off != "" {
				c.Problems = append(c.Problems, off)
			}
		}
		c.Others = append(c.Others, ch)
	}
	if d.Only != "" && !c.ThisShown {
		found := false
		for _, o := range c.Others {
			found = found || o.Shown
		}
		if !found {
			return Choice{}, &service.NoSuchDevice{Device: d.Only, Devices: names}
		}
	}
	return c, nil
}
