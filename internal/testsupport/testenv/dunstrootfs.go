package testenv

import (
	"os"
	"strings"
	"testing"
)

// DunstRootfsEnv names a directory to take the rootfs dunst from instead
// of the trixie tree: a copy or overlay of that tree with trixie's dunst
// unpacked in it, for running the test before the tree has dunst.
const DunstRootfsEnv = "ANTIDRIFT_DUNST_ROOTFS"

// StartRootfsDunst is StartDunst with Debian 13's dunst (1.12, which has
// pause levels) from the trixie rootfs, managing the host's Xvfb (its
// socket is under /tmp, which the rootfs shares) and serving b, with the
// same dunstrc. dunstctl and the version come from the same tree (Ctl,
// Version). It skips, or fails under ANTIDRIFT_E2E=require, when the tree
// is not built or has no /usr/bin/dunst.
func StartRootfsDunst(t testing.TB, b *Bus, d *Display) *Dunst {
	t.Helper()
	r := NeedSuiteRootfs(t, "trixie")
	if dir := os.Getenv(DunstRootfsEnv); dir != "" {
		r = &Rootfs{Dir: dir, Suite: r.Suite}
	}
	for _, tool := range []string{"/usr/bin/dunst", "/usr/bin/dunstctl", "/usr/bin/dbus-send"} {
		if _, err := os.Stat(r.Dir + tool); err != nil {
			msg := "the " + r.Suite + " rootfs " + r.Dir + " has no " + tool + " (add dunst to its package list in scripts/desktop-rootfs.sh)"
			if os.Getenv(RequireEnv) == "require" {
				t.Fatalf("%s=require but %s", RequireEnv, msg)
			}
			t.Skipf("%s (set %s=require to fail instead of skipping)", msg, RequireEnv)
		}
	}
	if !strings.HasPrefix(b.Address, "unix:path=/tmp/") {
		t.Fatalf("the private bus %s is not under /tmp, so dunst in the rootfs cannot reach it (is TMPDIR set?)", b.Address)
	}
	u := &Dunst{bus: b, display: d, dir: r.TempDir(t), rootfs: r}
	u.configure(t)
	u.launch(t)
	return u
}

// Ctl runs this dunst's own dunstctl (the host's, or the tree's inside
// the rootfs) with args on its bus.
func (u *Dunst) Ctl(t testing.TB, args ...string) (string, error) {
	t.Helper()
	if u.rootfs == nil {
		return u.bus.Run(t, "dunstctl", args...)
	}
	return u.rootfs.Run(0, []string{"DBUS_SESSION_BUS_ADDRESS=" + u.bus.Address}, runTimeout, append([]string{"dunstctl"}, args...)...)
}

// Version is the first line of `dunst --version` of this dunst.
func (u *Dunst) Version(t testing.TB) string {
	t.Helper()
	var out string
	var err error
	if u.rootfs == nil {
		out, err = run(os.Environ(), runTimeout, "dunst", "--version")
	} else {
		out, err = u.rootfs.Run(0, nil, runTimeout, "dunst", "--version")
	}
	if err != nil {
		t.Fatalf("dunst --version: %v\n%s", err, out)
	}
	return strings.TrimSpace(strings.SplitN(out, "\n", 2)[0])
}
