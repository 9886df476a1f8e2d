package gnomeshell

import (
	"context"
	"errors"
	"fmt"

	"github.com/godbus/dbus/v5"

	"github.com/antidrift/antidrift/service"
)

// Guard is the hands on GNOME Shell: it calls the extension's
// org.antidrift.Shell1 through the name org.gnome.Shell, so whatever
// answers is the compositor. It implements service.Guard.
type Guard struct {
	conn *dbus.Conn
}

var _ service.Guard = (*Guard)(nil)

// NewGuard prepares a guard calling GNOME Shell on conn.
func NewGuard(conn *dbus.Conn) *Guard { return &Guard{conn: conn} }

// MinimizeWindow minimizes window handle if it still has focus; the
// extension checks that and acts in one step, inside the Shell. It returns
// service.ErrNotActive, having done nothing, when the window no longer has
// focus.
func (g *Guard) MinimizeWindow(ctx context.Context, handle string) error {
	if handle == "" {
		return service.ErrNotActive
	}
	minimized, err := g.call(ctx, "Minimize", handle)
	if err != nil {
		return err
	}
	if !minimized {
		return service.ErrNotActive
	}
	return nil
}

// ActivateWindow gives window handle focus (unminimizing it, switching to
// its workspace), if it still exists.
func (g *Guard) ActivateWindow(ctx context.Context, handle string) error {
	activated, err := g.call(ctx, "Activate", handle)
	if err != nil {
		return err
	}
	if !activated {
		return fmt.Errorf("gnome-shell: window %s no longer exists", service.Quote(handle))
	}
	return nil
}

// call calls method(handle) on the extension and returns its boolean.
func (g *Guard) call(ctx context.Context, method, handle string) (bool, error) {
	var ok bool
	err := g.conn.Object(shellName, handsPath).CallWithContext(ctx, handsIface+"."+method, dbus.FlagNoAutoStart, handle).Store(&ok)
	var e dbus.Error
	if errors.As(err, &e) {
		switch e.Name {
		case "org.freedesktop.DBus.Error.ServiceUnknown", "org.freedesktop.DBus.Error.NameHasNoOwner":
			return false, errors.New("gnome-shell: " + reasonNoShell)
		case "org.freedesktop.DBus.Error.UnknownObject", "org.freedesktop.DBus.Error.UnknownMethod", "org.freedesktop.DBus.Error.UnknownInterface":
			return false, errors.New("gnome-shell: the antidrift extension is not running in GNOME Shell")
		}
	}
	if err != nil {
		return false, fmt.Errorf("gnome-shell: %s: %w", method, err)
	}
	return ok, nil
}
