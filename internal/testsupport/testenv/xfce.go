package testenv

import (
	"path/filepath"
	"testing"
)

// The host's xfce4-notifyd and xfconfd (packages xfce4-notifyd, xfconf).
const (
	XfceNotifyd = "/usr/lib/x86_64-linux-gnu/xfce4/notifyd/xfce4-notifyd"
	Xfconfd     = "/usr/lib/x86_64-linux-gnu/xfce4/xfconf/xfconfd"
)

// XfceNotifyd is xfce4-notifyd as the notification server on a private bus
// and display, with xfconfd (org.xfce.Xfconf), where its settings live,
// in a home of its own.
type XfceNotify struct {
	bus     *Bus
	display *Display
	dir     string
	xfconf  *proc
	proc    *proc
}

// StartXfceNotifyd starts xfconfd and xfce4-notifyd on b and d and waits
// until they own org.xfce.Xfconf and org.freedesktop.Notifications.
func StartXfceNotifyd(t testing.TB, b *Bus, d *Display) *XfceNotify {
	t.Helper()
	Need(t, XfceNotifyd, Xfconfd, "xfconf-query")
	x := &XfceNotify{bus: b, display: d, dir: tempDir(t)}
	env := withEnv(d.Env(), x.Env()...)
	x.xfconf = start(t, x.dir, env, nil, Xfconfd)
	b.waitForOwner(t, "xfconfd", "org.xfce.Xfconf", x.xfconf)
	x.proc = start(t, x.dir, env, nil, XfceNotifyd)
	b.waitForOwner(t, "xfce4-notifyd", NotificationsName, x.proc)
	return x
}

// Env is the environment of a client of this xfconfd: its bus and home.
func (x *XfceNotify) Env() []string {
	return []string{
		"DBUS_SESSION_BUS_ADDRESS=" + x.bus.Address,
		"HOME=" + x.dir,
		"XDG_CONFIG_HOME=" + filepath.Join(x.dir, ".config"),
		"XDG_DATA_HOME=" + filepath.Join(x.dir, ".local/share"),
		"XDG_CACHE_HOME=" + filepath.Join(x.dir, ".cache"),
	}
}
