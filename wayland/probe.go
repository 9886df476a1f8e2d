package wayland

import (
	"context"
	"os"

	"github.com/antidrift/antidrift/wayland/wire"
)

// Globals says which of the interfaces antidrift uses a compositor offers.
type Globals struct {
	// ForeignToplevel: zwlr_foreign_toplevel_manager_v1, the wlroots
	// window list the Sensor and the Guard need (sway, Hyprland, river,
	// labwc, Wayfire; not GNOME Shell or KWin).
	ForeignToplevel bool
	// IdleNotifier: ext_idle_notifier_v1 and a seat, which the
	// IdleWatcher needs (wlroots compositors and KWin).
	IdleNotifier bool
}

// Probe connects to display (WAYLAND_DISPLAY: a name under XDG_RUNTIME_DIR
// or an absolute path), reads the globals the compositor offers and
// disconnects. It is bounded by ctx: a compositor that does not answer
// makes it fail when ctx ends.
func Probe(ctx context.Context, display string) (Globals, error) {
	path, err := wire.SocketPath(display, os.Getenv("XDG_RUNTIME_DIR"))
	if err != nil {
		return Globals{}, err
	}
	s, err := connect(ctx, path)
	if err != nil {
		return Globals{}, err
	}
	defer s.close()
	_, manager := s.find(managerInterface)
	_, notifier := s.find(notifierInterface)
	_, seat := s.find(seatInterface)
	return Globals{ForeignToplevel: manager, IdleNotifier: notifier && seat}, nil
}
