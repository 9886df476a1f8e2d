package testenv

import (
	"os"
	"path/filepath"
	"testing"
)

// The harness starts a real GNOME Shell out of the Overview: a native
// window gets focus, Eval sees its title change, and the Screenshot
// service writes a PNG.
func TestGnomeShellFocusesNativeWindows(t *testing.T) {
	g := StartGnomeShell(t)
	w := g.OpenWindow(t, "org.antidrift.TestOne", "first title", "second title")
	title := "global.display.focus_window.get_title()"
	if got := g.EvalString(t, title); got != "first title" {
		t.Fatalf("focused window's title %q", got)
	}
	w.NextTitle(t)
	WaitUntil(t, readyTimeout, "the title to change", func() bool { return g.EvalString(t, title) == "second title" })
	png := filepath.Join(t.TempDir(), "desktop.png")
	g.Screenshot(t, png)
	b, err := os.ReadFile(png)
	if err != nil || len(b) < 8 || string(b[1:4]) != "PNG" {
		t.Fatalf("screenshot is not a PNG: %v", err)
	}
}
