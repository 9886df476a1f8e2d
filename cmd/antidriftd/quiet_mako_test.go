package main

import (
	"os"
	"path/filepath"
	"strings"
	"testing"

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
