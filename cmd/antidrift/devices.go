package main

import (
	"cmp"
	"errors"
	"flag"
	"fmt"
	"slices"
	"strings"

	"github.com/godbus/dbus/v5"

	"github.com/antidrift/antidrift/config"
	"github.com/antidrift/antidrift/dbusapi"
	"github.com/antidrift/antidrift/persist"
	"github.com/antidrift/antidrift/report"
	"github.com/antidrift/antidrift/service"
)

// deviceChoice is --device and --this-device, which report, history and
// verify share: with sync_dir set they cover every machine publishing
// there, unless told otherwise.
type deviceChoice struct {
	only *string
	this *bool
}

func deviceFlags(fs *flag.FlagSet) deviceChoice {
	return deviceChoice{
		only: fs.String("device", "", "with sync_dir set: only the machine named `NAME` (its device_name, hostname or device id)"),
		this: fs.Bool("this-device", false, "with sync_dir set: this machine alone, as without sync_dir"),
	}
}

// pick is which machines the flags and the config name.
func (c deviceChoice) pick(cfg config.Config) (report.Devices, error) {
	if *c.this && *c.only != "" {
		return report.Devices{}, errors.New("give --device NAME or --this-device, not both")
	}
	if *c.this || cfg.SyncDir == "" {
		if *c.only != "" {
			return report.Devices{}, errors.New("--device needs sync_dir set in config.toml: without it there is only this machine")
		}
		return report.Devices{}, nil
	}
	// Now: history and verify say a clock far off as report does.
	return report.Devices{SyncDir: cfg.SyncDir, ThisName: cfg.DeviceLabel(), Only: *c.only, Now: reportNow()}, nil
}

// syncConfig is the config file's sync settings for history and verify;
// its problems are the daemon's and the report's to say.
func syncConfig() config.Config {
	path, err := config.DefaultPath()
	if err != nil {
		return config.Default()
	}
	cfg, _ := config.Load(path)
	return cfg
}

// otherDevices is every other machine under sync_dir as
// report.ChooseDevices takes it for report and the daemon's Report (this
// machine's own comes from the daemon), those which.Only names, and every
// problem sync_dir shows. stateDir is the daemon's state directory ("" for
// the default, $XDG_STATE_HOME/antidrift): its device id says which copy
// is this machine's, its audit.jsonl that the copy is this machine's own,
// its remembered heads which copies were rewritten.
func otherDevices(which report.Devices, stateDir string) (devices []report.Chosen, problems []string, err error) {
	if stateDir == "" {
		stateDir, _ = persist.DefaultDir()
	}
	choice, err := report.ChooseDevices(persist.NewReader(stateDir), which)
	if err != nil {
		return nil, nil, err
	}
	for _, d := range choice.Others {
		if d.Shown {
			devices = append(devices, d)
		}
	}
	return devices, choice.Problems, nil
}

// deviceError is what a command says when it could not cover the
// machines: a --device no machine has is a usage error (as when the
// daemon refuses it), anything else the command's refusal.
func deviceError(c *command, err error) error {
	if none := (*service.NoSuchDevice)(nil); errors.As(err, &none) {
		return c.usageError("--device: %s", none)
	}
	return &exitError{code: exitRefused, msg: "antidrift " + c.name + ": " + err.Error()}
}

// withOtherDevices merges other machines' verified sessions into the
// daemon's History entries, newest first, each named with its machine,
// and keeps the newest limit. Lines that do not verify add no entry;
// their problems are returned to be said, and so are notes (a machine's
// key pinned the first time it was read).
func withOtherDevices(entries []map[string]dbus.Variant, which report.Devices, stateDir string, limit int) (_ []map[string]dbus.Variant, problems, notes []string, _ error) {
	others, problems, err := otherDevices(which, stateDir)
	if err != nil {
		return nil, nil, nil, err
	}
	if which.Only != "" && which.Only != which.ThisName {
		entries = nil
	}
	for _, e := range entries {
		e["device"] = dbus.MakeVariant(which.ThisName)
	}
	for _, d := range others {
		// The lines that count (signed by its pinned key, chaining, with
		// good figures) are listed even when a forged line beside them was
		// left out; its problems are among problems already.
		if d.Pinned != "" {
			notes = append(notes, d.Pinned)
		}
		if !d.Counts {
			continue
		}
		for _, s := range d.Summaries {
			e := dbusapi.HistoryEntry(s)
			e["device"] = dbus.MakeVariant(d.Label())
			entries = append(entries, e)
		}
	}
	ended := func(e map[string]dbus.Variant) int64 {
		var t int64
		if v, ok := e["ended_unix"]; ok {
			_ = v.Store(&t)
		}
		return t
	}
	slices.SortStableFunc(entries, func(a, b map[string]dbus.Variant) int { return cmp.Compare(ended(b), ended(a)) })
	if limit > 0 && len(entries) > limit {
		entries = entries[:limit]
	}
	return entries, problems, notes, nil
}

// verifyOtherDevices verifies every other machine's copy under sync_dir,
// each on its own, and adds them to verify's JSON report ("devices",
// "problems"). ok is false when any copy does not verify or sync_dir
// shows a problem (a conflict copy, a duplicated folder); text says it for
// a person.
func verifyOtherDevices(which report.Devices, stateDir string, out map[string]any) (ok bool, text string, err error) {
	others, problems, err := otherDevices(which, stateDir)
	if err != nil {
		return false, "", err
	}
	ok = len(problems) == 0
	var b strings.Builder
	list := make([]map[string]any, 0, len(others))
	for _, d := range others {
		list = append(list, map[string]any{"device_id": d.ID, "name": d.Label(), "form": d.Form, "ok": d.OK, "counts": d.Counts, "entries": d.Entries, "problem": d.Problem, "key": d.Key, "pinned": d.Pinned})
		if d.Pinned != "" {
			fmt.Fprintf(&b, "%s\n", d.Pinned)
		}
		if d.OK {
			fmt.Fprintf(&b, "Device %s (%s copy): intact, %d %s, signed by its key %s.\n", service.Quote(d.Label()), d.Form, d.Entries, plural(int(d.Entries), "entry", "entries"), d.Key)
		} else {
			ok = false
			fmt.Fprintf(&b, "Device %s (%s copy): %d %s count, the rest left out (see below).\n", service.Quote(d.Label()), d.Form, d.Entries, plural(int(d.Entries), "entry", "entries"))
		}
	}
	// Each device's problem is among problems (report.ChooseDevices), so
	// verify, history and report say the same sentences.
	for _, p := range problems {
		fmt.Fprintf(&b, "! %s\n", p)
	}
	out["devices"], out["problems"] = list, nonNilStrings(problems)
	return ok, b.String(), nil
}
