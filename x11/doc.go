// Package x11 is antidrift's eyes and hands on an X11 desktop.
//
// The Sensor watches which window is active (EWMH _NET_ACTIVE_WINDOW) and
// what it is called, and reports a service.Window on every change. The Guard
// acts on windows: it iconifies the active window (ICCCM WM_CHANGE_STATE) or
// asks the window manager to activate one (EWMH _NET_ACTIVE_WINDOW client
// message).
//
// Both speak the X protocol directly through github.com/jezek/xgb, each on
// its own connection. Neither polls: the sensor sleeps in the X event queue
// until the window manager or a client changes a property it watches.
package x11
