package testenv

import (
	"os/exec"
	"strings"
	"testing"
)

// The X11 window managers the X11 source is proven on: openbox from the
// host (Debian 12), and those of the X11 desktops people run, from Debian
// 13's rootfs, each managing the host's Xvfb (its socket is under /tmp,
// which the rootfs shares): xfwm4 (XFCE 4.20), marco (MATE) and muffin
// (Cinnamon, Linux Mint's desktop).
var XWMReleases = []Release{
	{HostSuite, "openbox", "3.6"},
	{"trixie", "xfwm4", "4.20"},
	{"trixie", "marco", "1.26"},
	{"trixie", "muffin", "6.4"},
}

// HostSuite is the suite of the machine the tests run on, Debian 12: a
// Release of it runs from the host, not from a rootfs.
const HostSuite = "bookworm"

// xwmCommands is how each window manager is started: no compositing
// (Xvfb has no GPU; nothing here needs it) and no session manager. xfwm4
// reads its settings from xfconfd, which it reaches over a session bus
// (started for it, xfconfd activated on it) and exits without.
var xwmCommands = map[string][]string{
	"xfwm4":  {"dbus-run-session", "--", "xfwm4", "--compositor=off", "--sm-client-disable"},
	"marco":  {"marco", "--no-composite", "--sm-disable"},
	"muffin": {"muffin", "--sm-disable"},
}

// rootfsWM is a window manager from a rootfs, run by StartXRelease.
type rootfsWM struct {
	rel Release
	r   *Rootfs
}

// StartXRelease is StartX with rel's window manager (one of XWMReleases)
// in openbox's place. It skips (or fails under ANTIDRIFT_E2E=require) like
// NeedSuiteRootfs when rel's rootfs is not built.
func StartXRelease(t testing.TB, rel Release) *Display {
	t.Helper()
	if rel.Suite == HostSuite {
		Need(t, "openbox")
		out, err := exec.Command("dpkg-query", "-W", "-f", "${Version}", rel.Desktop).Output()
		if err != nil || !isVersion(strings.TrimSpace(string(out)), rel.Version) {
			t.Fatalf("the host has %s %q, not %s (%v)", rel.Desktop, out, rel.Version, err)
		}
		return StartX(t)
	}
	r := NeedSuiteRootfs(t, rel.Suite)
	CheckRelease(t, r, rel)
	d := startX(t, &rootfsWM{rel: rel, r: r})
	// The window manager managing the display is the one asked for: it
	// names itself on its _NET_SUPPORTING_WM_CHECK window.
	_, check, _ := strings.Cut(d.must(t, "xprop", "-root", "-notype", "_NET_SUPPORTING_WM_CHECK"), "#")
	name := d.must(t, "xprop", "-id", strings.TrimSpace(check), "-notype", "_NET_WM_NAME")
	if !strings.Contains(strings.ToLower(name), rel.Desktop) {
		t.Fatalf("the window manager on %s is %q, not %s", d.Name, name, rel.Desktop)
	}
	return d
}

// start runs the window manager on d, as root in the rootfs with a home of
// its own and settings in memory (GSettings) or defaults (xfconf, with no
// session bus to ask).
func (w *rootfsWM) start(t testing.TB, d *Display) *proc {
	t.Helper()
	home := w.r.TempDir(t)
	env := []string{"DISPLAY=" + d.Name, "HOME=" + home, "XDG_CONFIG_HOME=" + home + "/.config",
		"XDG_CACHE_HOME=" + home + "/.cache", "XDG_RUNTIME_DIR=" + home, "GSETTINGS_BACKEND=memory", "LANG=C.UTF-8",
		"XDG_SESSION_TYPE=x11"} // muffin refuses to start in a session of no known type
	return w.r.Start(t, home, 0, env, xwmCommands[w.rel.Desktop]...).p
}
