package main

import (
	"context"
	"errors"
	"fmt"
	"io"
	"log/slog"
	"sync"
	"time"

	"github.com/godbus/dbus/v5"

	"github.com/antidrift/antidrift/dbusapi"
	"github.com/antidrift/antidrift/persist"
	"github.com/antidrift/antidrift/service"
)

// rawLogRetention is how long raw per-session focus logs are kept.
const rawLogRetention = 30 * 24 * time.Hour

// Main is the daemon: it wires the adapters to the core. main() and the
// end-to-end tests share it.
type Main struct {
	StateDir string    // "" means persist.DefaultDir()
	Version  string    // shown in the Version property
	Stderr   io.Writer // where logs go when stderr is not the journal

	// Bus connects to the session bus; nil means dbus.ConnectSessionBus.
	Bus func() (*dbus.Conn, error)

	log      *slog.Logger
	store    *persist.Store
	svc      *service.Service
	conn     *dbus.Conn
	notifier *systemdNotifier
	stop     context.CancelFunc
	workers  sync.WaitGroup
}

// Run opens the state directory, recovers the core, serves it on the bus
// and tells systemd it is ready. It returns once the daemon is serving;
// Done says when the bus connection is gone.
func (m *Main) Run(ctx context.Context) (err error) {
	m.log = newLogger(m.Stderr)
	defer func() {
		if err != nil {
			m.Close()
		}
	}()
	dir := m.StateDir
	if dir == "" {
		if dir, err = persist.DefaultDir(); err != nil {
			return err
		}
	}
	store, problems, err := persist.Open(dir)
	if err != nil {
		return err
	}
	m.store = store
	snap, _, problem, err := store.LoadSnapshot()
	if err != nil {
		return fmt.Errorf("reading state.json: %w", err)
	}
	if problem != "" {
		problems = append(problems, problem)
	}
	for _, p := range problems {
		m.log.Warn(p)
	}
	if n, err := store.PruneSessions(rawLogRetention, time.Now(), snap.SessionID); err != nil {
		m.log.Warn("pruning old raw logs failed", "err", err)
	} else if n > 0 {
		m.log.Info("pruned old raw logs", "count", n)
	}

	m.svc = service.New(service.Options{
		Store:    store,
		Logger:   m.log,
		Version:  m.Version,
		Problems: problems,
	})
	if err := m.svc.Recover(snap); err != nil {
		return err
	}

	connect := m.Bus
	if connect == nil {
		connect = func() (*dbus.Conn, error) { return dbus.ConnectSessionBus() }
	}
	if m.conn, err = connect(); err != nil {
		return fmt.Errorf("connecting to the session bus: %w", err)
	}
	m.notifier = newSystemdNotifier(m.svc, m.log)
	m.svc.AddListener(m.notifier)
	if _, err := dbusapi.Serve(m.conn, m.svc, m.log); err != nil {
		return err
	}

	var workCtx context.Context
	workCtx, m.stop = context.WithCancel(ctx)
	m.notifier.ready(workCtx, &m.workers)
	v := m.svc.View()
	m.log.Info("antidriftd serving", "bus_name", dbusapi.BusName, "state_dir", dir, "state", v.State, "session_id", v.SessionID)
	return nil
}

// Done is closed when the bus connection ends (the bus went away): the
// daemon cannot serve without it.
func (m *Main) Done() <-chan struct{} {
	return m.conn.Context().Done()
}

// Close stops the daemon cleanly: it records the stop in an active
// session's raw log (so the downtime is not credited to the last window),
// tells systemd, releases the name and the state directory.
func (m *Main) Close() error {
	if m.stop != nil {
		m.stop()
	}
	m.workers.Wait()
	if m.notifier != nil {
		m.notifier.stopping()
	}
	if m.conn != nil {
		// Stop being found by name first, so no new call lands after the
		// stop is recorded; the connection stays up to announce it.
		m.conn.ReleaseName(dbusapi.BusName)
	}
	if m.svc != nil {
		m.svc.Shutdown()
	}
	var errs []error
	if m.conn != nil {
		errs = append(errs, m.conn.Close())
	}
	if m.store != nil {
		errs = append(errs, m.store.Close())
	}
	return errors.Join(errs...)
}
