// Package dnd is Do Not Disturb while a quiet session is active: it keeps
// other apps' notifications from popping up, the way the running
// notification server is silenced — GNOME Shell's show-banners, dunst's
// paused, xfce4-notifyd's do-not-disturb, Plasma's Inhibit — and puts the
// person's setting back afterwards. It implements service.Quieter; the
// core decides when.
//
// What it changed is written to the state directory (RecordFile) before it
// changes it and removed once it is back, so a daemon killed mid-session
// leaves the record, and the next start puts the setting back (or keeps it
// silenced, when the session it recovers is still quiet). Plasma needs no
// record: it drops an inhibition when its caller leaves the bus. A server
// that restarts mid-session is silenced again: the owner of
// org.freedesktop.Notifications is followed (internal/busname), no polling.
package dnd

import (
	"context"
	"fmt"
	"log/slog"
	"sync"
	"time"

	"github.com/godbus/dbus/v5"

	"github.com/antidrift/antidrift/internal/busname"
	"github.com/antidrift/antidrift/internal/latest"
	"github.com/antidrift/antidrift/service"
)

// callTimeout bounds one step (a bus call, a gsettings run).
const callTimeout = 5 * time.Second

// Options configure a Manager.
type Options struct {
	Conn *dbus.Conn // the session bus
	Log  *slog.Logger
	// Dir is the state directory, where RecordFile is kept.
	Dir string
	// Note receives the sentence for the person about the quiet session
	// ("" when there is nothing to say): the core's SetQuietNote.
	Note func(string)
	// Problem receives a sentence for Problems ("" clears it): a record
	// that could not be read or written.
	Problem func(string)
	// Gsettings is the gsettings command; "" means "gsettings" on PATH.
	Gsettings string
}

// Manager silences the notification server while the core wants it.
type Manager struct {
	o      Options
	wants  *latest.Mailbox[bool]
	follow *busname.Follower
	owner  *busname.Owner
	done   chan struct{}
	loop   sync.WaitGroup
	closed sync.Once

	// Owned by the loop goroutine.
	want   bool
	rec    *record // what antidrift changed and must put back; nil when nothing
	loaded string  // a problem with the record found at start, said at the first decision
	cookie uint32  // Plasma's inhibition, 0 when none
	held   string  // the unique name the cookie is from
}

var _ service.Quieter = (*Manager)(nil)

// New reads a record a previous run left (it is put back, or kept, at the
// core's first decision), follows the notification server's name and
// starts the worker. It returns an error only when the bus refuses the
// match rule.
func New(o Options) (*Manager, error) {
	if o.Log == nil {
		o.Log = slog.New(slog.DiscardHandler)
	}
	if o.Note == nil {
		o.Note = func(string) {}
	}
	if o.Problem == nil {
		o.Problem = func(string) {}
	}
	if o.Gsettings == "" {
		o.Gsettings = "gsettings"
	}
	m := &Manager{o: o, wants: latest.New[bool](), done: make(chan struct{})}
	rec, problem := loadRecord(o.Dir)
	if problem != "" {
		o.Log.Warn(problem)
	}
	m.rec, m.loaded = rec, problem
	m.follow = busname.New(o.Conn, o.Log)
	ctx, cancel := context.WithTimeout(context.Background(), callTimeout)
	defer cancel()
	owner, err := m.follow.Follow(ctx, notificationsName)
	if err != nil {
		m.follow.Close()
		return nil, err
	}
	m.owner = owner
	m.loop.Add(1)
	go m.run()
	return m, nil
}

// Quiet is the core's decision; it never blocks.
func (m *Manager) Quiet(on bool) { m.wants.Post(on) }

// Close puts the setting back, as the daemon stops (a quiet session that
// is still active is silenced again by the next start), and stops the
// worker. A second Close does nothing.
func (m *Manager) Close() {
	m.closed.Do(func() {
		close(m.done)
		m.loop.Wait()
		m.want = false
		m.apply()
		m.follow.Close()
	})
}

func (m *Manager) run() {
	defer m.loop.Done()
	for {
		select {
		case <-m.done:
			return
		case want := <-m.wants.C():
			if m.loaded != "" {
				// Said now: the core, which shows Problems, is there.
				m.o.Problem(m.loaded)
				m.loaded = ""
			}
			m.want = want
			m.apply()
		case sig, ok := <-m.follow.Signals:
			if !ok {
				return
			}
			if o, _ := m.follow.OwnerChange(sig); o != nil {
				m.serverChanged(o.Unique)
			}
		}
	}
}

// serverChanged: a notification server came or went. A new one is
// silenced again while the core wants quiet (a restarted dunst starts
// unpaused; a restarted Plasma forgot its inhibitions).
func (m *Manager) serverChanged(unique string) {
	if m.held != "" && m.held != unique {
		m.cookie, m.held = 0, "" // that server is gone, its inhibition with it
	}
	if unique != "" && m.want {
		m.o.Log.Info("the notification server changed during a quiet session: silencing it again", "owner", unique)
		m.apply()
	}
}

// apply makes the server match m.want.
func (m *Manager) apply() {
	ctx, cancel := context.WithTimeout(context.Background(), 3*callTimeout)
	defer cancel()
	if m.want {
		m.silence(ctx)
	} else {
		m.restore(ctx)
	}
}

func (m *Manager) silence(ctx context.Context) {
	name, vendor, err := serverInfo(ctx, m.o.Conn)
	if err != nil {
		m.o.Log.Warn("no notification server answered: nothing to silence", "err", err)
		m.o.Note("No notification server answered, so there was none to silence; one that starts during the session is silenced then.")
		return
	}
	kind := kindOf(name, vendor)
	if m.rec != nil && m.rec.Kind != kind {
		m.restore(ctx) // another server runs now: put the old one's setting back first
	}
	switch kind {
	case kindPlasma:
		m.inhibit(ctx)
		return
	case kindUnknown:
		m.o.Log.Warn("this notification server cannot be silenced", "server", name, "vendor", vendor)
		m.o.Note(fmt.Sprintf("antidrift cannot silence this notification server (%s): other apps' notifications will still pop up during the quiet session.", service.Quote(name)))
		return
	}
	s := settingOf(m.o.Conn, m.o.Gsettings, kind)
	if mk, ok := s.(makoDND); ok && m.rec == nil {
		if defined, path := mk.defined(); !defined {
			where := "no mako config was found"
			if path != "" {
				where = path + " defines none"
			}
			m.o.Log.Warn("mako has no do-not-disturb mode to turn on", "config", path)
			m.o.Note(fmt.Sprintf("antidrift cannot silence mako: it turns on mako's do-not-disturb mode, which your config defines ([mode=do-not-disturb] with invisible=1), and %s; other apps' notifications will still pop up.", where))
			return
		}
	}
	if m.rec == nil {
		cur, err := s.get(ctx)
		if err != nil {
			m.fail("reading", kind, err)
			return
		}
		already := cur == s.quiet()
		if q, ok := s.(quietValues); ok {
			already = q.isQuiet(cur)
		}
		if already {
			m.o.Log.Info("notifications were already silenced by the person: left as they are", "server", kind)
			m.o.Note(s.already())
			return
		}
		rec := record{Kind: kind, Previous: cur}
		if err := saveRecord(m.o.Dir, rec); err != nil {
			// Nothing is changed that could not be put back.
			m.o.Log.Error("could not record the notification setting; leaving it as it is", "err", err)
			m.o.Problem(fmt.Sprintf("Do Not Disturb was not turned on: %s could not be written (%v), and antidrift changes no setting it could not put back.", RecordFile, err))
			return
		}
		m.o.Problem("")
		m.rec = &rec
	}
	if err := s.set(ctx, s.quiet()); err != nil {
		m.fail("silencing", kind, err)
		return
	}
	m.o.Log.Info("other apps' notifications silenced for the quiet session", "server", kind)
	note := ""
	if n, ok := s.(quietNoter); ok {
		note = n.quietNote(ctx)
	}
	m.o.Note(note)
}

func (m *Manager) fail(doing, kind string, err error) {
	m.o.Log.Warn(doing+" the notification server failed", "server", kind, "err", err)
	m.o.Note(fmt.Sprintf("antidrift could not silence %s (%v): other apps' notifications may still pop up.", kind, err))
}

func (m *Manager) inhibit(ctx context.Context) {
	if m.cookie != 0 && m.held == m.owner.Unique {
		return
	}
	cookie, err := inhibit(ctx, m.o.Conn)
	if err != nil {
		m.fail("inhibiting", kindPlasma, err)
		return
	}
	m.cookie, m.held = cookie, m.owner.Unique
	m.o.Log.Info("other apps' notifications silenced for the quiet session", "server", kindPlasma)
	m.o.Note("")
}

func (m *Manager) restore(ctx context.Context) {
	m.o.Note("")
	if m.cookie != 0 {
		if err := uninhibit(ctx, m.o.Conn, m.cookie); err != nil {
			m.o.Log.Debug("releasing the inhibition failed (the server may be gone)", "err", err)
		}
		m.cookie, m.held = 0, ""
	}
	if m.rec == nil {
		return
	}
	s := settingOf(m.o.Conn, m.o.Gsettings, m.rec.Kind)
	if s == nil {
		m.o.Log.Warn("a notification setting of an unknown kind was recorded; dropping it", "kind", m.rec.Kind)
	} else if err := s.set(ctx, m.rec.Previous); err != nil {
		// Kept: the next decision, or the next start, tries again.
		m.o.Log.Warn("putting the notification setting back failed; it is kept in "+RecordFile+" and tried again", "server", m.rec.Kind, "err", err)
		m.o.Problem(fmt.Sprintf("antidrift could not put %s's notification setting back (%v); it tries again at the next change and the next start.", m.rec.Kind, err))
		return
	} else {
		m.o.Log.Info("notification setting put back", "server", m.rec.Kind, "value", m.rec.Previous)
	}
	if err := removeRecord(m.o.Dir); err != nil {
		m.o.Log.Warn("could not remove "+RecordFile, "err", err)
	}
	m.o.Problem("")
	m.rec = nil
}
