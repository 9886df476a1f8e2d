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
	return report.Devices{SyncDir: cfg.SyncDir, ThisName: cfg.DeviceLabel(), Only: *c.only}, nil
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

// otherDevices reads every other machine's copy under sync_dir (this
// machine's comes from the daemon), narrowed to only when it is set.
// stateDir is the daemon's state directory ("" for the default,
// $XDG_STATE_HOME/antidrift): its device id says which copy is this
// machine's, and its audit.jsonl that the copy is this machine's own.
func otherDevices(which report.Devices, stateDir string) (devices []persist.SharedDevice, problems []string, err error) {
	var local *persist.Reader
	thisID := ""
	if stateDir == "" {
		stateDir, _ = persist.DefaultDir()
	}
	if stateDir != "" {
		local = persist.NewReader(stateDir)
		thisID = local.DeviceID()
	}
	all, problems, err := persist.ReadShared(which.SyncDir, persist.LoadTrust(stateDir))
	if err != nil {
		return nil, nil, err
	}
	names := []string{which.ThisName}
	for _, d := range all {
		if d.ID != "" && d.ID == thisID {
			// This machine comes from the daemon; its copy is only checked:
			// held to this machine's key, and holding nothing it never sealed.
			if d.Problem != "" {
				problems = append(problems, d.Problem)
			}
			if !local.CopyIsOurs(d) {
				problems = append(problems, persist.SameIDProblem(d))
			}
			continue
		}
		names = append(names, d.Label())
		if which.Only == "" || which.Only == d.ID || which.Only == d.Label() {
			devices = append(devices, d)
		}
	}
	if which.Only != "" && which.Only != which.ThisName && which.Only != thisID && len(devices) == 0 {
		return nil, nil, &service.NoSuchDevice{Device: which.Only, Devices: names}
	}
	return devices, problems, nil
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
		// The lines that count (signed by its pinned key, chaining) are
		// listed even when a forged line beside them was left out.
		if d.Problem != "" {
			problems = append(problems, d.Problem)
		}
		if d.Pinned != "" {
			notes = append(notes, d.Pinned)
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
		list = append(list, map[string]any{"device_id": d.ID, "name": d.Label(), "form": d.Form, "ok": d.OK, "entries": d.Entries, "problem": d.Problem, "key": d.Key, "pinned": d.Pinned})
		if d.Pinned != "" {
			fmt.Fprintf(&b, "%s\n", d.Pinned)
		}
		if d.OK {
			fmt.Fprintf(&b, "Device %s (%s copy): intact, %d %s, signed by its key %s.\n", service.Quote(d.Label()), d.Form, d.Entries, plural(int(d.Entries), "entry", "entries"), d.Key)
		} else {
			ok = false
			fmt.Fprintf(&b, "! %s\n", d.Problem)
		}
	}
	for _, p := range problems {
		fmt.Fprintf(&b, "! %s\n", p)
	}
	out["devices"], out["problems"] = list, nonNilStrings(problems)
	return ok, b.String(), nil
}
