package dbusapi

import (
	"github.com/godbus/dbus/v5"

	"github.com/antidrift/antidrift/service"
)

// HistoryEntry is a summary as one History item, so a client that shows
// another machine's sessions beside the daemon's (antidrift history with
// sync_dir) gives them the very same keys.
func HistoryEntry(s service.Summary) map[string]dbus.Variant { return historyEntry(s) }
