package wayland

import (
	"context"
	"fmt"
	"log/slog"
	"time"

	"github.com/antidrift/antidrift/internal/redial"

	"github.com/antidrift/antidrift/wayland/wire"
)

// First client-allocated ids: wl_display is 1, and connect makes the
// registry and the callback of its first sync.
const (
	registryID      = 2
	firstCallbackID = 3
)

// global is one interface the compositor offers, from wl_registry.global.
type global struct {
	name    uint32
	iface   string
	version uint32
}

// session is one connection to a compositor, past the handshake: it knows
// the globals offered at connect time and hands out object ids. Its owner
// reads events from conn in one goroutine; requests may be sent from any.
type session struct {
	conn    *wire.Conn
	path    string
	nextID  uint32 // next client object id; touched by the owner goroutine only
	globals []global
}

// connect dials the compositor at path and reads its globals: get_registry,
// then a sync whose callback marks the end of the initial globals. It is
// bounded by ctx (the connection is closed when ctx ends first).
func connect(ctx context.Context, path string) (*session, error) {
	conn, err := wire.Dial(ctx, path)
	if err != nil {
		return nil, err
	}
	stop := context.AfterFunc(ctx, func() { conn.Close() })
	defer stop()
	s := &session{conn: conn, path: path, nextID: firstCallbackID + 1}
	if err := s.handshake(ctx); err != nil {
		conn.Close()
		if ctx.Err() != nil {
			return nil, ctx.Err()
		}
		return nil, err
	}
	return s, nil
}

func (s *session) handshake(ctx context.Context) error {
	getRegistry, _ := wire.NewMessage(displayID, displayGetRegistry).NewID(registryID).Bytes()
	sync, _ := wire.NewMessage(displayID, displaySync).NewID(firstCallbackID).Bytes()
	if err := s.conn.Send(ctx, getRegistry, sync); err != nil {
		return err
	}
	for {
		m, err := s.next()
		if err != nil {
			return err
		}
		switch {
		case m.Object == registryID && m.Opcode == registryGlobal:
			a := m.Args()
			g := global{name: a.Uint(), iface: a.String(), version: a.Uint()}
			if err := a.Err(); err != nil {
				return err
			}
			if len(s.globals) >= maxGlobals {
				return fmt.Errorf("%w: more than %d globals", wire.ErrMalformed, maxGlobals)
			}
			s.globals = append(s.globals, g)
		case m.Object == firstCallbackID && m.Opcode == callbackDone:
			return nil
		}
	}
}

// maxGlobals bounds what a compositor can make a client hold; real ones
// offer under a hundred.
const maxGlobals = 1024

// next reads the next event. A protocol error the compositor reports on
// wl_display ends the session, as an error; its other events (delete_id)
// are returned like any, for the caller to ignore: a reader that acts once
// it has caught up must see every message it reads.
func (s *session) next() (wire.Message, error) {
	m, err := s.conn.ReadMessage()
	if err == nil && m.Object == displayID {
		err = displayEvent(m)
	}
	return m, err
}

// lacking waits for the connection to end on a compositor that lacks what
// is needed (why), ignoring its events: a compositor that replaces it on the
// socket may have it.
func (s *session) lacking(why error) error {
	for {
		if _, err := s.next(); err != nil {
			return fmt.Errorf("%w (then: %v)", why, err)
		}
	}
}

// displayEvent handles an event on wl_display: a fatal protocol error is
// returned as an error; delete_id needs nothing, since ids are never reused.
func displayEvent(m wire.Message) error {
	if m.Opcode != displayError {
		return nil
	}
	a := m.Args()
	object, code, msg := a.Object(), a.Uint(), a.String()
	if err := a.Err(); err != nil {
		return err
	}
	return fmt.Errorf("the compositor reported a protocol error on object %d (code %d): %s", object, code, msg)
}

// newRedialer keeps sessions with the compositor at path going, for what
// ("focus tracking"), as redial.Redialer does for every display server.
func newRedialer(path string, log *slog.Logger, what string, slow time.Duration) *redial.Redialer[*session] {
	return &redial.Redialer[*session]{
		Dial:     func(ctx context.Context) (*session, error) { return connect(ctx, path) },
		Close:    (*session).close,
		Log:      log,
		Prefix:   "wayland",
		Peer:     "the compositor",
		Attrs:    []any{"socket", path},
		What:     what,
		SlowDial: slow,
	}
}

// find is the first global offering iface.
func (s *session) find(iface string) (global, bool) {
	for _, g := range s.globals {
		if g.iface == iface {
			return g, true
		}
	}
	return global{}, false
}

// newID allocates a client object id. Ids are never reused: a session would
// need billions of objects to run out.
func (s *session) newID() uint32 {
	id := s.nextID
	s.nextID++
	return id
}

// bind binds global g at the lower of its version and max, returning the new
// object's id and the version bound.
func (s *session) bind(ctx context.Context, g global, max uint32) (id, version uint32, err error) {
	version = min(g.version, max)
	id = s.newID()
	msg, err := wire.NewMessage(registryID, registryBind).Uint(g.name).String(g.iface).Uint(version).NewID(id).Bytes()
	if err != nil {
		return 0, 0, err
	}
	return id, version, s.conn.Send(ctx, msg)
}

// send frames and sends one request.
func (s *session) send(ctx context.Context, b *wire.Builder) error {
	msg, err := b.Bytes()
	if err != nil {
		return err
	}
	return s.conn.Send(ctx, msg)
}

func (s *session) close() { s.conn.Close() }
