package main

import (
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/antidrift/antidrift/internal/testsupport/testenv"
)

// makoConfig defines the do-not-disturb mode as mako's manual suggests.
const makoConfig = "[mode=do-not-disturb]\ninvisible=1\n"

// Do Not Disturb on mako (sway 1.12 and mako from the testing rootfs):
// the do-not-disturb mode the person's config defines is on while a quiet
// session is active and off after; a mako killed mid-session is put in it
// again; a config without the mode is said plainly.
func TestQuietSessionMako(t *testing.T) {
	rel := testenv.SwayReleases[len(testenv.SwayReleases)-1]
	testenv.Need(t, "dbus-daemon", "busctl")
	sway := testenv.StartSwayRelease(t, rel)
	bus := testenv.StartBus(t)
	mako := sway.StartMako(t, bus, makoConfig)
	if err := os.MkdirAll(filepath.Join(mako.ConfigHome, "antidrift"), 0o755); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(filepath.Join(mako.ConfigHome, "antidrift", "config.toml"), []byte("quiet = true\nidle_after = \"1h\"\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	waitMode := func(want string) {
		t.Helper()
		testenv.WaitForValue(t, wait, "makoctl mode", want, func() string { return mako.Modes(t) })
	}
	waitMode("default")
	d := testenv.StartDaemon(t, bus, filepath.Join(t.TempDir(), "state"), "XDG_CONFIG_HOME="+mako.ConfigHome)
	s := d.Session(t)
	startSession(t, s, "write code", "tests pass", 3600, "warn")
	waitMode("default\ndo-not-disturb")

	mako.Kill9(t)
	mako.Start(t)
	waitMode("default\ndo-not-disturb")

	s.Call(t, "Complete", nil)
	waitMode("default")
	var hash string
	s.Call(t, "End", nil, &hash)

	// A config without the mode: nothing is changed, and the session says so.
	if err := os.WriteFile(filepath.Join(mako.ConfigHome, "mako", "config"), []byte("default-timeout=0\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	startSession(t, s, "write more", "tests pass", 3600, "warn")
	testenv.WaitFor(t, wait, "QuietNote to say mako cannot be silenced", func() string { return s.String(t, "QuietNote") },
		func(n string) bool { return strings.Contains(n, "cannot silence mako") })
	if got := mako.Modes(t); got != "default" {
		t.Fatalf("makoctl mode without a do-not-disturb mode in the config: got %q, want default", got)
	}
}

// makoNudgeConfig is a person's do-not-disturb mode that lets critical
// notifications through, as docs/quiet.md says; other apps' notifications
// are drawn magenta and critical ones green, so a screenshot tells them
// apart.
const makoNudgeConfig = `default-timeout=0
background-color=#ff00ff
border-size=0

[urgency=critical]
background-color=#00ff00

[mode=do-not-disturb]
invisible=1

[mode=do-not-disturb urgency=critical]
invisible=0
`

// colours counts the pixels of a screenshot of sway's output that are
// exactly magenta (another app's notification) and green (a critical one).
func colours(t *testing.T, sway *testenv.Sway, name string) (magenta, green int) {
	t.Helper()
	shot := filepath.Join(sway.RuntimeDir, name)
	if out, err := sway.Run("grim", shot); err != nil {
		t.Fatalf("grim: %v\n%s", err, out)
	}
	if b, err := os.ReadFile(shot); err == nil {
		os.WriteFile(filepath.Join(testenv.ArtifactsDir(t), name), b, 0o644)
	}
	img := testenv.DecodePNG(t, shot)
	for y := img.Bounds().Min.Y; y < img.Bounds().Max.Y; y++ {
		for x := img.Bounds().Min.X; x < img.Bounds().Max.X; x++ {
			r, g, b, _ := img.At(x, y).RGBA()
			switch {
			case r == 0xffff && g == 0 && b == 0xffff:
				magenta++
			case r == 0 && g == 0xffff && b == 0:
				green++
			}
		}
	}
	return magenta, green
}

// antidrift's own nudge on mako (sway 1.12 and mako from the testing
// rootfs) during a quiet session, with the config docs/quiet.md gives: in
// the do-not-disturb mode another app's notification is not drawn, while
// antidrift's (critical) nudge is — seen on a screenshot of the output.
func TestQuietNudgeOnMako(t *testing.T) {
	rel := testenv.SwayReleases[len(testenv.SwayReleases)-1]
	testenv.Need(t, "dbus-daemon", "busctl", "dbus-monitor", "notify-send")
	sway := testenv.StartSwayRelease(t, rel)
	sway.Foot(t, "Distraction", "cat videos")
	sway.Foot(t, "Editor", "main.go - editor")
	bus := testenv.StartBus(t)
	mako := sway.StartMako(t, bus, makoNudgeConfig)
	if err := os.MkdirAll(filepath.Join(mako.ConfigHome, "antidrift"), 0o755); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(filepath.Join(mako.ConfigHome, "antidrift", "config.toml"), []byte(driftConfig+"quiet = true\nidle_after = \"1h\"\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	d := testenv.StartDaemon(t, bus, filepath.Join(t.TempDir(), "state"), append(sway.Env(), "XDG_CONFIG_HOME="+mako.ConfigHome)...)
	// Both windows are up in either order: focus the editor until the daemon sees it.
	testenv.WaitFor(t, wait, "the daemon to see the Editor focused", func() string {
		sway.Run("swaymsg", "[app_id=Editor]", "focus")
		return d.Session(t).String(t, "CurrentClass")
	}, func(c string) bool { return c == "Editor" })
	mon := testenv.StartMonitor(t, bus, "type='method_call',interface='org.freedesktop.Notifications',member='Notify'")
	s := d.Session(t)
	startSession(t, s, "write code", "tests pass", 600, "warn", "Editor")
	testenv.WaitForValue(t, wait, "makoctl mode", "default\ndo-not-disturb", func() string { return mako.Modes(t) })

	if _, err := bus.Run(t, "notify-send", "Chat", "someone wrote"); err != nil {
		t.Fatal(err)
	}
	mon.WaitFor(t, "someone wrote", wait)
	// mako has it (it draws nothing for it); a moment for a drawing that must not come.
	time.Sleep(time.Second)
	if m, g := colours(t, sway, "mako-quiet-other-app.png"); m != 0 || g != 0 {
		t.Fatalf("the screen with another app's notification in do-not-disturb: got %d magenta and %d green pixels, want none", m, g)
	}

	sway.Msg(t, "[app_id=Distraction]", "focus")
	waitProp(t, d, "Drift", "drifting")
	mon.WaitFor(t, "Drifting: Distraction", wait)
	c := testenv.WaitFor(t, wait, "antidrift's nudge drawn by mako (green pixels)", func() [2]int {
		m, g := colours(t, sway, "mako-quiet-nudge.png")
		return [2]int{m, g}
	}, func(c [2]int) bool { return c[1] > 0 })
	if c[0] != 0 {
		t.Fatalf("the screen with antidrift's nudge in do-not-disturb: got %d magenta pixels (the other app's notification), want none", c[0])
	}

	// The session over, the mode is off and mako draws the one it held.
	s.Call(t, "Complete", nil)
	testenv.WaitForValue(t, wait, "makoctl mode", "default", func() string { return mako.Modes(t) })
	testenv.WaitFor(t, wait, "the other app's notification drawn after the session (magenta pixels)", func() int {
		m, _ := colours(t, sway, "mako-after.png")
		return m
	}, func(m int) bool { return m > 0 })
}
