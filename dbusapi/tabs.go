package dbusapi

import (
	"github.com/godbus/dbus/v5"

	"github.com/antidrift/antidrift/service"
)

// ReportTab is a browser's native host reporting the active tab of the
// browser's focused window. Unlike ReportFocus it is taken from any
// client: the core believes a tab only for the window the trusted source
// says has focus, when that window's title is the tab's (docs/evidence.md),
// so a report from anyone else can describe no window that is not in front.
func (e *evidenceObject) ReportTab(msg dbus.Message, browser, url, title string, private bool) *dbus.Error {
	if err := e.s.gate(&msg); err != nil {
		return err
	}
	if err := e.s.svc.Permitted(service.MethodReportTab); err != nil {
		return dbusError(err)
	}
	return dbusError(e.s.svc.RecordTab(browser, url, title, private))
}

// ForgetTabs says a browser's extension is gone.
func (e *evidenceObject) ForgetTabs(msg dbus.Message, browser string) *dbus.Error {
	if err := e.s.gate(&msg); err != nil {
		return err
	}
	if err := e.s.svc.Permitted(service.MethodForgetTabs); err != nil {
		return dbusError(err)
	}
	return dbusError(e.s.svc.ForgetTabs(browser))
}
