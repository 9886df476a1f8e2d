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
	sender, _ := msg.Headers[dbus.FieldSender].Value().(string)
	h, err := e.s.tabHosts.source(sender, browser)
	if err != nil {
		return err
	}
	return h.recordInOrder(msg.Serial(), func() error {
		return e.s.svc.RecordTab(h.src, service.TabReport{TabID: tabID, Scheme: scheme, Host: host, Path: path, Title: title, Private: private})
	})
}

// TabBlocked is a native host relaying its extension's word that it
// replaced tab tabID's page, as a BlockTab ordered. Believed, like
// ReportTab, only from a native host a browser started; and only the
// confirmation the core waits for, from the host the order went to,
// counts (service.TabBlocked). Without it the window is minimized.
func (e *evidenceObject) TabBlocked(msg dbus.Message, browser string, tabID int64) *dbus.Error {
	if err := e.s.gate(&msg); err != nil {
		return err
	}
	if err := e.s.svc.Permitted(service.MethodTabBlocked); err != nil {
		return dbusError(err)
	}
	sender, _ := msg.Headers[dbus.FieldSender].Value().(string)
	h, err := e.s.tabHosts.source(sender, browser)
	if err != nil {
		return err
	}
	// Not recordInOrder: a confirmation is never superseded by a later call.
	return h.record(func() error { return e.s.svc.TabBlocked(h.src, tabID) })
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
// Evidence1 signals their native hosts relay: BlockTab(browser, tab_id,
// site, next_action, success_condition, deadline_unix), sent to the one
// host whose report named the tab (o.Conn), so no other browser or profile
// acts on another's tab id and no other client hears the site; and
// RestoreTabs(), to all.
func (s *Server) TabOrder(o service.TabOrder) {
	var err error
	if o.Restore {
		err = s.conn.Emit(ObjectPath, EvidenceInterface+".RestoreTabs")
	} else {
		err = s.emitTo(o.Conn, EvidenceInterface, "BlockTab", o.Browser, o.TabID, o.Site, o.NextAction, o.Done, o.DeadlineUnix)
	}
	if err != nil {
		s.log.Warn("telling the browsers' extensions failed", "err", err)
	}
}

// emitTo sends signal iface.member from the object to dest alone (a
// unicast signal: the bus delivers it to dest whatever its match rules),
// or to all when dest is "".
func (s *Server) emitTo(dest, iface, member string, values ...any) error {
	if dest == "" {
		return s.conn.Emit(ObjectPath, iface+"."+member, values...)
	}
	msg := &dbus.Message{Type: dbus.TypeSignal, Headers: map[dbus.HeaderField]dbus.Variant{
		dbus.FieldPath:        dbus.MakeVariant(ObjectPath),
		dbus.FieldInterface:   dbus.MakeVariant(iface),
		dbus.FieldMember:      dbus.MakeVariant(member),
		dbus.FieldDestination: dbus.MakeVariant(dest),
		dbus.FieldSignature:   dbus.MakeVariant(dbus.SignatureOf(values...)),
	}, Body: values}
	return s.conn.Send(msg, nil).Err
}
