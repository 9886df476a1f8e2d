package dbusapi

import (
	"errors"
	"sync"

	"github.com/godbus/dbus/v5"

	"github.com/antidrift/antidrift/service"
)

// ErrorDataInterface is where a client asks for refusals as data. An
// org.antidrift.Error.* reply is, by default, what every binding reads:
// one string, the message. GDBus (gdbus, GJS, so the GNOME Shell
// extension) shows only "Error return with body of type …" for an error
// with more arguments than that, so the data goes only to connections that
// called Enable; their errors are (s message, a{sv} data), the message
// first and the same. docs/dbus-api.md lists the keys.
const ErrorDataInterface = "org.antidrift.ErrorData1"

// errorDataObject is exported as org.antidrift.ErrorData1.
type errorDataObject struct{ s *Server }

// Enable makes every org.antidrift.Error.* this connection receives from
// now on carry its data as a second argument.
func (o *errorDataObject) Enable(msg dbus.Message) *dbus.Error {
	if err := o.s.gate(&msg); err != nil {
		return err
	}
	sender, _ := msg.Headers[dbus.FieldSender].Value().(string)
	o.s.wantData.add(sender)
	return nil
}

// dataPeers are the connections that asked for error data. Unique names are
// never reused on a bus, so an entry can go stale but never be wrong; it is
// pruned of connections that left the bus (one ListNames) whenever it has
// doubled since it was last pruned, so it stays the size of the live ones.
type dataPeers struct {
	conn    *dbus.Conn
	mu      sync.Mutex
	names   map[string]uint64 // unique name → when it was added
	added   uint64            // counts adds
	pruneAt int
}

const minPruneAt = 64

func (d *dataPeers) add(name string) {
	d.mu.Lock()
	if d.names == nil {
		d.names, d.pruneAt = map[string]uint64{}, minPruneAt
	}
	d.added++
	d.names[name] = d.added
	before, full := d.added, len(d.names) >= d.pruneAt
	d.mu.Unlock()
	if full {
		d.prune(before)
	}
}

// prune forgets the names added up to before (all of which were on the bus
// when ListNames was sent) that the bus no longer lists. A name added later
// may be missing from the answer only because it is newer, so it is kept.
func (d *dataPeers) prune(before uint64) {
	var live []string
	if err := d.conn.BusObject().Call("org.freedesktop.DBus.ListNames", 0).Store(&live); err != nil {
		return // kept: the next add tries again
	}
	on := make(map[string]bool, len(live))
	for _, n := range live {
		on[n] = true
	}
	d.mu.Lock()
	defer d.mu.Unlock()
	for n, at := range d.names {
		if at <= before && !on[n] {
			delete(d.names, n)
		}
	}
	d.pruneAt = max(minPruneAt, 2*len(d.names))
}

func (d *dataPeers) has(name string) bool {
	d.mu.Lock()
	defer d.mu.Unlock()
	_, ok := d.names[name]
	return ok
}

// replyError is err as the caller of msg receives it: with its data when
// the caller asked for error data.
func (s *Server) replyError(msg *dbus.Message, err error) *dbus.Error {
	if err == nil {
		return nil
	}
	sender, _ := msg.Headers[dbus.FieldSender].Value().(string)
	if !s.wantData.has(sender) {
		return dbusError(err)
	}
	member, _ := msg.Headers[dbus.FieldMember].Value().(string)
	return ErrorWithData(member, err)
}

// ErrorWithData is the error a connection that called
// org.antidrift.ErrorData1.Enable receives for err, a failed call of method:
// the message, then a{sv} of what the error says as data.
func ErrorWithData(method string, err error) *dbus.Error {
	e := dbusError(err)
	data := map[string]dbus.Variant{"method": dbus.MakeVariant(method)}
	var se *service.Error
	if errors.As(err, &se) {
		if r := se.Refusal; r != nil {
			addRefusal(data, r)
		}
		if f := se.Fault; f != nil {
			addFault(data, f)
		}
	}
	e.Body = append(e.Body, data)
	return e
}

func addRefusal(data map[string]dbus.Variant, r *service.Refusal) {
	set := func(k string, v any) { data[k] = dbus.MakeVariant(v) }
	set("method", string(r.Method))
	set("state", string(r.State))
	set("because", string(r.Because))
	set("permitted", asStrings(r.Permitted))
	if r.Level != "" {
		set("level", string(r.Level))
	}
	if r.WorksIn != nil {
		set("works_in", asStrings(r.WorksIn))
	}
	if r.Outcome != "" {
		set("outcome", string(r.Outcome))
	}
	if r.Because == service.BecauseHold {
		set("hold_left_secs", r.HoldLeft)
	}
}

func addFault(data map[string]dbus.Variant, f *service.Fault) {
	set := func(k string, v any) { data[k] = dbus.MakeVariant(v) }
	set("argument", f.Argument)
	set("rule", string(f.Rule))
	if f.Entry > 0 {
		set("entry", uint32(f.Entry))
	}
	if f.Got != nil {
		set("got", f.Got)
	}
	if f.Limit != 0 {
		set("limit", f.Limit)
	}
	if f.Total != 0 {
		set("total_secs", f.Total)
	}
	if f.Detail != "" {
		set("detail", f.Detail)
	}
	if f.Choices != nil {
		set("choices", f.Choices)
	}
}

func asStrings[T ~string](list []T) []string {
	out := make([]string, len(list))
	for i, x := range list {
		out[i] = string(x)
	}
	return out
}
