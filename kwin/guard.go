package kwin

import (
	"context"
	"crypto/rand"
	"encoding/hex"
	"errors"
	"fmt"
	"log/slog"
	"strings"
	"sync"

	"github.com/godbus/dbus/v5"

	"github.com/antidrift/antidrift/dist"
	"github.com/antidrift/antidrift/internal/busname"
	"github.com/antidrift/antidrift/service"
)

// Where the one-shot scripts report their outcome: a private object on the
// daemon's connection (the daemon owns org.antidrift).
const (
	outcomePath  = dbus.ObjectPath("/org/antidrift/KWin")
	outcomeIface = "org.antidrift.KWinScript1"
)

// The outcomes act.js reports.
const (
	outMinimized = "minimized"
	outActivated = "activated"
	outNotActive = "not-active"
	outGone      = "gone"
	outRefused   = "refused"
)

// Guard is the hands on KWin. Each call writes a one-shot script
// (dist/kwin/act.js with the window, the action and a fresh token filled
// in), has KWin run it, and waits for the outcome the script reports back
// with the token, then unloads it. The check ("is it still the active
// window?") and the act happen inside KWin in one go, so nothing can come
// between them, and the script reads back that KWin really did it.
// It implements service.Guard.
type Guard struct {
	conn       *dbus.Conn
	runtimeDir string
	log        *slog.Logger

	mu      sync.Mutex
	waiting map[string]waiter // token → the call waiting for its outcome
	closed  bool
}

// waiter is a call waiting for its script's outcome, which only KWin's
// connection as it was when the script was loaded may report.
type waiter struct {
	kwin    string // unique name
	outcome chan string
}

var _ service.Guard = (*Guard)(nil)

// NewGuard prepares a guard on conn, the daemon's session bus connection,
// with its scripts under runtimeDir (normally $XDG_RUNTIME_DIR). It exports
// the object the one-shot scripts report to.
func NewGuard(conn *dbus.Conn, runtimeDir string, logger *slog.Logger) (*Guard, error) {
	if logger == nil {
		logger = slog.New(slog.DiscardHandler)
	}
	g := &Guard{conn: conn, runtimeDir: runtimeDir, log: logger, waiting: map[string]waiter{}}
	err := conn.ExportMethodTable(map[string]any{"Done": g.done}, outcomePath, outcomeIface)
	if err != nil {
		return nil, fmt.Errorf("kwin: exporting %s: %w", outcomePath, err)
	}
	return g, nil
}

// MinimizeWindow minimizes the window with KWin internalId h if it is the
// active window. It returns nil only when KWin minimized it, and
// service.ErrNotActive when it is not (or no longer exists).
func (g *Guard) MinimizeWindow(ctx context.Context, h string) error {
	return g.do(ctx, "minimize", h)
}

// ActivateWindow un-minimizes the window with KWin internalId h and makes
// it the active window.
func (g *Guard) ActivateWindow(ctx context.Context, h string) error {
	return g.do(ctx, "activate", h)
}

// do runs action on window h and says what its outcome means to the core.
func (g *Guard) do(ctx context.Context, action, h string) error {
	out, err := g.act(ctx, action, h)
	switch {
	case err != nil:
		return err
	case out == outMinimized && action == "minimize", out == outActivated && action == "activate":
		return nil
	case out == outNotActive:
		return service.ErrNotActive
	case out == outGone && action == "minimize":
		return fmt.Errorf("%w: it was closed", service.ErrNotActive)
	case out == outGone:
		return fmt.Errorf("kwin: window %s no longer exists", h)
	default:
		return fmt.Errorf("kwin: KWin did not %s window %s (%s)", action, h, out)
	}
}

// Close withdraws the outcome object; calls after it fail.
func (g *Guard) Close() error {
	g.mu.Lock()
	g.closed = true
	g.mu.Unlock()
	return g.conn.Export(nil, outcomePath, outcomeIface)
}

// act runs act.js for action on window h and returns its outcome.
func (g *Guard) act(ctx context.Context, action, h string) (string, error) {
	if !validHandle(h) {
		return "", fmt.Errorf("kwin: %s is not a KWin window handle (a UUID in braces)", service.Quote(h))
	}
	kwin, _, err := busname.Ask(ctx, g.conn, BusName)
	if err != nil {
		return "", fmt.Errorf("kwin: asking the bus for KWin: %w", err)
	}
	if kwin == "" {
		return "", errors.New("kwin: " + reasonAbsent)
	}
	dir, err := openScriptDir(g.runtimeDir)
	if err != nil {
		return "", fmt.Errorf("kwin: %w", err)
	}
	token, outcome, err := g.expect(kwin)
	if err != nil {
		return "", err
	}
	defer g.forget(token)

	// Every value is one of ours or checked above: nothing KWin or anyone
	// else said reaches the script text unchecked.
	text := strings.NewReplacer("@WINDOW@", h, "@ACTION@", action, "@TOKEN@", token).Replace(dist.KWinActScript)
	name := "antidrift-act-" + token
	path, err := dir.write(name+".js", text)
	if err != nil {
		return "", fmt.Errorf("kwin: writing the script: %w", err)
	}
	defer dir.remove(name + ".js")
	ks := scripting{g.conn}
	defer func() {
		if err := ks.unloadSoon(name); err != nil {
			g.log.Debug("kwin: could not unload a one-shot script", "err", err)
		}
	}()
	if err := ks.run(ctx, path, name); err != nil {
		return "", fmt.Errorf("kwin: %w", err)
	}
	select {
	case out := <-outcome:
		return out, nil
	case <-ctx.Done():
		return "", fmt.Errorf("kwin: no word from the script that was to %s window %s: %w", action, h, ctx.Err())
	}
}

// expect registers a call waiting for an outcome from kwin, under a fresh
// unguessable token.
func (g *Guard) expect(kwin string) (string, <-chan string, error) {
	var b [16]byte
	if _, err := rand.Read(b[:]); err != nil {
		return "", nil, err
	}
	token := hex.EncodeToString(b[:])
	ch := make(chan string, 1)
	g.mu.Lock()
	defer g.mu.Unlock()
	if g.closed {
		return "", nil, errors.New("kwin: the guard is closed")
	}
	g.waiting[token] = waiter{kwin: kwin, outcome: ch}
	return token, ch, nil
}

func (g *Guard) forget(token string) {
	g.mu.Lock()
	delete(g.waiting, token)
	g.mu.Unlock()
}

// done is org.antidrift.KWinScript1.Done(token, outcome), called by a
// one-shot script. Only the KWin it was loaded into is believed, and only
// once per token.
func (g *Guard) done(sender dbus.Sender, token, outcome string) *dbus.Error {
	g.mu.Lock()
	w, ok := g.waiting[token]
	if ok && w.kwin == string(sender) {
		delete(g.waiting, token)
	}
	g.mu.Unlock()
	if !ok || w.kwin != string(sender) {
		return dbus.NewError("org.antidrift.Error.AccessDenied", []any{"antidrift takes outcomes only from the KWin script it is waiting for"})
	}
	w.outcome <- outcome // cannot block: one slot, one send per token
	return nil
}
