package main

import (
	"flag"
	"fmt"
	"strings"

	"github.com/antidrift/antidrift/persist"
	"github.com/antidrift/antidrift/service"
)

// cmdForgetKey re-pairs a machine that really was reinstalled: its
// folder in sync_dir now carries a new key, which this machine refuses
// because another was pinned for it (docs/sync.md). It needs no daemon:
// it appends a line to the pins file in the state directory, as a reader
// appends a pin.
var cmdForgetKey = &command{
	name:     "forget-key",
	synopsis: "DEVICE [--state-dir DIR]",
	summary:  "re-pair a machine that was reinstalled: forget the key pinned for DEVICE (its device_name or device id in sync_dir), so the key its folder carries now is pinned the next time it is read",
	minArgs:  1, maxArgs: 1,
	setup: setupForgetKey,
}

func setupForgetKey(fs *flag.FlagSet) func(*invocation) error {
	stateDir := fs.String("state-dir", "", "the daemon's state directory is `DIR` (its --state-dir), where the pinned keys are kept (default $XDG_STATE_HOME/antidrift)")
	return func(x *invocation) error {
		dir := *stateDir
		if dir == "" {
			var err error
			if dir, err = persist.DefaultDir(); err != nil {
				return &exitError{code: exitRefused, msg: "antidrift forget-key: " + err.Error()}
			}
		}
		device := x.arg()
		id, label, err := deviceToForget(device, dir)
		if err != nil {
			return x.cmd.usageError("%s", err)
		}
		old, err := persist.ForgetKey(dir, id)
		if err != nil {
			return &exitError{code: exitRefused, msg: fmt.Sprintf("antidrift forget-key: the pinned keys in %s could not be changed: %v", dir, err)}
		}
		forgotten := ""
		if old != nil {
			forgotten = persist.Fingerprint(old)
		}
		if x.json {
			return x.printJSON(map[string]any{"device_id": id, "name": label, "forgotten_key": forgotten})
		}
		if old == nil {
			fmt.Fprintf(x.stdout, "No key was pinned for device %s (%s): there was nothing to forget. The key its folder carries is pinned the first time it is read.\n", service.Quote(label), id)
			return nil
		}
		fmt.Fprintf(x.stdout, "Forgot key %s, pinned for device %s (%s). The key its folder carries now is pinned the next time this machine reads sync_dir (antidrift verify does it now): compare it with antidrift verify on that machine.\n",
			forgotten, service.Quote(label), id)
		return nil
	}
}

// deviceToForget finds the device id DEVICE names: a device id as it is,
// or the device_name of exactly one folder in sync_dir. This machine's
// own id is refused: its key is its own, never pinned.
func deviceToForget(device, stateDir string) (id, label string, err error) {
	own := persist.NewReader(stateDir).DeviceID()
	if persist.IsDeviceID(device) {
		id, label = device, device
	} else {
		cfg := syncConfig()
		if cfg.SyncDir == "" {
			return "", "", fmt.Errorf("%s is not a device id, and without sync_dir in config.toml no device name can be looked up: give the device id (the folder's name in sync_dir)", service.Quote(device))
		}
		devs, _, rerr := persist.ReadShared(cfg.SyncDir, persist.LoadTrust(""))
		if rerr != nil {
			return "", "", rerr
		}
		var ids, names []string
		for _, d := range devs {
			names = append(names, d.Label())
			// A folder whose device.json claims another id than the
			// folder's own name is no machine (the reader leaves it out):
			// its claim must not steer forget-key to that id.
			if d.ID != "" && d.ID == d.Folder && d.Label() == device {
				ids = append(ids, d.ID)
			}
		}
		switch len(ids) {
		case 0:
			return "", "", fmt.Errorf("no machine in sync_dir is named %s (there are: %s); give its device id", service.Quote(device), strings.Join(names, ", "))
		case 1:
			id, label = ids[0], device
		default:
			return "", "", fmt.Errorf("%d machines in sync_dir are named %s (%s): give the device id of the one to re-pair", len(ids), service.Quote(device), strings.Join(ids, ", "))
		}
	}
	if id == own {
		return "", "", fmt.Errorf("%s is this machine's own device id: its key is its own, never pinned, so there is nothing to forget", id)
	}
	return id, label, nil
}
