package dbusapi

import (
	"github.com/godbus/dbus/v5"

	"github.com/antidrift/antidrift/service"
)

// ReportTab is a browser's native host reporting the active tab of the
// browser's focused window. It is believed only from a native host a
// browser started (tabHosts: the caller's process, as the bus and /proc
// tell it), as that browser's; anyone else is refused with AccessDenied
// and changes nothing. The core then believes the tab only for the window
// the trusted source says has focus, when that window's title is the tab's
// (docs/evidence.md).
func (e *evidenceObject) ReportTab(msg dbus.Message, browser, url, title string, private bool) *dbus.Error {
	if err := e.s.gate(&msg); err != nil {
		return err
	}
	if err := e.s.svc.Permitted(service.MethodReportTab); err != nil {
		return dbusError(err)
	}
	sender, _ := msg.Headers[dbus.FieldSender].Value().(string)
	h, err := e.s.tabHosts.source(sender, browser)
	if err != nil {
		return err
	}
	return h.recordInOrder(msg.Serial(), func() error {
		return e.s.svc.RecordTab(h.src, service.TabReport{URL: url, Title: title, Private: private})
	})
}

// ForgetTabs says a browser's extension is gone: it ends the calling
// host's own claims, and nobody else's. Refused, like ReportTab, from
// anyone but a native host a browser started.
func (e *evidenceObject) ForgetTabs(msg dbus.Message, browser string) *dbus.Error {
	if err := e.s.gate(&msg); err != nil {
		return err
	}
	if err := e.s.svc.Permitted(service.MethodForgetTabs); err != nil {
		return dbusError(err)
	}
	sender, _ := msg.Headers[dbus.FieldSender].Value().(string)
	h, err := e.s.tabHosts.source(sender, browser)
	if err != nil {
		return err
	}
	return h.recordInOrder(msg.Serial(), func() error { return e.s.svc.ForgetTabs(h.src.Conn) })
}

// TabOrder carries the core's word to the browsers' extensions, as
// Evidence1 signals their native hosts relay: BlockTab(browser, site,
// next_action, success_condition, deadline_unix) and RestoreTabs().
func (s *Server) TabOrder(o service.TabOrder) {
	var err error
	if o.Restore {
		err = s.conn.Emit(ObjectPath, EvidenceInterface+".RestoreTabs")
	} else {
		err = s.conn.Emit(ObjectPath, EvidenceInterface+".BlockTab", o.Browser, o.Site, o.NextAction, o.Done, o.DeadlineUnix)
	}
	if err != nil {
		s.log.Warn("telling the browsers' extensions failed", "err", err)
	}
}
