// Package wayland is antidrift's eyes, hands and idle on Wayland
// compositors that speak the wlroots protocols (sway, Hyprland, river,
// labwc, Wayfire), and its idle on KWin.
//
// The Sensor follows the compositor's window list
// (zwlr_foreign_toplevel_manager_v1) and reports the activated toplevel:
// its app_id as the class, its title, and an opaque handle. The Guard acts
// on those handles on the Sensor's own connection: it minimizes with
// set_minimized and, on compositors that ignore it, hides the window with
// the compositor's IPC (sway's scratchpad, a Hyprland special workspace);
// it activates with activate. The IdleWatcher waits for
// ext_idle_notifier_v1 to say idled and resumed. Probe says which of these
// interfaces a compositor offers.
//
// The wire protocol is spoken directly (package wire): no Go Wayland
// library is available to this module. Nothing polls: every goroutine
// sleeps in a socket read until the compositor says something, and a
// compositor that goes away, or talks garbage, is reported in words and
// reconnected to with backoff (internal/redial), as the X11 source does.
package wayland
