package testenv

import (
	_ "embed"
	"os"
	"path/filepath"
	"syscall"
	"testing"
)

//go:embed testdata/gtkwindow.py
var gtkWindowScript string

// Window is a native Wayland window (GTK 4) with an application id, which
// retitles itself as an application does. KWin and GNOME Shell tests open
// them; sway's use foot.
type Window struct {
	ID     string // the compositor's handle, where the test learnt it (KWin's internalId)
	AppID  string
	titles []string // what NextTitle cycles through
	next   int
	fifo   string
	proc   *Process
}

// startWindow runs testdata/gtkwindow.py inside r as uid with env (which
// names the compositor), titled titles[0]. The caller waits for the
// compositor to show it.
func startWindow(t testing.TB, r *Rootfs, uid int, env []string, appID string, titles ...string) *Window {
	t.Helper()
	dir := r.TempDir(t)
	script := filepath.Join(dir, "window.py")
	if err := os.WriteFile(script, []byte(gtkWindowScript), 0o644); err != nil {
		t.Fatal(err)
	}
	w := &Window{AppID: appID, titles: titles, fifo: filepath.Join(dir, "title")}
	// Any uid the window runs as may open it: the directory is the test's.
	if err := syscall.Mkfifo(w.fifo, 0o666); err != nil {
		t.Fatal(err)
	}
	if err := os.Chmod(w.fifo, 0o666); err != nil { // past the umask
		t.Fatal(err)
	}
	w.proc = r.Start(t, dir, uid, append(env, "GSK_RENDERER=cairo", "GTK_A11Y=none"),
		"python3", script, appID, titles[0], w.fifo)
	return w
}

// exited fails the test if the window's program has ended.
func (w *Window) exited(t testing.TB) {
	t.Helper()
	if w.proc.Exited() {
		t.Fatalf("the %s window exited\n%s", w.AppID, w.proc.Output())
	}
}

// SetTitle makes the window retitle itself.
func (w *Window) SetTitle(t testing.TB, title string) {
	t.Helper()
	f, err := os.OpenFile(w.fifo, os.O_WRONLY, 0)
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	if _, err := f.WriteString(title + "\n"); err != nil {
		t.Fatal(err)
	}
}

// NextTitle moves the window's title on to the next of the titles it was
// opened with.
func (w *Window) NextTitle(t testing.TB) {
	t.Helper()
	w.next = (w.next + 1) % len(w.titles)
	w.SetTitle(t, w.titles[w.next])
}

// Close closes the window (ends its program).
func (w *Window) Close() { w.proc.Stop() }
