package busname

import (
	"context"
	"log/slog"
	"sync"

	"github.com/godbus/dbus/v5"
)

// Leaving follows unique connections (":1.42") until they leave the bus,
// and says so once for each: what is kept for a connection (a browser
// host's tab claims) ends with it. As with a well-known name, only the
// bus's own NameOwnerChanged counts; a unique name, once gone, never comes
// back, so the news needs no ordering. It is safe for concurrent use.
type Leaving struct {
	conn    *dbus.Conn
	log     *slog.Logger
	gone    func(unique string)
	signals chan *dbus.Signal
	stop    chan struct{}
	done    chan struct{}

	mu      sync.Mutex
	watched map[string]bool
}

// NewLeaving starts following departures on conn; gone is called (from a
// goroutine of Leaving's own, one at a time) for each watched connection
// that leaves. Close ends it.
func NewLeaving(conn *dbus.Conn, log *slog.Logger, gone func(unique string)) *Leaving {
	if log == nil {
		log = slog.New(slog.DiscardHandler)
	}
	l := &Leaving{conn: conn, log: log, gone: gone, signals: make(chan *dbus.Signal, signalBuffer),
		stop: make(chan struct{}), done: make(chan struct{}), watched: map[string]bool{}}
	conn.Signal(l.signals)
	go l.run()
	return l
}

// Watch follows unique until it leaves the bus. It says whether unique was
// still on the bus once the bus had been asked to tell of its leaving;
// when it was not, gone is not called for it (it may have been already).
func (l *Leaving) Watch(ctx context.Context, unique string) (alive bool, err error) {
	l.mu.Lock()
	if l.watched[unique] {
		l.mu.Unlock()
		return true, nil
	}
	l.watched[unique] = true
	l.mu.Unlock()
	ctx, cancel := context.WithTimeout(ctx, CallTimeout)
	defer cancel()
	if err := l.conn.AddMatchSignalContext(ctx, OwnerChangedMatch(unique)...); err != nil {
		l.forget(unique)
		return false, err
	}
	owner, _, err := Ask(ctx, l.conn, unique)
	if err != nil || owner == "" {
		l.forget(unique)
		return false, err
	}
	return true, nil
}

// forget stops watching unique, and says whether it was watched.
func (l *Leaving) forget(unique string) bool {
	l.mu.Lock()
	was := l.watched[unique]
	delete(l.watched, unique)
	l.mu.Unlock()
	if was && l.conn.Connected() {
		ctx, cancel := context.WithTimeout(context.Background(), CallTimeout)
		defer cancel()
		if err := l.conn.RemoveMatchSignalContext(ctx, OwnerChangedMatch(unique)...); err != nil {
			l.log.Debug("could not remove a match rule", "err", err)
		}
	}
	return was
}

func (l *Leaving) run() {
	defer close(l.done)
	for {
		var sig *dbus.Signal
		select {
		case sig = <-l.signals:
		case <-l.stop:
			return
		}
		if sig == nil {
			return // the connection closed
		}
		name, _, unique, ok := ownerNews(sig, l.log)
		if !ok || unique != "" {
			continue
		}
		if l.forget(name) {
			l.gone(name)
		}
	}
}

// Close stops following: gone is not called again.
func (l *Leaving) Close() {
	l.conn.RemoveSignal(l.signals)
	close(l.stop)
	<-l.done
	l.mu.Lock()
	names := make([]string, 0, len(l.watched))
	for n := range l.watched {
		names = append(names, n)
	}
	l.mu.Unlock()
	for _, n := range names {
		l.forget(n)
	}
}

// ownerNews reads sig as the bus's NameOwnerChanged: the name, its old and
// its new owner. ok is false for any other signal, and for one that claims
// to be it but was not sent by the bus (logged: any peer can send a signal
// of that name straight to us).
func ownerNews(sig *dbus.Signal, log *slog.Logger) (name, old, unique string, ok bool) {
	if sig.Name != nameOwnerChanged {
		return "", "", "", false
	}
	if sig.Sender != Bus || sig.Path != BusPath {
		log.Warn(LogForeignSignal, "signal", sig.Name, "sender", sig.Sender, "path", sig.Path)
		return "", "", "", false
	}
	if err := dbus.Store(sig.Body, &name, &old, &unique); err != nil {
		log.Debug("ignoring a malformed signal", "signal", sig.Name, "sender", sig.Sender, "err", err)
		return "", "", "", false
	}
	return name, old, unique, true
}
