package testenv

import (
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"testing"
)

// wlroots is what the wlroots compositors the tests run (sway, labwc)
// share: one running headless in a suite's rootfs as root, like the tests
// that enter the rootfs, its Wayland socket under a fresh XDG_RUNTIME_DIR in
// the host's /tmp, so the test reaches it directly, and the clients it
// started. Methods are not safe for concurrent use.
type wlroots struct {
	Release    Release
	RuntimeDir string // XDG_RUNTIME_DIR of the compositor and its clients
	Display    string // WAYLAND_DISPLAY: the socket's name in RuntimeDir

	r    *Rootfs
	dir  string
	proc *Process
	apps []*Process
}

// newWlroots prepares rel's compositor: its rootfs, checked to ship rel,
// and a directory with an empty runtime directory in it.
func newWlroots(t testing.TB, rel Release) wlroots {
	t.Helper()
	r := NeedSuiteRootfs(t, rel.Suite)
	CheckRelease(t, r, rel)
	dir := r.TempDir(t)
	c := wlroots{Release: rel, r: r, dir: dir, RuntimeDir: filepath.Join(dir, "run")}
	if err := os.Mkdir(c.RuntimeDir, 0o700); err != nil {
		t.Fatal(err)
	}
	return c
}

// headlessEnv is the environment a wlroots compositor runs headless in,
// rendering in software, with no input devices of its own.
func (c *wlroots) headlessEnv() []string {
	return []string{"HOME=" + c.dir, "XDG_RUNTIME_DIR=" + c.RuntimeDir,
		"WLR_BACKENDS=headless", "WLR_RENDERER=pixman", "WLR_LIBINPUT_NO_DEVICES=1"}
}

// start runs argv with env and waits until its Wayland socket is up and
// ready says so too.
func (c *wlroots) start(t testing.TB, env []string, ready func() bool, argv ...string) {
	t.Helper()
	c.proc = c.r.Start(t, c.dir, 0, env, argv...)
	WaitUntil(t, readyTimeout, argv[0]+"'s sockets", func() bool {
		if c.proc.Exited() {
			t.Fatalf("%s exited:\n%s", argv[0], c.proc.Output())
		}
		c.Display = waylandSocket(c.RuntimeDir)
		return c.Display != "" && ready()
	})
}

// waylandSocket is the name of the Wayland socket in dir ("" if none yet).
func waylandSocket(dir string) string {
	names, _ := filepath.Glob(filepath.Join(dir, "wayland-*"))
	for _, n := range names {
		if !strings.HasSuffix(n, ".lock") {
			return filepath.Base(n)
		}
	}
	return ""
}

// clientEnv is the environment of a client of the compositor.
func (c *wlroots) clientEnv() []string {
	return []string{"HOME=" + c.dir, "XDG_RUNTIME_DIR=" + c.RuntimeDir, "WAYLAND_DISPLAY=" + c.Display}
}

// foot opens a foot terminal with app id appID and title title as a client
// with env, and returns a function that sets its title (through an escape
// sequence the terminal's shell prints). It does not wait for the window
// to map.
func (c *wlroots) foot(t testing.TB, env []string, appID, title string) (setTitle func(string)) {
	t.Helper()
	fifo := filepath.Join(c.dir, fmt.Sprintf("title-%d", len(c.apps)))
	if err := mkfifo(fifo); err != nil {
		t.Fatal(err)
	}
	// The shell holds the FIFO open read-write, so writers never block and
	// it never sees end-of-file.
	script := `exec 3<>"$0"; while read -r t <&3; do printf '\033]2;%s\007' "$t"; done`
	p := c.r.Start(t, c.dir, 0, env, "foot", "--app-id="+appID, "--title="+title, "sh", "-c", script, fifo)
	c.apps = append(c.apps, p)
	return func(title string) {
		f, err := os.OpenFile(fifo, os.O_WRONLY, 0)
		if err != nil {
			t.Fatal(err)
		}
		defer f.Close()
		if _, err := f.WriteString(title + "\n"); err != nil {
			t.Fatal(err)
		}
	}
}

// Kill stops the compositor (its clients lose their connection and exit).
func (c *wlroots) Kill() { c.proc.Stop() }

// Output is what the compositor logged so far, for failure messages.
func (c *wlroots) Output() string { return c.proc.Output() }
