package dbusapi

import (
	"sync"
	"time"

	"github.com/godbus/dbus/v5"

	"github.com/antidrift/antidrift/dbusapi/wire"
	"github.com/antidrift/antidrift/service"
)

// getAllReply is GetAll's reply body, encoded once and kept until the core
// announces a change — or, while a live number grows, until the view says
// it reads differently (service.View.ChangesIn). A panel that reads the
// properties on every change, and a status bar that reads them every
// second, then cost a map lookup and a write each.
type getAllReply struct {
	mu      sync.Mutex
	changes uint64        // bumped by every change the core announces
	body    []byte        // nil: encode again
	expires time.Duration // on the boot clock; 0: valid until the next change
}

// bootNow reads the clock ChangesIn is counted on, CLOCK_BOOTTIME. It runs
// on while the machine sleeps, so a reply kept across a suspend has
// expired when the machine wakes, as the live seconds it carries have.
func bootNow() time.Duration { return service.SystemClock{}.Boot() }

// invalidate forgets the reply. Server.Changed calls it before telling
// clients, so a client that reads after a PropertiesChanged, or after the
// reply to the method that made the change, reads the change.
func (r *getAllReply) invalidate() {
	r.mu.Lock()
	r.changes++
	r.body = nil
	r.mu.Unlock()
}

// get returns the encoded reply, encoding it from view when it is stale,
// or nil when view cannot be had at once. A reply encoded while a change
// came in is returned but not kept.
func (r *getAllReply) get(view func() (service.View, bool)) (body []byte, err error) {
	r.mu.Lock()
	if r.body != nil && (r.expires == 0 || bootNow() < r.expires) {
		body = r.body
		r.mu.Unlock()
		return body, nil
	}
	changes := r.changes
	r.mu.Unlock()

	read := bootNow()
	v, ok := view()
	if !ok {
		return nil, nil
	}
	if _, body, err = wire.Body(properties(v)); err != nil {
		return nil, err
	}
	r.mu.Lock()
	if r.changes == changes {
		r.body, r.expires = body, 0
		if v.ChangesIn > 0 {
			r.expires = read + v.ChangesIn
		}
	}
	r.mu.Unlock()
	return body, nil
}

// answerGetAll answers Properties.GetAll on Session1 where the tap reads
// it, for a caller already known to run as our user; anything else —
// another method, a stranger whose user must first be asked of the bus, a
// wrong argument that deserves godbus's error, a core busy saving — goes
// to godbus.
func (s *Server) answerGetAll(call wire.Header, msg []byte) (string, []byte, bool) {
	if call.Path != string(ObjectPath) || call.Interface != propertiesInterface || call.Member != "GetAll" || call.Signature != "s" {
		return "", nil, false
	}
	if iface, err := wire.FirstString(msg, call); err != nil || checkInterface(iface) != nil {
		return "", nil, false
	}
	if !s.peers.admitted(dbus.Sender(call.Sender)) {
		return "", nil, false
	}
	// TryView: a change being made durable holds the core's lock, and this
	// goroutine reads everything the daemon receives; godbus's own
	// goroutine waits for it instead.
	body, err := s.getAll.get(s.svc.TryView)
	if err != nil {
		s.log.Warn("encoding the GetAll reply failed; godbus answers instead", "err", err)
	}
	if body == nil {
		return "", nil, false
	}
	s.fastAnswers.Add(1)
	return "a{sv}", body, true
}
