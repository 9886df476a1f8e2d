package kwin

import (
	"context"
	"fmt"
	"log/slog"
	"sync"

	"github.com/godbus/dbus/v5"

	"github.com/antidrift/antidrift/dbusapi"
	"github.com/antidrift/antidrift/dist"
	"github.com/antidrift/antidrift/service"
)

// focusScript is the name the focus script has in KWin and on disk.
const (
	focusScript = "antidrift-focus"
	focusFile   = "focus.js"
)

// Why there is no evidence, as EvidenceReason says it.
const (
	reasonNoFocus = "no window has focus"
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
	news       latest
}

// NewSensor prepares a sensor that talks to KWin on conn (the daemon's
// session bus connection) and keeps its script under runtimeDir
// (normally $XDG_RUNTIME_DIR).
func NewSensor(conn *dbus.Conn, runtimeDir string, logger *slog.Logger) *Sensor {
	if logger == nil {
		logger = slog.New(slog.DiscardHandler)
	}
	return &Sensor{conn: conn, runtimeDir: runtimeDir, log: logger, news: latest{wake: make(chan struct{}, 1)}}
}

// Push takes one ReportFocus call from KWin's connection (the daemon's
// Evidence1 gate has checked the sender). It may be called from any
// goroutine, concurrently; a report older than one already taken (by the
// call's serial) is dropped.
func (s *Sensor) Push(r dbusapi.FocusReport) {
	w := service.Window{ID: r.Handle, Class: r.AppID, Title: r.Title, Available: true}
	if r.Handle == "" {
		w = unavailable(reasonNoFocus)
	}
	s.log.Debug("kwin: active window", "window", r.Handle, "class", r.AppID, "title", r.Title)
	s.news.post(w, r.Serial)
}

// Run reports the active window until ctx is done: what the script says,
// and why there is none while KWin is away or the script is not running.
// report is called from Run's goroutine only, never concurrently and not
// after Run returns; newest wins, and consecutive identical windows are
// reported once. When KWin's name gets a new owner (KWin restarted), the
// script is loaded into it again. Before returning, Run unloads the script.
func (s *Sensor) Run(ctx context.Context, report func(service.Window)) {
	signals := make(chan *dbus.Signal, 16)
	s.conn.Signal(signals)
	defer s.conn.RemoveSignal(signals)
	match := []dbus.MatchOption{
		dbus.WithMatchSender("org.freedesktop.DBus"),
		dbus.WithMatchMember("NameOwnerChanged"),
		dbus.WithMatchArg(0, BusName),
	}
	err := s.withTimeout(ctx, func(ctx context.Context) error { return s.conn.AddMatchSignalContext(ctx, match...) })
	if err == nil {
		defer s.withTimeout(context.Background(), func(ctx context.Context) error { return s.conn.RemoveMatchSignalContext(ctx, match...) })
	}
	var path string
	if err != nil {
		s.news.post(unavailable(fmt.Sprintf(reasonNoBus, err)), 0)
	} else if dir, derr := openScriptDir(s.runtimeDir); derr != nil {
		s.news.post(unavailable(fmt.Sprintf(reasonNoDir, derr)), 0)
	} else if path, derr = dir.write(focusFile, dist.KWinFocusScript); derr != nil {
		s.news.post(unavailable(fmt.Sprintf(reasonNoDir, derr)), 0)
	} else {
		defer dir.remove(focusFile)
	}
	kwin := "" // the owner of KWin's name the script was loaded into
	follow := func(whyAbsent string) {
		var now string
		if err := s.withTimeout(ctx, func(ctx context.Context) (err error) { now, err = owner(ctx, s.conn); return err }); err != nil {
			s.log.Warn("kwin: cannot ask the bus who owns "+BusName, "err", err)
			s.news.post(unavailable(fmt.Sprintf(reasonNoBus, err)), 0)
			return
		}
		if now != kwin || whyAbsent == reasonAbsent {
			kwin = now
			s.ownerIs(ctx, now, path, whyAbsent)
		}
	}
	if path != "" {
		follow(reasonAbsent)
	}
	for {
		select {
		case <-ctx.Done():
			if path != "" && kwin != "" {
				if err := (scripting{s.conn}).unloadSoon(focusScript); err != nil {
					s.log.Info("kwin: could not unload antidrift's script", "err", err)
				}
			}
			return
		case sig, ok := <-signals:
			if !ok {
				<-ctx.Done() // the bus is gone; the daemon ends with it
				continue
			}
			// The signal only says to look: godbus can deliver signals out
			// of order, so who owns the name now is asked of the bus.
			if name, ok := nameOwnerChange(sig); ok && name == BusName && path != "" {
				follow(reasonGone)
			}
		case <-s.news.wake:
			if w, ok := s.news.take(); ok && ctx.Err() == nil {
				report(w)
			}
		}
	}
}

// ownerIs acts on who owns KWin's name now: nobody (say why, with
// whyAbsent), or a KWin to load the script into.
func (s *Sensor) ownerIs(ctx context.Context, now, path, whyAbsent string) {
	s.news.newConnection()
	if now == "" {
		s.log.Info("kwin: " + whyAbsent)
		s.news.post(unavailable(whyAbsent), 0)
		return
	}
	s.news.post(unavailable(reasonLoading), 0)
	before := s.news.count()
	err := s.withTimeout(ctx, func(ctx context.Context) error { return (scripting{s.conn}).run(ctx, path, focusScript) })
	if err != nil {
		s.log.Warn("kwin: KWin did not load antidrift's script; no focus evidence until KWin restarts", "err", err)
		if s.news.count() == before { // the script may have run anyway and reported
			s.news.post(unavailable(fmt.Sprintf(reasonNotLoaded, err)), 0)
		}
		return
	}
	s.log.Info("kwin: antidrift's script is running in KWin", "kwin", now)
}

func (s *Sensor) withTimeout(ctx context.Context, f func(context.Context) error) error {
	ctx, cancel := context.WithTimeout(ctx, callTimeout)
	defer cancel()
	return f(ctx)
}

// nameOwnerChange reads the name of a NameOwnerChanged signal from the bus
// itself (a peer could send one of that name straight to us; only the bus's
// counts).
func nameOwnerChange(sig *dbus.Signal) (name string, ok bool) {
	if sig.Name != "org.freedesktop.DBus.NameOwnerChanged" || sig.Sender != "org.freedesktop.DBus" {
		return "", false
	}
	var old, now string
	if err := dbus.Store(sig.Body, &name, &old, &now); err != nil {
		return "", false
	}
	return name, true
}

func unavailable(reason string) service.Window { return service.Window{Reason: reason} }

// latest is the newest window not yet reported: a single-slot handoff from
// any number of posters (bus handler goroutines, the sensor's own loop) to
// Run's goroutine, which wake tells to look.
type latest struct {
	wake chan struct{}

	mu       sync.Mutex
	w        service.Window
	fresh    bool           // w has not been taken
	last     service.Window // what was taken last
	taken    bool
	serial   uint32 // of the newest report from KWin's connection
	ordered  bool   // serial is set
	received uint64 // reports from KWin, ever
}

// post makes w the newest news. serial is the report's message serial; 0
// for the sensor's own news, which is always newer than what came before.
func (l *latest) post(w service.Window, serial uint32) {
	l.mu.Lock()
	if serial != 0 {
		// Serials count up per connection (and wrap): a report numbered
		// before the newest one taken overtook nothing and is stale.
		if l.ordered && int32(serial-l.serial) <= 0 {
			l.mu.Unlock()
			return
		}
		l.serial, l.ordered = serial, true
		l.received++
	}
	l.w, l.fresh = w, true
	l.mu.Unlock()
	select {
	case l.wake <- struct{}{}:
	default:
	}
}

// take returns the newest news if there is any and it differs from what
// was taken last.
func (l *latest) take() (service.Window, bool) {
	l.mu.Lock()
	defer l.mu.Unlock()
	if !l.fresh || (l.taken && l.w == l.last) {
		l.fresh = false
		return service.Window{}, false
	}
	l.fresh, l.last, l.taken = false, l.w, true
	return l.w, true
}

// newConnection forgets the serial order: a new KWin numbers from 1.
func (l *latest) newConnection() {
	l.mu.Lock()
	l.ordered = false
	l.mu.Unlock()
}

// count is how many reports from KWin were ever accepted.
func (l *latest) count() uint64 {
	l.mu.Lock()
	defer l.mu.Unlock()
	return l.received
}
