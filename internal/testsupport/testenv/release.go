package testenv

import (
	"strings"
	"testing"
)

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
	// Plasma's applet runs on plasma-workspace, whose versions are KWin's.
	PlasmaReleases = []Release{{"trixie", "plasma", "6.3"}, {"forky", "plasma", "6.7"}}
)

// releasePackages is the Debian package whose version is a desktop's.
var releasePackages = map[string]string{
	"gnome": "gnome-shell", "kwin": "kwin-wayland", "sway": "sway", "labwc": "labwc", "plasma": "plasma-workspace",
	"xfwm4": "xfwm4", "marco": "marco", "muffin": "muffin",
}

// CheckRelease fails the test unless r's suite ships rel's version of its
// desktop, so a subtest's name never claims a version it did not run.
func CheckRelease(t testing.TB, r *Rootfs, rel Release) {
	t.Helper()
	pkg := releasePackages[rel.Desktop]
	out, err := r.Run(0, nil, runTimeout, "dpkg-query", "-W", "-f", "${Version}", pkg)
	if err != nil {
		t.Fatalf("the %s rootfs has no %s: %v\n%s", r.Suite, pkg, err, out)
	}
	if !isVersion(strings.TrimSpace(out), rel.Version) {
		t.Fatalf("the %s rootfs has %s %s, not %s", r.Suite, pkg, strings.TrimSpace(out), rel.Version)
	}
}

// isVersion says whether the Debian version deb (4:6.7.4-1) is upstream's
// version v or a release of it (6.7 is 6.7.4; 1.1 is not 1.10).
func isVersion(deb, v string) bool {
	if i := strings.Index(deb, ":"); i >= 0 {
		deb = deb[i+1:]
	}
	rest, ok := strings.CutPrefix(deb, v)
	return ok && (rest == "" || strings.ContainsRune(".-~+", rune(rest[0])))
}

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
