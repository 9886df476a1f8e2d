package testenv

import (
	"os"
	"path/filepath"
	"testing"
)

// The harness starts a real GNOME Shell of each release out of the
// Overview: a native window gets focus, Eval sees its title change, the
// Screenshot service writes a PNG, a keyboard plugs in, and the pointer
// moves where it is sent without passing the hot corner into the Overview.
func TestGnomeShellFocusesNativeWindows(t *testing.T) {
	EachRelease(t, GnomeReleases, func(t *testing.T, rel Release) {
		g := StartGnomeShellRelease(t, rel)
		w := g.OpenWindow(t, "org.antidrift.TestOne", "first title", "second title")
		title := "global.display.focus_window.get_title()"
		if got := g.EvalString(t, title); got != "first title" {
			t.Fatalf("the focused window's title: got %q, want %q", got, "first title")
		}
		w.NextTitle(t)
		WaitForValue(t, readyTimeout, "the focused window's title", "second title", func() string { return g.EvalString(t, title) })
		png := filepath.Join(t.TempDir(), "desktop.png")
		g.Screenshot(t, png)
		b, err := os.ReadFile(png)
		if err != nil || len(b) < 8 || string(b[1:4]) != "PNG" {
			t.Fatalf("screenshot is not a PNG: %v", err)
		}
		g.AttachKeyboard(t)
		g.MovePointer(t, 640, 400)
		WaitForValue(t, readyTimeout, "the pointer's position", "640,400", func() string {
			return g.EvalString(t, "String(global.get_pointer().slice(0, 2))")
		})
		if got := g.EvalString(t, "String(Main.overview.visible)"); got != "false" {
			t.Fatalf("Main.overview.visible after moving the pointer: got %s, want false (the hot corner opened the Overview)", got)
		}
	})
}
