// Package notifications is antidrift's client of the desktop's notification
// server (org.freedesktop.Notifications): it shows the core's nudges and
// hands back the actions the person chooses. It implements service.Notifier.
package notifications

import (
	"context"
	"errors"
	"fmt"
	"log/slog"
	"net/url"
	"path/filepath"
	"slices"
	"strings"
	"sync"
	"time"
	"unicode/utf8"

	"github.com/godbus/dbus/v5"

	"github.com/antidrift/antidrift/internal/busname"
	"github.com/antidrift/antidrift/internal/inert"
	"github.com/antidrift/antidrift/service"
)

// The desktop notification server, as the freedesktop spec names it.
const (
	notificationsName  = "org.freedesktop.Notifications"
	notificationsPath  = dbus.ObjectPath("/org/freedesktop/Notifications")
	notificationsIface = "org.freedesktop.Notifications"
	actionInvoked      = notificationsIface + ".ActionInvoked"

	// notifyAppName is both the app_name and the desktop-entry hint, so
	// servers that group or theme by application find antidrift.desktop.
	notifyAppName = "antidrift"
	// setupTimeout bounds the bus calls of New and Shutdown,
	// which take no context. They only talk to the bus daemon.
	setupTimeout = 5 * time.Second
	// maxTracked bounds the ids remembered per server. The core keeps at
	// most a couple of notifications open; this only guards against a
	// caller that never closes anything.
	maxTracked = 256
)

// ErrNoServer says nothing owns org.freedesktop.Notifications on
// the session bus and the bus could not start one.
var ErrNoServer = errors.New("no notification server on the session bus")

// Client delivers the core's notifications to the desktop's
// notification server (org.freedesktop.Notifications) and reports the
// actions the person chooses.
//
// It talks to whichever process owns the name at the time of each call. It
// remembers, per server (by unique bus name, never reused on a bus), whether
// the server can show actions and which notification ids it gave us, so that
// after a server restart a stale id can neither replace nor close some other
// application's notification that happens to have the same number.
type Client struct {
	conn     *dbus.Conn
	log      *slog.Logger
	onAction func(id uint32, key string)

	signals  chan *dbus.Signal
	done     chan struct{} // closed by Shutdown
	loopDone chan struct{} // closed when the signal loop has returned
	shutOnce sync.Once
	shutErr  error

	mu        sync.Mutex
	server    string              // unique name of the server we last talked to
	capsKnown bool                // whether caps below is server's answer
	caps      capabilities        // what server advertises
	ours      map[uint32]struct{} // ids server gave us that we have not closed
}

var _ service.Notifier = (*Client)(nil)

// actionMatch selects ActionInvoked signals sent by whoever owns
// org.freedesktop.Notifications at the time. The bus resolves the
// well-known sender name on every signal, so the one subscription keeps
// working when the server restarts under a new unique name.
var actionMatch = []dbus.MatchOption{
	dbus.WithMatchSender(notificationsName),
	dbus.WithMatchObjectPath(notificationsPath),
	dbus.WithMatchInterface(notificationsIface),
	dbus.WithMatchMember("ActionInvoked"),
}

// New talks to org.freedesktop.Notifications on conn (the
// daemon's session-bus connection). onAction is called with (notification
// id, action key) for every ActionInvoked signal from the notification
// server, one at a time from a goroutine of its own; the core filters to its
// own ids. It needs no notification server to be running.
func New(conn *dbus.Conn, log *slog.Logger, onAction func(id uint32, key string)) (*Client, error) {
	if onAction == nil {
		onAction = func(uint32, string) {}
	}
	n := &Client{
		conn:     conn,
		log:      log,
		onAction: onAction,
		signals:  make(chan *dbus.Signal, 16),
		done:     make(chan struct{}),
		loopDone: make(chan struct{}),
		ours:     map[uint32]struct{}{},
	}
	ctx, cancel := context.WithTimeout(context.Background(), setupTimeout)
	defer cancel()
	if err := conn.AddMatchSignalContext(ctx, actionMatch...); err != nil {
		return nil, fmt.Errorf("subscribing to notification actions: %w", err)
	}
	conn.Signal(n.signals)
	go n.loop()
	return n, nil
}

// Notify shows note, replacing notification note.ReplacesID when the
// current server gave us that id, and returns the id the server gave it.
// If the server cannot show actions, note.NoActionsHint goes on a new line of
// the body instead. If it reads markup in the body (body-markup), the body
// is escaped (inert.Markup): it carries the person's next action and a
// window's class, text from outside that must show as it is, not as a tag
// or a link. It fails with ErrNoServer when no server is running and the
// bus cannot start one, and never blocks past ctx.
func (n *Client) Notify(ctx context.Context, note service.Notification) (uint32, error) {
	server, err := n.resolve(ctx, true)
	if err != nil {
		return 0, err
	}
	caps, err := n.capabilities(ctx, server)
	if err != nil {
		return 0, err
	}
	withActions := caps.actions

	actions := []string{}
	body := note.Body
	if withActions {
		for _, a := range note.Actions {
			actions = append(actions, a.Key, a.Label)
		}
	} else if len(note.Actions) > 0 && note.NoActionsHint != "" {
		if body != "" {
			body += "\n"
		}
		body += note.NoActionsHint
	}
	if caps.bodyMarkup {
		body = inert.Markup(body)
	}
	hints := map[string]dbus.Variant{
		"desktop-entry": dbus.MakeVariant(notifyAppName),
		"urgency":       dbus.MakeVariant(note.Urgency),
	}
	if note.Category != "" {
		hints["category"] = dbus.MakeVariant(note.Category)
	}
	if image := imagePath(note.Image); image != "" {
		hints["image-path"] = dbus.MakeVariant(image)
	}

	replaces := note.ReplacesID
	if replaces != 0 && !n.isOurs(server, replaces) {
		// The id came from a server that has since gone, or was closed: the
		// current server may have given that number to another application
		// (dunst even adopts unknown replaces_ids), so show a new one.
		n.log.Debug("not replacing a notification this server did not give us", "id", replaces)
		replaces = 0
	}

	var id uint32
	// Addressed to the unique name, so the notification goes to the server
	// whose capabilities we just used, or fails if that server is gone.
	err = n.conn.Object(server, notificationsPath).CallWithContext(ctx, notificationsIface+".Notify", dbus.FlagNoAutoStart,
		notifyAppName, replaces, "", note.Summary, body, actions, hints, int32(0)).Store(&id)
	if err != nil {
		n.forgetIfGone(server, err)
		return 0, fmt.Errorf("sending a notification: %w", serverError(err))
	}
	if id == 0 {
		return 0, errors.New("the notification server returned id 0")
	}
	n.track(server, replaces, id)
	n.log.Debug("notification shown", "id", id, "replaces", replaces, "category", note.Category, "actions", withActions)
	return id, nil
}

// Close withdraws notification id. An id the current server did not give us
// (its server has gone, taking the notification with it) is left alone, so
// a new server's notification with the same number is not closed by mistake.
func (n *Client) Close(ctx context.Context, id uint32) error {
	server, err := n.resolve(ctx, false)
	if err != nil {
		return err
	}
	if !n.isOurs(server, id) {
		n.log.Debug("not closing a notification this server did not give us", "id", id)
		return nil
	}
	err = n.conn.Object(server, notificationsPath).CallWithContext(ctx, notificationsIface+".CloseNotification", dbus.FlagNoAutoStart, id).Store()
	if err != nil {
		n.forgetIfGone(server, err)
		return fmt.Errorf("closing notification %d: %w", id, serverError(err))
	}
	n.mu.Lock()
	if n.server == server {
		delete(n.ours, id)
	}
	n.mu.Unlock()
	return nil
}

// Shutdown stops listening for ActionInvoked signals. Once it returns,
// onAction is not called again. Notify and Close keep working. It is safe to
// call more than once.
func (n *Client) Shutdown() error {
	n.shutOnce.Do(func() {
		close(n.done)
		n.conn.RemoveSignal(n.signals)
		<-n.loopDone
		if !n.conn.Connected() {
			return // the bus dropped the match with the connection
		}
		ctx, cancel := context.WithTimeout(context.Background(), setupTimeout)
		defer cancel()
		if err := n.conn.RemoveMatchSignalContext(ctx, actionMatch...); err != nil {
			n.shutErr = fmt.Errorf("unsubscribing from notification actions: %w", err)
		}
	})
	return n.shutErr
}

// loop hands ActionInvoked signals from the current server to onAction.
// conn.Signal delivers every signal the connection receives, including
// other subscriptions' and ones sent to us directly by any peer, so each is
// checked: only the server may say the person chose an action.
func (n *Client) loop() {
	defer close(n.loopDone)
	for {
		select {
		case <-n.done:
			return
		case sig, ok := <-n.signals:
			if !ok {
				return // the connection was closed
			}
			if sig == nil || sig.Name != actionInvoked || sig.Path != notificationsPath {
				continue
			}
			var id uint32
			var key string
			if err := dbus.Store(sig.Body, &id, &key); err != nil {
				n.log.Debug("ignoring a malformed ActionInvoked signal", "sender", sig.Sender, "err", err)
				continue
			}
			n.mu.Lock()
			fromServer := sig.Sender != "" && sig.Sender == n.server
			n.mu.Unlock()
			if !fromServer {
				n.log.Warn("ignoring an ActionInvoked signal not sent by the notification server", "sender", sig.Sender)
				continue
			}
			n.log.Debug("notification action", "id", id, "action", key)
			n.onAction(id, key)
		}
	}
}

// resolve returns the unique name of the notification server. When none is
// running and activate is set, it asks the bus to start one: desktops often
// start their notification daemon on demand through D-Bus activation. That
// is bounded by ctx; a bus without an activatable server answers at once.
// A server under a new unique name starts with a clean slate.
func (n *Client) resolve(ctx context.Context, activate bool) (string, error) {
	server, _, err := busname.Ask(ctx, n.conn, notificationsName)
	if err == nil && server == "" && activate {
		var started uint32
		err = n.conn.BusObject().CallWithContext(ctx, busname.Bus+".StartServiceByName", 0, notificationsName, uint32(0)).Store(&started)
		if err == nil {
			n.log.Debug("the bus started a notification server")
			server, _, err = busname.Ask(ctx, n.conn, notificationsName)
		}
	}
	if err != nil {
		return "", serverError(err)
	}
	if server == "" {
		return "", fmt.Errorf("%w (nothing owns %s)", ErrNoServer, notificationsName)
	}
	n.mu.Lock()
	defer n.mu.Unlock()
	if server != n.server {
		if n.server != "" {
			n.log.Debug("the notification server changed", "was", n.server, "now", server)
		}
		n.server, n.capsKnown, n.caps = server, false, capabilities{}
		clear(n.ours)
	}
	return server, nil
}

// capabilities are what of the specification's optional parts a server
// advertises (GetCapabilities) that change what antidrift sends it.
type capabilities struct {
	actions    bool // "actions": it shows buttons and reports the choice
	bodyMarkup bool // "body-markup": it reads the body as markup
}

// capabilities reports what server advertises, asking it only once.
func (n *Client) capabilities(ctx context.Context, server string) (capabilities, error) {
	n.mu.Lock()
	if n.server == server && n.capsKnown {
		defer n.mu.Unlock()
		return n.caps, nil
	}
	n.mu.Unlock()

	var caps []string
	err := n.conn.Object(server, notificationsPath).CallWithContext(ctx, notificationsIface+".GetCapabilities", dbus.FlagNoAutoStart).Store(&caps)
	if err != nil {
		n.forgetIfGone(server, err)
		return capabilities{}, fmt.Errorf("asking the notification server what it can show: %w", serverError(err))
	}
	got := capabilities{actions: slices.Contains(caps, "actions"), bodyMarkup: slices.Contains(caps, "body-markup")}
	n.mu.Lock()
	if n.server == server {
		n.capsKnown, n.caps = true, got
	}
	n.mu.Unlock()
	if got.actions {
		n.log.Debug("notification server found", "server", server)
	} else {
		n.log.Warn("the notification server cannot show actions; notifications will say what to do instead", "server", server)
	}
	return got, nil
}

func (n *Client) isOurs(server string, id uint32) bool {
	n.mu.Lock()
	defer n.mu.Unlock()
	_, ok := n.ours[id]
	return ok && n.server == server
}

// track remembers that server gave us id (in place of replaced).
func (n *Client) track(server string, replaced, id uint32) {
	n.mu.Lock()
	defer n.mu.Unlock()
	if n.server != server {
		return
	}
	if replaced != 0 {
		delete(n.ours, replaced)
	}
	if len(n.ours) >= maxTracked {
		for old := range n.ours {
			delete(n.ours, old)
			break
		}
	}
	n.ours[id] = struct{}{}
}

// forgetIfGone drops what we know about server when a call says it has left
// the bus, so the next call looks the server up afresh.
func (n *Client) forgetIfGone(server string, err error) {
	if !busname.IsError(err, "org.freedesktop.DBus.Error.ServiceUnknown") && !busname.IsError(err, "org.freedesktop.DBus.Error.NameHasNoOwner") {
		return
	}
	n.mu.Lock()
	defer n.mu.Unlock()
	if n.server == server {
		n.server, n.capsKnown, n.caps = "", false, capabilities{}
		clear(n.ours)
	}
}

// serverError turns the bus's "nobody there" answers into
// ErrNoServer (keeping the bus's words) and leaves others alone.
func serverError(err error) error {
	for _, name := range []string{
		"org.freedesktop.DBus.Error.NameHasNoOwner",
		"org.freedesktop.DBus.Error.ServiceUnknown",
	} {
		if busname.IsError(err, name) {
			return fmt.Errorf("%w (%v)", ErrNoServer, err)
		}
	}
	return err
}

// imagePath is the image-path hint for a desktop entry's Icon=: the
// specification takes "a URI or an icon name", so an absolute path becomes
// a file: URI and a name stays as it is. Anything else (a relative path, a
// URI, a NUL, a path that climbs) is sent as no image.
func imagePath(icon string) string {
	switch {
	case icon == "" || strings.ContainsRune(icon, 0) || !utf8.ValidString(icon):
		return ""
	case filepath.IsAbs(icon):
		if filepath.Clean(icon) != icon {
			return ""
		}
		return (&url.URL{Scheme: "file", Path: icon}).String()
	case strings.ContainsAny(icon, "/:") || icon == "." || icon == "..":
		return ""
	}
	return icon
}
