package testenv

import (
	"os"
	"path/filepath"
	"testing"
)

// Labwc is a headless labwc (0.20 from Debian testing: its Release), the
// stacking wlroots compositor, running in a suite's rootfs like Sway. Unlike
// sway it honours the foreign-toplevel protocol's set_minimized, so the
// wlroots source's own minimizing has a compositor to prove it on. Its
// clients are driven through that protocol too (wlrctl), as labwc has no
// IPC of its own.
type Labwc struct {
	wlroots
}

// labwcConfig is labwc's rc.xml: no decorations to get in the way, and a
// new window takes focus as by default.
const labwcConfig = `<?xml version="1.0"?>
<labwc_config>
  <core><decoration>client</decoration></core>
</labwc_config>
`

// StartLabwc starts rel's labwc (one of LabwcReleases) in its suite's
// rootfs and returns once its socket is up. It skips (or fails under
// ANTIDRIFT_E2E=require) like NeedSuiteRootfs.
func StartLabwc(t testing.TB, rel Release) *Labwc {
	t.Helper()
	l := &Labwc{wlroots: newWlroots(t, rel)}
	config := filepath.Join(l.dir, "labwc")
	if err := os.Mkdir(config, 0o755); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(filepath.Join(config, "rc.xml"), []byte(labwcConfig), 0o644); err != nil {
		t.Fatal(err)
	}
	l.start(t, l.headlessEnv(), func() bool { return true }, "labwc", "--config-dir", config)
	return l
}

// Env is the environment of a client of this labwc.
func (l *Labwc) Env() []string { return l.clientEnv() }

// Run runs a short client of this labwc (wlrctl, wtype) in the rootfs.
func (l *Labwc) Run(argv ...string) (string, error) {
	return l.r.Run(0, l.Env(), runTimeout, argv...)
}

// Foot opens a foot terminal with app id appID and title title, and
// returns a function that sets its title. It does not wait for the window
// to map.
func (l *Labwc) Foot(t testing.TB, appID, title string) (setTitle func(string)) {
	t.Helper()
	return l.foot(t, l.Env(), appID, title)
}
