package kwin

import (
	"context"
	"fmt"
	"log/slog"

	"github.com/godbus/dbus/v5"

	"github.com/antidrift/antidrift/dist"
	"github.com/antidrift/antidrift/internal/busname"
	"github.com/antidrift/antidrift/internal/latest"
	"github.com/antidrift/antidrift/service"
)

// focusScript is the name the focus script has in KWin and on disk.
const (
	focusScript = "antidrift-focus"
	focusFile   = "focus.js"
)

// Why there is no evidence, as EvidenceReason says it.
const (
	reasonAbsent  = "KWin is not on the session bus; waiting for it to start"
	reasonGone    = "KWin left the session bus; waiting for it to come back"
	reasonLoading = "loading antidrift's script into KWin; the focused window is not known yet"
	// reasonNotLoaded takes the error from KWin.
	reasonNotLoaded = "KWin did not load antidrift's script (%v); the focused window is not known until KWin restarts"
	reasonNoDir     = "antidrift cannot write its KWin script: %v"
	reasonNoBus     = "cannot follow KWin on the session bus: %v"
)

// Sensor is the focus sensor on KWin. Its script inside KWin reports the
// active window over org.antidrift.Evidence1; the daemon hands those
// reports to Push, and Run passes them on.
type Sensor struct {
	conn       *dbus.Conn
	runtimeDir string
	log        *slog.Logger
	news       *latest.Mailbox[service.Window]
}

// NewSensor prepares a sensor that talks to KWin on conn (the daemon's
// session bus connection) and keeps its script under runtimeDir
// (normally $XDG_RUNTIME_DIR).
func NewSensor(conn *dbus.Conn, runtimeDir string, logger *slog.Logger) *Sensor {
	if logger == nil {
		logger = slog.New(slog.DiscardHandler)
	}
	return &Sensor{conn: conn, runtimeDir: runtimeDir, log: logger, news: latest.New[service.Window]()}
}

// Push takes one report of the script's: the active window's handle
// (KWin's internalId; "" when no window has focus), its app id and its
// title. The daemon's Evidence1 gate calls it for KWin's connection only,
// in the order KWin sent the reports. It never blocks; the newest report
// wins. Safe to call from any goroutine, before and during Run.
func (s *Sensor) Push(handle, app, title string) {
	s.log.Debug("kwin: active window", "window", handle, "class", app, "title", title)
	s.news.Post(service.ReportedWindow(handle, app, title))
}

// Run reports the active window until ctx is done: what the script says,
// and why there is none while KWin is away or the script is not running.
// report is called from Run's goroutine only, never concurrently and not
// after Run returns; newest wins. When KWin's name gets a new owner (KWin
// restarted), the script is loaded into it again. Before returning, Run
// unloads the script.
func (s *Sensor) Run(ctx context.Context, report func(service.Window)) {
	f := busname.New(s.conn, s.log)
	defer f.Close()
	kwin, err := f.Follow(ctx, BusName)
	var path string
	if err != nil {
		s.news.Post(service.CannotSee(fmt.Sprintf(reasonNoBus, err)))
	} else if dir, derr := openScriptDir(s.runtimeDir); derr != nil {
		s.news.Post(service.CannotSee(fmt.Sprintf(reasonNoDir, derr)))
	} else if path, derr = dir.write(focusFile, dist.KWinFocusScript); derr != nil {
		s.news.Post(service.CannotSee(fmt.Sprintf(reasonNoDir, derr)))
	} else {
		defer dir.remove(focusFile)
		s.ownerIs(ctx, kwin.Unique, path, reasonAbsent)
	}
	for {
		select {
		case <-ctx.Done():
			if path != "" && kwin.Unique != "" {
				if err := (scripting{s.conn}).unloadSoon(focusScript); err != nil {
					s.log.Info("kwin: could not unload antidrift's script", "err", err)
				}
			}
			return
		case sig, ok := <-f.Signals:
			if !ok {
				<-ctx.Done() // the bus is gone; the daemon ends with it
				continue
			}
			if changed, _ := f.OwnerChange(sig); changed != nil && path != "" {
				s.ownerIs(ctx, kwin.Unique, path, reasonGone)
			}
		case w := <-s.news.C():
			if ctx.Err() == nil {
				report(w)
			}
		}
	}
}

// ownerIs acts on who owns KWin's name now: nobody (say why, with
// whyAbsent), or a KWin to load the script into.
func (s *Sensor) ownerIs(ctx context.Context, now, path, whyAbsent string) {
	if now == "" {
		s.log.Info("kwin: " + whyAbsent)
		s.news.Post(service.CannotSee(whyAbsent))
		return
	}
	s.news.Post(service.CannotSee(reasonLoading))
	before := s.news.Posts()
	err := s.withTimeout(ctx, func(ctx context.Context) error { return (scripting{s.conn}).run(ctx, path, focusScript) })
	if err != nil {
		s.log.Warn("kwin: KWin did not load antidrift's script; no focus evidence until KWin restarts", "err", err)
		// The script may have run anyway and reported.
		s.news.PostUnlessNewer(service.CannotSee(fmt.Sprintf(reasonNotLoaded, err)), before)
		return
	}
	s.log.Info("kwin: antidrift's script is running in KWin", "kwin", now)
}

func (s *Sensor) withTimeout(ctx context.Context, f func(context.Context) error) error {
	ctx, cancel := context.WithTimeout(ctx, callTimeout)
	defer cancel()
	return f(ctx)
}
