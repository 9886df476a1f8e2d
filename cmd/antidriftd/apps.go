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

// openApps reads the desktop entries. Entries that cannot be watched are
// a problem the person is shown, not a reason to stop: they are then read
// once, and an app installed later is named after a restart.
func (m *Main) openApps() (problem string) {
	x, err := apps.Open("")
	if err != nil {
		x = apps.Read("")
		problem = "apps are named as their desktop entries were at start: the entries could not be watched (" + err.Error() + "), so an app installed or renamed later is named so after antidriftd restarts"
	}
	m.apps = x
	m.log.Info("desktop entries read", "entries", x.Len(), "truncated", x.Truncated())
	return problem
}
