package dbusapi

import (
	"context"
	"fmt"
	"sync"

	"github.com/godbus/dbus/v5"

	"github.com/antidrift/antidrift/internal/busname"
	"github.com/antidrift/antidrift/service"
)

// EvidenceInterface is where compositor-side helpers (the KWin script, the
// GNOME Shell extension) report the focused window. It is exported on the
// same object as Session1.
const EvidenceInterface = "org.antidrift.Evidence1"

// errAccessDenied is the bus's own name for a refusal by rule.
const errAccessDenied = "org.freedesktop.DBus.Error.AccessDenied"

// evidenceGate decides whose ReportFocus calls are believed. Only the
// compositor is: the connection that owns the source's well-known bus name
// (org.kde.KWin, org.gnome.Shell) at the moment the report is read, and
// only while that source is the one in use. Anyone else — another process
// of the same user, or a compositor that has since given up the name —
// could otherwise feed the core windows it never had.
//
// Every report is confirmed with the bus (GetNameOwner), off the core's
// lock. A cached owner cannot be exact: godbus hands method calls and
// signals to different goroutines, so the NameOwnerChanged that ended the
// sender's ownership (ReleaseName, a disconnect, a new owner) can still be
// on its way when the report is read. The bus answers in order, after it
// routed the report to us, so its answer is never older than the report.
// A report costs one round trip to the bus; reports come once per change of
// focus.
//
// Reports are ordered by the sender's message serial, which counts up per
// connection: calls are handled concurrently and can arrive out of order,
// and one overtaken by a newer report from the same connection is dropped.
// The order belongs to the owner: when the bus names a new one, its first
// report is believed, whatever its serial.
type evidenceGate struct {
	conn *dbus.Conn

	mu     sync.Mutex
	source string // the evidence source in use, for messages
	name   string // the bus name whose owner is believed; "" = none is
	term   uint64 // counts believe calls: a stop ends only its own term
	owner  busname.Owner
	order  reportOrder // of owner's reports
	push   func(handle, app, title string)
}

// believe makes calls from the owner of name reach push, until the
// returned stop is called.
// A stop called late, after a later believe (even of the same name),
// leaves that later one alone.
func (g *evidenceGate) believe(source, name string, push func(handle, app, title string)) (stop func()) {
	g.mu.Lock()
	g.term++
	term := g.term
	g.source, g.name, g.owner, g.order, g.push = source, name, busname.Owner{Name: name}, reportOrder{}, push
	g.mu.Unlock()
	return func() {
		g.mu.Lock()
		defer g.mu.Unlock()
		if g.term == term {
			g.name, g.push = "", nil
		}
	}
}

// take believes one report from sender, numbered serial on its
// connection, and hands it on; or returns the refusal.
func (g *evidenceGate) take(sender string, serial uint32, handle, app, title string) *dbus.Error {
	g.mu.Lock()
	source, name := g.source, g.name
	g.mu.Unlock()
	if name == "" {
		if source == "" {
			source = "none"
		}
		return accessDenied("antidrift's evidence source is %s, which takes no focus reports over the bus; ReportFocus is believed only from KWin or GNOME Shell while that is the source in use", source)
	}
	ctx, cancel := context.WithTimeout(context.Background(), busname.CallTimeout)
	owner, seq, err := busname.Ask(ctx, g.conn, name)
	cancel()
	if err != nil {
		return accessDenied("antidrift believes focus reports only from the connection that owns %s, and could not ask the bus who that is: %v", name, err)
	}

	g.mu.Lock()
	defer g.mu.Unlock()
	if g.name != name {
		return accessDenied("antidrift stopped taking focus reports from %s", name)
	}
	if g.owner.Learn(owner, seq) {
		g.order = reportOrder{} // a new owner numbers its own messages
	}
	if sender == "" || owner != sender || g.owner.Unique != sender {
		return accessDenied("antidrift believes focus reports only from the compositor: the connection that owns %s (the %s evidence source) when the report is read, and %s is not it", name, source, sender)
	}
	if !g.order.newer(serial) {
		return nil // overtaken by a newer report of the same connection
	}
	g.push(handle, app, title) // never blocks: a newest-wins mailbox
	return nil
}

// reportOrder keeps one connection's reports in the order it sent them,
// by their message serials, which count up per connection and wrap.
type reportOrder struct {
	serial  uint32 // of the newest report taken
	ordered bool   // serial is set
}

// newer says whether the report numbered serial came after every report
// taken so far, and if so takes it.
func (o *reportOrder) newer(serial uint32) bool {
	if o.ordered && int32(serial-o.serial) <= 0 {
		return false
	}
	o.serial, o.ordered = serial, true
	return true
}

func accessDenied(format string, args ...any) *dbus.Error {
	return dbus.NewError(errAccessDenied, []any{fmt.Sprintf(format, args...)})
}

// BelieveEvidenceFrom makes org.antidrift.Evidence1.ReportFocus calls from
// the owner of busName, at the moment each is read, reach push, in the
// order their sender sent them; calls from anyone else are refused with
// org.freedesktop.DBus.Error.AccessDenied naming the rule. source names
// the evidence source in use, for those messages. Before it is called, and
// after stop, every call is refused. push is called with the gate's lock
// held, from the bus's handler goroutines: it must not block.
func (s *Server) BelieveEvidenceFrom(source, busName string, push func(handle, app, title string)) (stop func()) {
	return s.evidence.believe(source, busName, push)
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
	if err := e.s.svc.Permitted(service.MethodReportFocus); err != nil {
		return dbusError(err)
	}
	sender, _ := msg.Headers[dbus.FieldSender].Value().(string)
	return e.s.evidence.take(sender, msg.Serial(), handle, appID, title)
}
