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
//
// The address comes as the browser's own URL parser split it (scheme,
// host, path): the core makes the site of it, never parsing an address
// again (service.SiteFromParts). tabID is the browser's id of the tab
// (-1: none), which a BlockTab names.
func (e *evidenceObject) ReportTab(msg dbus.Message, browser string, tabID int64, scheme, host, path, title string, private bool) *dbus.Error {
	if err := e.s.gate(&msg); err != nil {
		return err
	}
	if err := e.s.svc.Permitted(service.MethodReportTab); err != nil {
		return dbusError(err)
	}
	return dbusError(e.s.svc.RecordTab(browser, service.TabReport{TabID: tabID, Scheme: scheme, Host: host, Path: path, Title: title, Private: private}))
}

// TabBlocked is a native host relaying its extension's word that it
// replaced tab tabID's page, as a BlockTab ordered. Only the confirmation
// the core waits for counts (service.TabBlocked); without it the window
// is minimized.
func (e *evidenceObject) TabBlocked(msg dbus.Message, browser string, tabID int64) *dbus.Error {
	if err := e.s.gate(&msg); err != nil {
		return err
	}
	if err := e.s.svc.Permitted(service.MethodTabBlocked); err != nil {
		return dbusError(err)
	}
	return dbusError(e.s.svc.TabBlocked(browser, tabID))
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

// TabOrder carries the core's word to the browsers' extensions, as
// Evidence1 signals their native hosts relay: BlockTab(browser, tab_id,
// site, next_action, success_condition, deadline_unix) and RestoreTabs().
func (s *Server) TabOrder(o service.TabOrder) {
	var err error
	if o.Restore {
		err = s.conn.Emit(ObjectPath, EvidenceInterface+".RestoreTabs")
	} else {
		err = s.conn.Emit(ObjectPath, EvidenceInterface+".BlockTab", o.Browser, o.TabID, o.Site, o.NextAction, o.Done, o.DeadlineUnix)
	}
	if err != nil {
		s.log.Warn("telling the browsers' extensions failed", "err", err)
	}
}
