package gnomeshell

import (
	"fmt"

	"github.com/godbus/dbus/v5"
)

// Extension states, as GNOME Shell's extensionUtils.js numbers them.
const (
	stateActive      = 1
	stateInactive    = 2
	stateError       = 3
	stateOutOfDate   = 4
	stateInitialized = 6
	stateDeactivate  = 7
	stateActivating  = 8
	stateUninstalled = 99
)

// Why there is no evidence, for each thing that can be wrong with the
// extension. They name the command that fixes it.
const (
	reasonNotInstalled = "the antidrift extension is not installed in GNOME Shell: make install-user, then log out and back in (GNOME Shell finds new extensions at login)"
	reasonNotEnabled   = "GNOME Shell is running but the antidrift extension is not enabled: gnome-extensions enable " + ExtensionUUID
	reasonSwitchedOff  = "the antidrift extension is enabled but GNOME Shell is not running it (it runs no user extensions on the lock screen)"
	reasonUserExtsOff  = "GNOME Shell has user extensions switched off, the antidrift extension with them: gsettings set org.gnome.shell disable-user-extensions false (or the switch in the Extensions app)"
	reasonActivating   = "the antidrift extension is starting in GNOME Shell"
	reasonOutOfDate    = "the antidrift extension does not support this version of GNOME Shell: install a newer antidrift (make install-user)"
)

// extensionProblem says why the extension, as GetExtensionInfo or
// ExtensionStateChanged describe it, gives no evidence; "" when it is
// running. An empty description is GNOME Shell's answer for an extension
// it does not know.
func extensionProblem(info map[string]dbus.Variant) string {
	state, ok := info["state"].Value().(float64)
	if !ok {
		return reasonNotInstalled
	}
	switch state {
	case stateActive:
		return ""
	case stateInactive, stateInitialized, stateDeactivate:
		if enabled, _ := info["enabled"].Value().(bool); enabled {
			return reasonSwitchedOff
		}
		return reasonNotEnabled
	case stateActivating:
		return reasonActivating
	case stateError:
		msg, _ := info["error"].Value().(string)
		return fmt.Sprintf("the antidrift extension failed in GNOME Shell (%s): see journalctl --user -b /usr/bin/gnome-shell", msg)
	case stateOutOfDate:
		return reasonOutOfDate
	case stateUninstalled:
		return reasonNotInstalled
	}
	return fmt.Sprintf("the antidrift extension is in a state GNOME Shell numbers %v, not running", state)
}
