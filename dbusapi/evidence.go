package dbusapi

import (
	"context"
	"fmt"
	"sync"
	"time"

	"github.com/godbus/dbus/v5"

	"github.com/antidrift/antidrift/service"
)

// EvidenceInterface is where compositor-side helpers (the KWin script, the
// GNOME Shell extension) report the focused window. It is exported on the
// same object as Session1.
const EvidenceInterface = "org.antidrift.Evidence1"

// FocusReport is one ReportFocus call: the focused window's handle (opaque,
// meaningful only to the source; "" when no window has focus), its app id
// and its title.
type FocusReport struct {
	Handle, AppID, Title string
	// Serial is the call's message serial, which the sender numbers upwards
	// on its connection. Calls are handled concurrently and can reach the
	// source out of order; a source drops a report older than one it has.
	Serial uint32
}

// ownerCheckTimeout bounds the GetNameOwner call that confirms a caller.
const ownerCheckTimeout = 2 * time.Second

// evidenceGate decides whose ReportFocus calls are believed. Only the
// compositor is: the connection that owns the source's well-known bus name
// (org.kde.KWin, org.gnome.Shell), and only while that source is the one in
// use. Anyone else — another process of the same user included — could
// otherwise feed the core windows it never had.
//
// The owner's unique name is cached. A caller that is not the cached owner
// is checked against the bus (GetNameOwner) before it is refused, so a
// compositor that restarted is believed from its first call. Unique names
// are never reused, so the cache cannot come to trust a stranger.
type evidenceGate struct {
	conn *dbus.Conn

	mu     sync.Mutex
	source string // the evidence source in use, for messages
	name   string // the bus name whose owner is believed; "" = none is
	owner  string // its owner's unique name, as last confirmed
	report func(FocusReport)
}

// believe makes calls from the owner of name reach report, until the
// returned stop is called.
func (g *evidenceGate) believe(source, name string, report func(FocusReport)) (stop func()) {
	g.mu.Lock()
	g.source, g.name, g.owner, g.report = source, name, "", report
	g.mu.Unlock()
	return func() {
		g.mu.Lock()
		defer g.mu.Unlock()
		if g.name == name {
			g.name, g.owner, g.report = "", "", nil
		}
	}
}

// admit returns where to deliver a call from sender, or the refusal.
func (g *evidenceGate) admit(sender string) (func(FocusReport), *dbus.Error) {
	g.mu.Lock()
	source, name, owner, report := g.source, g.name, g.owner, g.report
	g.mu.Unlock()
	if name == "" {
		why := g.refusalText(source)
		return nil, dbus.NewError("org.antidrift.Error.AccessDenied", []any{why})
	}
	if sender != "" && sender == owner {
		return report, nil
	}
	ctx, cancel := context.WithTimeout(context.Background(), ownerCheckTimeout)
	defer cancel()
	var now string
	err := g.conn.BusObject().CallWithContext(ctx, "org.freedesktop.DBus.GetNameOwner", 0, name).Store(&now)
	if err == nil && now == sender {
		g.mu.Lock()
		if g.name == name {
			g.owner = now
		}
		g.mu.Unlock()
		return report, nil
	}
	return nil, dbus.NewError("org.antidrift.Error.AccessDenied", []any{fmt.Sprintf(
		"antidrift believes focus reports only from the compositor: the connection that owns %s (the %s evidence source), and %s is not it", name, source, sender)})
}

func (g *evidenceGate) refusalText(source string) string {
	if source == "" {
		source = "none"
	}
	return fmt.Sprintf("antidrift's evidence source is %s, which takes no focus reports over the bus; ReportFocus is believed only from KWin or GNOME Shell while that is the source in use", source)
}

// BelieveEvidenceFrom makes org.antidrift.Evidence1.ReportFocus calls from
// the current owner of busName reach report; calls from anyone else are
// refused with org.antidrift.Error.AccessDenied naming the rule. source
// names the evidence source in use, for those messages. Before it is called,
// and after stop, every call is refused. report is called from the bus's
// handler goroutines, possibly concurrently.
func (s *Server) BelieveEvidenceFrom(source, busName string, report func(FocusReport)) (stop func()) {
	return s.evidence.believe(source, busName, report)
}

// SetEvidenceSource names the evidence source in use when it takes no
// reports over the bus, so a refused ReportFocus says which one it is.
func (s *Server) SetEvidenceSource(source string) {
	s.evidence.mu.Lock()
	s.evidence.source = source
	s.evidence.mu.Unlock()
}

// evidenceObject is exported as org.antidrift.Evidence1.
type evidenceObject struct{ s *Server }

func (e *evidenceObject) ReportFocus(msg dbus.Message, handle, appID, title string) *dbus.Error {
	if err := e.s.gate(&msg); err != nil {
		return err
	}
	sender, _ := msg.Headers[dbus.FieldSender].Value().(string)
	report, err := e.s.evidence.admit(sender)
	if err != nil {
		return err
	}
	if err := e.s.svc.Permitted(service.MethodReportFocus); err != nil {
		return dbusError(err)
	}
	report(FocusReport{Handle: handle, AppID: appID, Title: title, Serial: msg.Serial()})
	return nil
}
