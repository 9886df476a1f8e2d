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

// The daemon's error names: ErrorPrefix and a service.ErrorKind, or
// AccessDenied (a caller of another user).
const (
	ErrorPrefix          = "org.antidrift.Error."
	ErrorNotPermitted    = ErrorPrefix + "NotPermitted"
	ErrorInvalidArgument = ErrorPrefix + "InvalidArgument"
	ErrorStorage         = ErrorPrefix + "Storage"
	ErrorAccessDenied    = ErrorPrefix + "AccessDenied"
)

// The keys of an error's data (docs/dbus-api.md lists them). This file
// writes them (ErrorWithData) and reads them back (RefusalOf, FaultOf):
// the CLI reads a refusal only through these.
const (
	KeyMethod    = "method"         // s: the method refused
	KeyState     = "state"          // s: the session's state
	KeyBecause   = "because"        // s: the condition that refused (service.Because)
	KeyPermitted = "permitted"      // as: what works now
	KeyLevel     = "level"          // s: the session's enforcement level
	KeyWorksIn   = "works_in"       // as: the states the method works in
	KeyOutcome   = "outcome"        // s: the reviewed session's outcome
	KeyHoldLeft  = "hold_left_secs" // t: seconds left of the break-glass hold
	KeyArgument  = "argument"       // s: the argument at fault
	KeyRule      = "rule"           // s: the rule it broke (service.ArgRule)
	KeyEntry     = "entry"          // u: which entry of a list, from 1
	KeyGot       = "got"            // t, x or s: what the argument was
	KeyLimit     = "limit"          // x: the rule's bound
	KeyTotal     = "total_secs"     // t: the timebox the call would make
	KeyDetail    = "detail"         // s: the rest of the reason
	KeyChoices   = "choices"        // as: the values the argument may take
)

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
	data := map[string]dbus.Variant{KeyMethod: dbus.MakeVariant(method)}
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
	set(KeyMethod, string(r.Method))
	set(KeyState, string(r.State))
	set(KeyBecause, string(r.Because))
	set(KeyPermitted, asStrings(r.Permitted))
	if r.Level != "" {
		set(KeyLevel, string(r.Level))
	}
	if r.WorksIn != nil {
		set(KeyWorksIn, asStrings(r.WorksIn))
	}
	if r.Outcome != "" {
		set(KeyOutcome, string(r.Outcome))
	}
	if r.Because == service.BecauseHold {
		set(KeyHoldLeft, r.HoldLeft)
	}
}

func addFault(data map[string]dbus.Variant, f *service.Fault) {
	set := func(k string, v any) { data[k] = dbus.MakeVariant(v) }
	set(KeyArgument, f.Argument)
	set(KeyRule, string(f.Rule))
	if f.Entry > 0 {
		set(KeyEntry, uint32(f.Entry))
	}
	if f.Got != nil {
		set(KeyGot, f.Got)
	}
	if f.Limit != 0 {
		set(KeyLimit, f.Limit)
	}
	if f.Total != 0 {
		set(KeyTotal, f.Total)
	}
	if f.Detail != "" {
		set(KeyDetail, f.Detail)
	}
	if f.Choices != nil {
		set(KeyChoices, f.Choices)
	}
}

// RefusalOf reads back what a NotPermitted from a connection that asked for
// error data says as data; false when e carries none, or names a condition
// this build does not word (another version of the daemon).
func RefusalOf(e dbus.Error) (*service.Refusal, bool) {
	d := dataOf(e)
	r := &service.Refusal{
		Method:   service.Method(d.str(KeyMethod)),
		State:    service.State(d.str(KeyState)),
		Level:    service.Level(d.str(KeyLevel)),
		Because:  service.Because(d.str(KeyBecause)),
		Outcome:  service.Outcome(d.str(KeyOutcome)),
		HoldLeft: d.num(KeyHoldLeft),
	}
	for _, st := range d.strs(KeyWorksIn) {
		r.WorksIn = append(r.WorksIn, service.State(st))
	}
	for _, m := range d.strs(KeyPermitted) {
		r.Permitted = append(r.Permitted, service.Method(m))
	}
	return r, e.Name == ErrorNotPermitted && r.Because.Known()
}

// FaultOf reads back what an InvalidArgument from a connection that asked
// for error data says as data; false when e carries none, or names a rule
// this build does not word.
func FaultOf(e dbus.Error) (*service.Fault, bool) {
	d := dataOf(e)
	f := &service.Fault{
		Argument: d.str(KeyArgument),
		Entry:    int(d.num(KeyEntry)),
		Rule:     service.ArgRule(d.str(KeyRule)),
		Limit:    int64(d.num(KeyLimit)),
		Total:    d.num(KeyTotal),
		Detail:   d.str(KeyDetail),
		Choices:  d.strs(KeyChoices),
	}
	if v, ok := d[KeyGot]; ok {
		f.Got = v.Value()
		if n, ok := f.Got.(uint32); ok {
			f.Got = uint64(n)
		}
	}
	return f, e.Name == ErrorInvalidArgument && f.Rule.Known()
}

// errorData is an error's data: the a{sv} after its message, empty from a
// daemon that sent none.
type errorData map[string]dbus.Variant

func dataOf(e dbus.Error) errorData {
	if len(e.Body) > 1 {
		if m, ok := e.Body[1].(map[string]dbus.Variant); ok {
			return m
		}
	}
	return nil
}

func (d errorData) str(key string) string {
	s, _ := d[key].Value().(string)
	return s
}

func (d errorData) strs(key string) []string {
	s, _ := d[key].Value().([]string)
	return s
}

// num is a number of the data as the daemon typed it (t, u or x).
func (d errorData) num(key string) uint64 {
	switch v := d[key].Value().(type) {
	case uint64:
		return v
	case uint32:
		return uint64(v)
	case int64:
		return uint64(v)
	}
	return 0
}

func asStrings[T ~string](list []T) []string {
	out := make([]string, len(list))
	for i, x := range list {
		out[i] = string(x)
	}
	return out
}
