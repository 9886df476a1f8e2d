package main

import (
	"github.com/antidrift/antidrift/apps"
	"github.com/antidrift/antidrift/service"
)

// appDirectory is the core's AppDirectory port on apps.Index: the
// desktop entries, kept in memory and fresh by inotify.
type appDirectory struct{ x *apps.Index }

func (d appDirectory) Lookup(class, instance, appID string) (service.App, bool) {
	e, ok := d.x.Lookup(class, instance, appID)
	return service.App(e), ok
}

// openApps reads the desktop entries. One that cannot be opened is a
// problem the person is shown, not a reason to stop: windows are then
// named by their class.
func (m *Main) openApps() (problem string) {
	x, err := apps.Open("")
	if err != nil {
		return "apps are shown by their window class: the desktop entries could not be watched (" + err.Error() + ")"
	}
	m.apps = x
	m.log.Info("desktop entries read", "entries", x.Len(), "truncated", x.Truncated())
	return ""
}
