package x11

import (
	"errors"
	"fmt"
	"io"
	"log/slog"
	"strconv"
	"strings"
	"unicode/utf8"

	"github.com/jezek/xgb"
	"github.com/jezek/xgb/xproto"

	"github.com/antidrift/antidrift/service"
)

// maxTitleLongs bounds how much of a title is read, in 32-bit units (16 KiB).
const maxTitleLongs = 4096

// Reasons a person reads when evidence is unavailable.
const (
	reasonNoDisplay = "no X display: DISPLAY is not set (on Wayland, antidrift asks the compositor instead: the wlroots, kwin and gnome-shell evidence sources)"
	reasonNoEWMH    = "the window manager does not publish _NET_ACTIVE_WINDOW"
)

func init() {
	// xgb logs straight to stderr through its own package-level logger
	// ("A read error is unrecoverable" whenever the X server goes away).
	// Those events are reported by us in words; keep xgb's chatter at debug.
	xgb.Logger.SetOutput(debugWriter{})
	xgb.Logger.SetFlags(0)
}

// debugWriter forwards xgb's log lines to slog's default logger at debug.
type debugWriter struct{}

func (debugWriter) Write(p []byte) (int, error) {
	slog.Default().Debug("xgb: "+strings.TrimSpace(string(p)), "component", "x11")
	return len(p), nil
}

// conn is one X connection and what both the sensor and the guard need from
// it: the root window of the default screen and a few interned atoms.
type conn struct {
	x    *xgb.Conn
	root xproto.Window

	netActiveWindow xproto.Atom
	netWMName       xproto.Atom
	wmChangeState   xproto.Atom
	compoundText    xproto.Atom // the type of a WM_NAME Xlib encoded
	gtkAppID        xproto.Atom // _GTK_APPLICATION_ID: a GApplication's id
}

// dial connects to display and interns the atoms. It blocks for as long as
// the server takes to answer the handshake: callers that need a bound run it
// in a goroutine.
func dial(display string) (*conn, error) {
	x, err := xgb.NewConnDisplay(display)
	if err != nil {
		return nil, err
	}
	setup := xproto.Setup(x)
	if x.DefaultScreen < 0 || x.DefaultScreen >= len(setup.Roots) {
		x.Close()
		return nil, fmt.Errorf("display %s has no screen %d", display, x.DefaultScreen)
	}
	c := &conn{x: x, root: setup.Roots[x.DefaultScreen].Root}

	// Send all InternAtom requests before waiting: one round trip, not four.
	want := []struct {
		name string
		dst  *xproto.Atom
	}{
		{"_NET_ACTIVE_WINDOW", &c.netActiveWindow},
		{"_NET_WM_NAME", &c.netWMName},
		{"WM_CHANGE_STATE", &c.wmChangeState},
		{"COMPOUND_TEXT", &c.compoundText},
		{"_GTK_APPLICATION_ID", &c.gtkAppID},
	}
	cookies := make([]xproto.InternAtomCookie, len(want))
	for i, w := range want {
		cookies[i] = xproto.InternAtom(x, false, uint16(len(w.name)), w.name)
	}
	for i, ck := range cookies {
		r, err := ck.Reply()
		if err == nil && r == nil {
			err = io.EOF
		}
		if err != nil {
			x.Close()
			return nil, fmt.Errorf("interning %s: %w", want[i].name, err)
		}
		*want[i].dst = r.Atom
	}
	return c, nil
}

// activeWindow reads the root window's _NET_ACTIVE_WINDOW. ok is false when
// the property is absent (no EWMH window manager, or it has not started yet).
func (c *conn) activeWindow() (id xproto.Window, ok bool, err error) {
	r, err := xproto.GetProperty(c.x, false, c.root, c.netActiveWindow,
		xproto.GetPropertyTypeAny, 0, 1).Reply()
	if err == nil && r == nil {
		err = io.EOF
	}
	if err != nil {
		return 0, false, err
	}
	if r.Format != 32 || len(r.Value) < 4 {
		return 0, false, nil
	}
	return xproto.Window(xgb.Get32(r.Value)), true, nil
}

// describe reads a window's WM_CLASS, title and GTK application id. A
// window that no longer exists yields an error for which isBadWindow is
// true.
func (c *conn) describe(id xproto.Window) (service.Window, error) {
	// Four requests in flight at once; the replies come back in order.
	class := xproto.GetProperty(c.x, false, id, xproto.AtomWmClass, xproto.GetPropertyTypeAny, 0, 256)
	netName := xproto.GetProperty(c.x, false, id, c.netWMName, xproto.GetPropertyTypeAny, 0, maxTitleLongs)
	name := xproto.GetProperty(c.x, false, id, xproto.AtomWmName, xproto.GetPropertyTypeAny, 0, maxTitleLongs)
	gtkID := xproto.GetProperty(c.x, false, id, c.gtkAppID, xproto.GetPropertyTypeAny, 0, 64)

	var r [4]*xproto.GetPropertyReply
	for i, ck := range []xproto.GetPropertyCookie{class, netName, name, gtkID} {
		reply, err := ck.Reply()
		if err == nil && reply == nil {
			err = io.EOF
		}
		if err != nil {
			return service.Window{}, err
		}
		if reply.Format == 8 { // else absent, or not a string
			r[i] = reply
		}
	}

	w := service.Window{ID: handle(id), Available: true}
	if r[0] != nil {
		// "instance\0class\0"
		parts := strings.SplitN(strings.TrimRight(c.text(r[0]), "\x00"), "\x00", 3)
		w.Instance = parts[0]
		if len(parts) > 1 {
			w.Class = parts[1]
		}
	}
	if r[1] != nil {
		w.Title = c.text(r[1]) // _NET_WM_NAME, UTF8_STRING
	}
	if w.Title == "" && r[2] != nil {
		w.Title = c.text(r[2]) // WM_NAME, the ICCCM fallback
	}
	if r[3] != nil {
		w.AppID = strings.TrimRight(c.text(r[3]), "\x00") // UTF8_STRING, 256 bytes at most
	}
	return w, nil
}

// text decodes a string property of any type: COMPOUND_TEXT as Xlib wrote
// it (compoundText), the rest as text does.
func (c *conn) text(r *xproto.GetPropertyReply) string {
	if r.Type == c.compoundText {
		return compoundText(r.Value)
	}
	return text(r)
}

// text decodes a STRING or UTF8_STRING property. ICCCM says STRING is
// Latin-1, but many clients (xdotool among them) store UTF-8 bytes typed
// STRING; bytes that are valid UTF-8 are taken as UTF-8, others as Latin-1.
// Anything else (UTF8_STRING) is taken as UTF-8.
func text(r *xproto.GetPropertyReply) string {
	if r.Type == xproto.AtomString && !utf8.Valid(r.Value) {
		rs := make([]rune, len(r.Value))
		for i, b := range r.Value {
			rs[i] = rune(b)
		}
		return string(rs)
	}
	return strings.ToValidUTF8(string(r.Value), string(utf8.RuneError))
}

// sendToRoot sends a 32-bit client message about window to the root window,
// the way EWMH and ICCCM ask clients to talk to the window manager, and waits
// until the server has processed it so an error surfaces here.
func (c *conn) sendToRoot(window xproto.Window, typ xproto.Atom, data [5]uint32) error {
	ev := xproto.ClientMessageEvent{
		Format: 32,
		Window: window,
		Type:   typ,
		Data:   xproto.ClientMessageDataUnionData32New(data[:]),
	}
	const mask = xproto.EventMaskSubstructureRedirect | xproto.EventMaskSubstructureNotify
	// Checked + Check forces a GetInputFocus round trip.
	return xproto.SendEventChecked(c.x, false, c.root, mask, string(ev.Bytes())).Check()
}

// isBadWindow reports whether err is the X server's BadWindow.
func isBadWindow(err error) bool {
	var we xproto.WindowError
	return errors.As(err, &we)
}

// isConnLost reports whether err means the connection itself is gone (as
// opposed to a protocol error such as BadWindow on a healthy connection).
func isConnLost(err error) bool {
	return errors.Is(err, io.EOF)
}

func unavailable(reason string) service.Window {
	return service.Window{Reason: reason}
}

// handle is the opaque service.Window.ID of an X window: its id in hex, as
// xprop and xdotool print it.
func handle(id xproto.Window) string {
	return "0x" + strconv.FormatUint(uint64(id), 16)
}

// parseHandle reads back a handle made by handle. Handles of other evidence
// sources (a Wayland toplevel, a KWin window) are refused, not guessed at.
func parseHandle(h string) (xproto.Window, error) {
	hex, ok := strings.CutPrefix(h, "0x")
	id, err := strconv.ParseUint(hex, 16, 32)
	if !ok || err != nil || id == 0 {
		return 0, fmt.Errorf("x11: %q is not an X window handle", h)
	}
	return xproto.Window(id), nil
}
