package testenv

import "testing"

// Release is one desktop at the version one Debian suite ships it: the
// rootfs (scripts/desktop-rootfs.sh SUITE) a test starts it from, and the
// name its subtest carries, so a failure says which desktop people run it
// broke on.
type Release struct {
	Suite   string // the Debian suite whose rootfs has it: trixie, forky, sid
	Desktop string // gnome, kwin, sway, labwc
	Version string // the version as its upstream names a release: "50", "6.7"
}

// String is the subtest's name: forky-gnome-50.
func (r Release) String() string { return r.Suite + "-" + r.Desktop + "-" + r.Version }

// The desktops each suite's rootfs ships, once per version that differs:
// Debian 13 (stable) and testing always, unstable where it has a newer one.
var (
	GnomeReleases = []Release{{"trixie", "gnome", "48"}, {"forky", "gnome", "50"}, {"sid", "gnome", "51"}}
	KWinReleases  = []Release{{"trixie", "kwin", "6.3"}, {"forky", "kwin", "6.7"}}
	SwayReleases  = []Release{{"trixie", "sway", "1.10"}, {"forky", "sway", "1.12"}}
	LabwcReleases = []Release{{"forky", "labwc", "0.20"}}
)

// Stable is the release in Debian 13's rootfs among releases: the one a
// benchmark measures, so figures stay comparable across runs.
func Stable(releases []Release) Release { return releases[0] }

// EachRelease runs test once per release, each as a subtest named by it
// (TestGnomeShellEndToEnd/forky-gnome-50).
func EachRelease(t *testing.T, releases []Release, test func(t *testing.T, rel Release)) {
	t.Helper()
	for _, rel := range releases {
		t.Run(rel.String(), func(t *testing.T) { test(t, rel) })
	}
}
