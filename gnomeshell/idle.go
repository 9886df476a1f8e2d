package gnomeshell

import (
	"context"
	"log/slog"
	"time"

	"github.com/godbus/dbus/v5"
)

const (
	idleMonitorName  = "org.gnome.Mutter.IdleMonitor"
	idleMonitorPath  = "/org/gnome/Mutter/IdleMonitor/Core"
	idleMonitorIface = "org.gnome.Mutter.IdleMonitor"
)

// IdleWatcher reports when the person has not touched keyboard or pointer
// for a while, from Mutter's own idle monitor. It costs nothing while
// nothing changes: Mutter fires the watches it adds (WatchFired, sent only
// to the connection that added the watch).
type IdleWatcher struct {
	conn  *dbus.Conn
	after time.Duration
	log   *slog.Logger
}

// NewIdleWatcher prepares a watcher calling idle after no input for after
// (0 or less: never), on conn.
func NewIdleWatcher(conn *dbus.Conn, after time.Duration, log *slog.Logger) *IdleWatcher {
	if log == nil {
		log = slog.New(slog.DiscardHandler)
	}
	return &IdleWatcher{conn: conn, after: after, log: log}
}

// idleWatches are the ids of the watches added on the current Mutter.
type idleWatches struct {
	idle   uint32 // fires after w.after without input; 0 when none was added
	active uint32 // fires on the next input (one-shot); 0 when none
}

// Run reports true when the person goes idle and false when they come
// back, until ctx is done; nothing while they are not idle. report is
// called from Run's goroutine only, never twice in a row with the same
// value. When Mutter leaves the bus, idleness goes with it (false is
// reported if true was) and the watches are added again when it returns.
func (w *IdleWatcher) Run(ctx context.Context, report func(idle bool)) {
	if w.after <= 0 {
		<-ctx.Done()
		return
	}
	f, err := follow(ctx, w.conn, w.log, idleMonitorName, []dbus.MatchOption{
		dbus.WithMatchObjectPath(idleMonitorPath), dbus.WithMatchInterface(idleMonitorIface), dbus.WithMatchMember("WatchFired"),
	})
	if err != nil {
		if ctx.Err() == nil {
			w.log.Warn("gnome-shell: idleness is not followed", "err", err)
			<-ctx.Done()
		}
		return
	}
	defer f.Close()
	idle := false
	set := func(v bool) {
		if v != idle {
			idle = v
			report(v)
		}
	}
	var ids idleWatches
	if f.owner.Unique != "" {
		ids = w.addIdle(ctx, f)
	}
	defer func() { w.remove(f, ids) }()
	for {
		select {
		case <-ctx.Done():
			return
		case sig, ok := <-f.Signals:
			if !ok {
				return
			}
			if news, changed := f.ownerChange(sig); news {
				if changed {
					ids = idleWatches{}
					set(false)
					if f.owner.Unique != "" {
						ids = w.addIdle(ctx, f)
					}
				}
				continue
			}
			var id uint32
			if !f.fromOwner(sig, idleMonitorPath, idleMonitorIface+".WatchFired") || dbus.Store(sig.Body, &id) != nil || id == 0 {
				continue
			}
			switch id {
			case ids.idle:
				if idle {
					continue
				}
				// Away only when their return can be seen, and only if they
				// did not come back while the watch was being added.
				active := w.add(ctx, f, "AddUserActiveWatch")
				if active == 0 {
					continue
				}
				if !w.idleNow(ctx, f) {
					w.removeWatch(f, active)
					continue
				}
				ids.active = active
				set(true)
			case ids.active:
				ids.active = 0 // user-active watches fire once
				set(false)
			}
		}
	}
}

// addIdle adds the idle watch on Mutter.
func (w *IdleWatcher) addIdle(ctx context.Context, f *follower) idleWatches {
	return idleWatches{idle: w.add(ctx, f, "AddIdleWatch", uint64(w.after.Milliseconds()))}
}

// add adds one watch and returns its id, 0 when it failed (logged).
func (w *IdleWatcher) add(ctx context.Context, f *follower, method string, args ...any) uint32 {
	var id uint32
	if err := f.call(ctx, idleMonitorPath, idleMonitorIface+"."+method, args...).Store(&id); err != nil {
		if ctx.Err() == nil {
			w.log.Warn("gnome-shell: adding an idle watch failed; idleness is not followed", "method", method, "err", err)
		}
		return 0
	}
	return id
}

// idleNow says whether there has been no input for w.after; true when
// Mutter does not say.
func (w *IdleWatcher) idleNow(ctx context.Context, f *follower) bool {
	var ms uint64
	if err := f.call(ctx, idleMonitorPath, idleMonitorIface+".GetIdletime").Store(&ms); err != nil {
		w.log.Debug("gnome-shell: GetIdletime failed", "err", err)
		return true
	}
	return ms >= uint64(w.after.Milliseconds())
}

// remove removes the watches Run added.
func (w *IdleWatcher) remove(f *follower, ids idleWatches) {
	w.removeWatch(f, ids.idle)
	w.removeWatch(f, ids.active)
}

// removeWatch removes watch id, if Mutter is still there (it drops a
// connection's watches itself when the connection goes).
func (w *IdleWatcher) removeWatch(f *follower, id uint32) {
	if id == 0 || f.owner.Unique == "" || !w.conn.Connected() {
		return
	}
	if err := f.call(context.Background(), idleMonitorPath, idleMonitorIface+".RemoveWatch", id).Err; err != nil {
		w.log.Debug("gnome-shell: removing an idle watch failed", "err", err)
	}
}
