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

	"github.com/antidrift/antidrift/apps"
	"github.com/antidrift/antidrift/config"
	"github.com/antidrift/antidrift/dbusapi"
	"github.com/antidrift/antidrift/dnd"
	"github.com/antidrift/antidrift/internal/busconn"
	"github.com/antidrift/antidrift/internal/nativehost"
	"github.com/antidrift/antidrift/llmjudge"
	"github.com/antidrift/antidrift/notifications"
	"github.com/antidrift/antidrift/persist"
	"github.com/antidrift/antidrift/presence"
	"github.com/antidrift/antidrift/service"
)

// Main is the daemon: it wires the adapters to the core. main() and the
// end-to-end tests share it.
type Main struct {
	StateDir   string    // "" means persist.DefaultDir()
	ConfigPath string    // "" means config.DefaultPath()
	Display    string    // the X display to watch; "" means none (no X11 evidence)
	Wayland    string    // WAYLAND_DISPLAY; "" means not a Wayland session
	Version    string    // shown in the Version property
	Stderr     io.Writer // where logs go when stderr is not the journal

	// BusAddress is the session bus's address; "" means the one the
	// environment names.
	BusAddress string
	// Clock is the core's clock; nil means the system's. Tests set the
	// date on it without touching the machine's.
	Clock service.Clock

	log      *slog.Logger
	src      source
	stopPush func() // ends Evidence1 reports reaching the source
	notes    *notifications.Client
	quiet    *dnd.Manager // Do Not Disturb for quiet sessions
	system   *dbus.Conn   // the system bus, for logind; nil where unreachable
	watchers []func()     // stop funcs of the presence watchers
	store    *persist.Store
	judge    *llmjudge.Judge // nil: the rules alone decide
	apps     *apps.Index     // the desktop entries; nil when they could not be opened
	coach    *llmjudge.Coach // nil: Coach answers NoModel (no model configured)
	svc      *service.Service
	conn     *dbus.Conn
	notifier *systemdNotifier
	stop     context.CancelFunc
	workers  sync.WaitGroup

	publish *persist.Publisher // the copy in sync_dir; nil without one
	// rulesPath is the rules file beside the config (config.RulesPath):
	// read at start, written by ApplyProposal; "" when there is no config path.
	rulesPath string
}

// Run opens the state directory, recovers the core, serves it on the bus
// and tells systemd it is ready. It returns once the daemon is serving;
// Done says when the bus connection is gone. Each step is a method below,
// in the order Run takes them.
func (m *Main) Run(ctx context.Context) (err error) {
	m.log = newLogger(m.Stderr)
	defer func() {
		if err != nil {
			m.Close()
		}
	}()
	// Settings first: every step reads them, and a bad file only costs defaults.
	cfg, problems := m.loadConfig()
	// The records before the bus: a daemon that cannot keep them must fail unseen.
	snap, problems, err := m.openState(cfg.Retention, problems)
	if err != nil {
		return err
	}
	// The bus before the adapters: notifications and evidence sources talk over it.
	if m.conn, err = busconn.Connect(m.BusAddress, m.log); err != nil {
		return fmt.Errorf("connecting to the session bus: %w", err)
	}
	// The adapters before the core, which is built around them as its ports.
	if problems, err = m.openAdapters(cfg, problems); err != nil {
		return err
	}
	// Recovered before anyone can call it: the first caller sees the session that ran.
	if err = m.startCore(cfg, snap, problems); err != nil {
		return err
	}
	// Serving after recovery: owning the name is what lets activated callers in.
	if err = m.serve(cfg.FlatpakBrowsers); err != nil {
		return err
	}
	// Workers last: they feed a serving core, and READY=1 must follow the name.
	m.startWorkers(ctx)
	// Said once everything above holds, so the journal's line means serving.
	m.logServing()
	return nil
}

// logServing is the one line the journal shows for a daemon that serves:
// where its state is and how it sees windows.
func (m *Main) logServing() {
	v := m.svc.View()
	m.log.Info("antidriftd serving", "bus_name", dbusapi.BusName, "state_dir", m.store.Dir(), "state", v.State, "session_id", v.SessionID,
		"evidence_source", m.src.name, "evidence_chosen_because", m.src.why, "x11_display", m.Display, "wayland_display", m.Wayland,
		"enforcement_available", m.src.guard != nil)
}

// openState opens the state directory and reads the snapshot, pruning raw
// logs older than retention. It adds what it found damaged to problems
// (the config's, so far) and logs them all, once.
func (m *Main) openState(retention time.Duration, problems []string) (snap service.Snapshot, _ []string, err error) {
	dir := m.StateDir
	if dir == "" {
		if dir, err = persist.DefaultDir(); err != nil {
			return snap, nil, err
		}
	}
	var damaged []string
	if m.store, damaged, err = persist.Open(dir); err != nil {
		return snap, nil, err
	}
	problems = append(problems, damaged...)
	snap, _, problem, err := m.store.LoadSnapshot()
	if err != nil {
		return snap, nil, fmt.Errorf("reading state.json: %w", err)
	}
	if problem != "" {
		problems = append(problems, problem)
	}
	for _, p := range problems {
		m.log.Warn(p)
	}
	if n, err := m.store.PruneSessions(retention, time.Now(), snap.SessionID); err != nil {
		m.log.Warn("pruning old raw logs failed", "err", err)
	} else if n > 0 {
		m.log.Info("pruned old raw logs", "count", n)
	}
	return snap, problems, nil
}

// openAdapters opens what the core's ports need: notifications, the
// evidence source and the model judge. A judge that cannot be used adds a
// problem to problems; the daemon runs on rules alone.
func (m *Main) openAdapters(cfg config.Config, problems []string) (_ []string, err error) {
	// The notifications client reports actions to the core, which is built
	// after it: the closure reads m.svc when an action arrives.
	onAction := func(id uint32, key string) {
		if m.svc != nil {
			m.svc.NotificationAction(id, key)
		}
	}
	if m.notes, err = notifications.New(m.conn, m.log, onAction); err != nil {
		return nil, err
	}
	// Do Not Disturb speaks to the core the same way: the closures read
	// m.svc when there is something to say. A record a crash left behind
	// is read now and put back at the core's first decision.
	m.quiet, err = dnd.New(dnd.Options{Conn: m.conn, Log: m.log, Dir: m.store.Dir(),
		Note: func(note string) {
			if m.svc != nil {
				m.svc.SetQuietNote(note)
			}
		},
		Problem: func(p string) {
			if m.svc != nil {
				m.svc.NoteProblem("quiet", p)
			}
		}})
	if err != nil {
		return nil, err
	}
	m.src = m.openSource(cfg.Evidence, cfg.IdleAfter)
	if problem := m.openJudge(cfg.Judge); problem != "" {
		m.log.Warn(problem)
		problems = append(problems, problem)
	}
	if problem := m.openApps(); problem != "" {
		m.log.Warn(problem)
		problems = append(problems, problem)
	}
	return problems, nil
}

// startCore builds the core from the settings and the adapters and
// recovers it from snap.
func (m *Main) startCore(cfg config.Config, snap service.Snapshot, problems []string) error {
	m.svc = service.New(m.serviceOptions(cfg, problems))
	if err := m.svc.Recover(snap); err != nil {
		return err
	}
	if m.apps != nil {
		m.apps.OnChange(m.svc.AppsChanged) // an app installed while its window is in front
	}
	m.startPublisher(cfg, m.store)
	m.notifier = newSystemdNotifier(m.svc, m.log)
	m.svc.AddListener(m.notifier)
	return nil
}

// serve exports the core on the bus and takes the name, then believes
// pushed evidence from the compositor's helper, if the source has one, and
// tab reports from the native host a browser started (with flatpakBrowsers,
// also one xdg-native-messaging-proxy started: docs/browsers.md).
func (m *Main) serve(flatpakBrowsers bool) error {
	server, err := dbusapi.Serve(m.conn, m.svc, m.log)
	if err != nil {
		return err
	}
	server.SetEvidenceSource(m.src.name)
	if hosts, err := nativehost.Beside(); err != nil {
		m.log.Warn("taking no browser tab reports", "err", err)
	} else {
		if flatpakBrowsers {
			hosts.Launchers = []string{nativehost.FlatpakProxy}
		}
		server.TrustTabHosts(func(pid int) (string, int, error) {
			h, err := hosts.Identify(pid)
			return h.Browser, h.BrowserPID, err
		})
	}
	if m.src.pushedBy != "" {
		m.stopPush = server.BelieveEvidenceFrom(m.src.name, m.src.pushedBy, m.src.push)
	}
	return nil
}

// startWorkers tells systemd the daemon is ready and starts what feeds the
// core: the window sensor, the idle watcher and the presence watchers.
// Close stops them.
func (m *Main) startWorkers(ctx context.Context) {
	var workCtx context.Context
	workCtx, m.stop = context.WithCancel(ctx)
	m.notifier.ready(workCtx, &m.workers)
	if m.src.sensor != nil {
		m.goWork(func() { m.src.sensor(workCtx, m.svc.RecordWindow) })
	} else {
		m.svc.RecordWindow(service.Window{Reason: m.src.unavailable})
	}
	if m.src.idle != nil {
		m.goWork(func() {
			m.src.idle(workCtx, func(away bool) { m.svc.SetAway("idle", service.AwayIdle, away) })
		})
	}
	m.watchPresence()
}

func (m *Main) goWork(f func()) {
	m.workers.Add(1)
	go func() {
		defer m.workers.Done()
		f()
	}()
}

// watchPresence follows screen lock and GNOME's break reminders on the
// session bus, and screen lock and sleep through logind on the system bus
// where it is reachable.
func (m *Main) watchPresence() {
	report := func(e presence.Event) {
		reason := service.AwayLocked
		switch e.Reason {
		case presence.ReasonSleep:
			reason = service.AwaySuspended
		case presence.ReasonBreak:
			reason = service.AwayBreak
		}
		m.svc.SetAway(e.Source+"/"+e.Reason, reason, e.Away)
	}
	if stop, err := presence.WatchScreenSaver(m.conn, m.log, report); err != nil {
		m.log.Warn("not following the screensaver", "err", err)
	} else {
		m.watchers = append(m.watchers, stop)
	}
	if stop, err := presence.WatchScreenTime(m.conn, m.log, report, m.svc.SetBreakDue); err != nil {
		m.log.Warn("not following GNOME's break reminders", "err", err)
	} else {
		m.watchers = append(m.watchers, stop)
	}
	system, err := busconn.ConnectSystem(m.log)
	if err != nil {
		m.log.Info("no system bus: screen lock and sleep from logind are not followed (a jump of the wall clock still reveals a suspend)", "err", err)
		return
	}
	stop, err := presence.WatchLogind(system, m.log, report)
	if err != nil {
		m.log.Info("logind is not followed", "err", err)
		system.Close()
		return
	}
	m.system = system
	m.watchers = append(m.watchers, stop)
}

// loadConfig reads the config file. A bad file never stops the daemon: it
// runs on defaults for what is wrong and says so in Problems and the log.
func (m *Main) loadConfig() (config.Config, []string) {
	path := m.ConfigPath
	if path == "" {
		var err error
		if path, err = config.DefaultPath(); err != nil {
			m.log.Warn("no config path; using defaults", "err", err)
			return config.Default(), nil
		}
	}
	// The rules file antidrift writes (antidrift review --apply) is read on
	// top: config.toml itself is the person's and never rewritten.
	m.rulesPath = config.RulesPath(path)
	cfg, problems := config.LoadWithRules(path)
	var out []string
	for _, p := range problems {
		out = append(out, p.String()) // Run logs every startup problem, once
	}
	return cfg, out
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
	if m.stopPush != nil {
		m.stopPush()
	}
	if m.stop != nil {
		m.stop()
	}
	m.workers.Wait()
	for _, stop := range m.watchers {
		stop()
	}
	if m.system != nil {
		m.system.Close()
	}
	if m.notifier != nil {
		m.notifier.stopping()
	}
	if m.conn != nil {
		// Stop being found by name first, so no new call lands after the
		// stop is recorded; the connection stays up to announce it.
		m.conn.ReleaseName(dbusapi.BusName)
	}
	if m.judge != nil {
		m.judge.Close() // no verdict arrives after this
	}
	if m.apps != nil {
		m.apps.Close()
	}
	if m.svc != nil {
		m.svc.Shutdown()
	}
	if m.publish != nil {
		m.publish.Close() // after the last seal; before the store goes
	}
	if m.quiet != nil {
		m.quiet.Close() // after the core's last decision: the setting goes back as the daemon stops
	}
	if m.notes != nil {
		m.notes.Shutdown()
	}
	if m.src.close != nil {
		m.src.close()
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
