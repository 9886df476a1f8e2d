package dbusapi

import (
	"encoding/xml"
	"errors"
	"fmt"
	"log/slog"
	"os"
	"strings"
	"sync"

	"github.com/godbus/dbus/v5"
	"github.com/godbus/dbus/v5/introspect"

	"github.com/antidrift/antidrift/dist"
	"github.com/antidrift/antidrift/service"
)

// The names the daemon owns and serves.
const (
	BusName    = "org.antidrift"
	ObjectPath = dbus.ObjectPath("/org/antidrift/Session1")
	Interface  = "org.antidrift.Session1"

	propertiesInterface = "org.freedesktop.DBus.Properties"
)

// ErrNameTaken says another process owns org.antidrift on this bus.
var ErrNameTaken = errors.New("another antidriftd already owns " + BusName + " on this session bus")

// Server is the core exported on one bus connection.
type Server struct {
	conn       *dbus.Conn
	svc        *service.Service
	log        *slog.Logger
	peers      peers
	signatures map[string]string   // "interface.Member" → the in-signature it takes
	interfaces map[string][]string // "Member" → the interfaces that have it
	evidence   evidenceGate
	tabHosts   tabHosts
	wantData   dataPeers // connections that asked for error data (ErrorData1)

	emitMu  sync.Mutex
	emitted map[string]dbus.Variant // what clients were last told
	props   propertyCache
}

// Serve exports the core on conn and then requests the bus name (in that
// order, so the first caller activated by the name finds the object). It
// registers the server as the core's listener. conn should come from
// busconn.Connect, which no message can desynchronize.
func Serve(conn *dbus.Conn, svc *service.Service, log *slog.Logger) (*Server, error) {
	s := &Server{conn: conn, svc: svc, log: log, peers: peers{conn: conn, uid: uint32(os.Getuid())}, evidence: evidenceGate{conn: conn}, tabHosts: tabHosts{conn: conn, svc: svc}, wantData: dataPeers{conn: conn}}
	s.emitted = properties(svc.View())
	node, err := introspection()
	if err != nil {
		return nil, err
	}
	s.signatures, s.interfaces = inSignatures(node)
	exports := []struct {
		v     any
		iface string
	}{
		{&methods{s}, Interface},
		{&evidenceObject{s}, EvidenceInterface},
		{&errorDataObject{s}, ErrorDataInterface},
		{&propertiesObject{s}, propertiesInterface},
		{introspect.NewIntrospectable(node), "org.freedesktop.DBus.Introspectable"},
	}
	for _, e := range exports {
		if err := conn.Export(e.v, ObjectPath, e.iface); err != nil {
			return nil, fmt.Errorf("exporting %s: %w", e.iface, err)
		}
	}
	svc.AddListener(s)
	reply, err := conn.RequestName(BusName, dbus.NameFlagDoNotQueue)
	if err != nil {
		return nil, fmt.Errorf("requesting %s: %w", BusName, err)
	}
	if reply != dbus.RequestNameReplyPrimaryOwner {
		return nil, ErrNameTaken
	}
	return s, nil
}

// introspection is the interface XML plus the standard interfaces.
func introspection() (*introspect.Node, error) {
	var node introspect.Node
	if err := xml.Unmarshal([]byte(dist.InterfaceXML), &node); err != nil {
		return nil, fmt.Errorf("parsing the interface XML: %w", err)
	}
	node.Name = string(ObjectPath)
	node.Interfaces = append(node.Interfaces, introspect.IntrospectData, propertiesIntrospection)
	return &node, nil
}

var propertiesIntrospection = introspect.Interface{
	Name: propertiesInterface,
	Methods: []introspect.Method{
		{Name: "Get", Args: []introspect.Arg{{Name: "interface_name", Type: "s", Direction: "in"}, {Name: "property_name", Type: "s", Direction: "in"}, {Name: "value", Type: "v", Direction: "out"}}},
		{Name: "GetAll", Args: []introspect.Arg{{Name: "interface_name", Type: "s", Direction: "in"}, {Name: "props", Type: "a{sv}", Direction: "out"}}},
		{Name: "Set", Args: []introspect.Arg{{Name: "interface_name", Type: "s", Direction: "in"}, {Name: "property_name", Type: "s", Direction: "in"}, {Name: "value", Type: "v", Direction: "in"}}},
	},
	Signals: []introspect.Signal{
		{Name: "PropertiesChanged", Args: []introspect.Arg{{Name: "interface_name", Type: "s"}, {Name: "changed_properties", Type: "a{sv}"}, {Name: "invalidated_properties", Type: "as"}}},
	},
}

// inSignatures maps every method the object serves to the arguments it
// takes, and every member name to the interfaces that have it, from the
// same introspection data clients see.
func inSignatures(node *introspect.Node) (sigs map[string]string, interfaces map[string][]string) {
	sigs, interfaces = map[string]string{}, map[string][]string{}
	for _, iface := range node.Interfaces {
		for _, m := range iface.Methods {
			interfaces[m.Name] = append(interfaces[m.Name], iface.Name)
			var in strings.Builder
			for _, a := range m.Args {
				if a.Direction == "in" {
					in.WriteString(a.Type)
				}
			}
			sigs[iface.Name+"."+m.Name] = in.String()
		}
	}
	return sigs, interfaces
}

// gate is the door every call goes through before the core sees it: the
// caller must run as the daemon's own user, and the arguments must have
// exactly the types its interface and member declare. (godbus alone would
// convert what it can: a uint32 where a string belongs would arrive as a
// one-character string.) A call without an interface header is checked
// against the one interface that has its member, and refused when two do:
// which one it meant cannot be known.
func (s *Server) gate(msg *dbus.Message) *dbus.Error {
	sender, _ := msg.Headers[dbus.FieldSender].Value().(string)
	if err := s.peers.check(dbus.Sender(sender)); err != nil {
		return err
	}
	iface, _ := msg.Headers[dbus.FieldInterface].Value().(string)
	member, _ := msg.Headers[dbus.FieldMember].Value().(string)
	if iface == "" {
		switch have := s.interfaces[member]; len(have) {
		case 1:
			iface = have[0]
		case 0:
		default:
			return dbus.NewError("org.freedesktop.DBus.Error.UnknownMethod", []any{fmt.Sprintf(
				"%s is a method of %s: a call to it must name its interface", member, strings.Join(have, " and "))})
		}
	}
	want, ok := s.signatures[iface+"."+member]
	if !ok {
		return dbus.NewError("org.freedesktop.DBus.Error.UnknownMethod", []any{fmt.Sprintf("this object has no method %s on interface %q", member, iface)})
	}
	var got string
	if sig, ok := msg.Headers[dbus.FieldSignature].Value().(dbus.Signature); ok {
		got = sig.String()
	}
	if got != want {
		return dbus.NewError("org.freedesktop.DBus.Error.InvalidArgs", []any{fmt.Sprintf("%s.%s takes arguments of type (%s), not (%s)", iface, member, want, got)})
	}
	return nil
}

// Changed emits one PropertiesChanged carrying every property that differs
// from what clients were last told. emitMu makes read-diff-emit atomic, so
// concurrent changes can coalesce but never reorder.
func (s *Server) Changed() {
	s.props.invalidate()
	s.emitMu.Lock()
	defer s.emitMu.Unlock()
	now := properties(s.svc.View())
	diff := changed(s.emitted, now)
	s.emitted = now
	if len(diff) == 0 {
		return
	}
	if err := s.conn.Emit(ObjectPath, propertiesInterface+".PropertiesChanged", Interface, diff, []string{}); err != nil {
		s.log.Warn("emitting PropertiesChanged failed", "err", err)
	}
}

// SessionEnded emits the SessionEnded signal.
func (s *Server) SessionEnded(id string, outcome service.Outcome, hash string) {
	s.emit("SessionEnded", id, string(outcome), hash)
}

// Nudged emits the Nudge signal.
func (s *Server) Nudged(class, reason string) {
	s.emit("Nudge", class, reason)
}

func (s *Server) emit(signal string, args ...any) {
	if err := s.conn.Emit(ObjectPath, Interface+"."+signal, args...); err != nil {
		s.log.Warn("emitting a signal failed", "signal", signal, "err", err)
	}
}

// dbusError turns a core error into a named D-Bus error.
func dbusError(err error) *dbus.Error {
	if err == nil {
		return nil
	}
	var e *service.Error
	if errors.As(err, &e) {
		return dbus.NewError(ErrorPrefix+e.Kind.String(), []any{e.Msg})
	}
	return dbus.NewError(ErrorStorage, []any{err.Error()})
}

// peers answers whether a caller runs as the daemon's own user. The answer
// is cached per unique name: unique names are never reused on a bus, so a
// cached answer cannot go stale, and the cache is cleared when it grows
// large so it cannot grow without bound either.
type peers struct {
	conn *dbus.Conn
	uid  uint32
	mu   sync.Mutex
	uids map[dbus.Sender]uint32
}

const maxCachedPeers = 1024

func (p *peers) ownUID() uint32 {
	p.mu.Lock()
	defer p.mu.Unlock()
	return p.uid
}

func (p *peers) check(sender dbus.Sender) *dbus.Error {
	p.mu.Lock()
	uid, ok := p.uids[sender]
	p.mu.Unlock()
	if !ok {
		if err := p.conn.BusObject().Call("org.freedesktop.DBus.GetConnectionUnixUser", 0, string(sender)).Store(&uid); err != nil {
			return dbus.NewError(ErrorAccessDenied, []any{fmt.Sprintf("antidrift could not tell which user %s runs as (%v), and serves only its own user", sender, err)})
		}
		p.mu.Lock()
		if p.uids == nil || len(p.uids) >= maxCachedPeers {
			p.uids = make(map[dbus.Sender]uint32)
		}
		p.uids[sender] = uid
		p.mu.Unlock()
	}
	if own := p.ownUID(); uid != own {
		return dbus.NewError(ErrorAccessDenied, []any{fmt.Sprintf("antidrift serves only the user it runs as (uid %d); this caller runs as uid %d", own, uid)})
	}
	return nil
}
