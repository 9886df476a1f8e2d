package installed

import (
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"strings"
	"testing"

	"github.com/antidrift/antidrift/internal/testsupport/testenv"
)

// The link debhelper's default postinst made for every user: the unit
// pulled into each graphical session.
const globalLink = "/etc/systemd/user/graphical-session.target.wants/antidrift.service"

// aptInstall installs the host's deb into the machine with apt, as a
// person would, and returns what apt and the maintainer scripts printed.
func aptInstall(t *testing.T, m *testenv.Machine, deb string, flags ...string) string {
	t.Helper()
	data, err := os.ReadFile(deb)
	if err != nil {
		t.Fatal(err)
	}
	name := "/root/" + filepath.Base(deb)
	m.WriteFile(t, name, data, 0o644, 0)
	argv := append(append([]string{"apt-get", "install", "-y"}, flags...), name)
	out, err := m.Root(2*wait, argv...)
	if err != nil {
		t.Fatalf("%s: %v\n%s", strings.Join(argv, " "), err, out)
	}
	return out
}

// enablingPackage is deb as the packages before #37 were built: a lower
// version, with the maintainer scripts debhelper writes by default
// (testdata/enabling-package, taken from the package of 80db34c), whose
// postinst runs deb-systemd-helper --user enable antidrift.service.
func enablingPackage(t *testing.T, deb string) string {
	t.Helper()
	testenv.Need(t, "dpkg-deb")
	dir := t.TempDir()
	tree := filepath.Join(dir, "tree")
	if out, err := exec.Command("dpkg-deb", "-R", deb, tree).CombinedOutput(); err != nil {
		t.Fatalf("dpkg-deb -R: %v\n%s", err, out)
	}
	for _, script := range []string{"preinst", "postinst", "prerm", "postrm"} {
		os.Remove(filepath.Join(tree, "DEBIAN", script))
		src, err := os.ReadFile(filepath.Join("testdata", "enabling-package", script))
		if os.IsNotExist(err) {
			continue
		} else if err != nil {
			t.Fatal(err)
		}
		if err := os.WriteFile(filepath.Join(tree, "DEBIAN", script), src, 0o755); err != nil {
			t.Fatal(err)
		}
	}
	control := filepath.Join(tree, "DEBIAN", "control")
	raw, err := os.ReadFile(control)
	if err != nil {
		t.Fatal(err)
	}
	raw = regexp.MustCompile(`(?m)^Version: .*$`).ReplaceAll(raw, []byte("Version: 0~0.old"))
	if err := os.WriteFile(control, raw, 0o644); err != nil {
		t.Fatal(err)
	}
	old := filepath.Join(dir, "antidrift-enabling.deb")
	if out, err := exec.Command("dpkg-deb", "--root-owner-group", "-b", tree, old).CombinedOutput(); err != nil {
		t.Fatalf("dpkg-deb -b: %v\n%s", err, out)
	}
	return old
}

// enabled is how the machine sees antidrift.service's enablement: the
// links to it under /etc/systemd/user (for every user), systemctl
// --global is-enabled, and the user manager's own WantedBy= once it has
// reloaded.
type enabled struct{ links, global, wantedBy string }

func enablement(t *testing.T, m *testenv.Machine) enabled {
	t.Helper()
	links, err := m.Root(cmdWait, "find", "/etc/systemd/user", "-name", "antidrift.service")
	if err != nil {
		t.Fatalf("find /etc/systemd/user: %v\n%s", err, links)
	}
	global, _ := m.Root(cmdWait, "systemctl", "--global", "is-enabled", "antidrift.service")
	must(t, m, "systemctl", "--user", "daemon-reload")
	return enabled{strings.TrimSpace(links), strings.TrimSpace(global), unitProp(t, m, "WantedBy")}
}

// saidNothingOfEnabling fails the test if what the package's install
// printed speaks of enabling or of links (a postinst that enables nothing
// has nothing to say about it).
func saidNothingOfEnabling(t *testing.T, what, out string) {
	t.Helper()
	for _, line := range strings.Split(out, "\n") {
		l := strings.ToLower(line)
		if strings.Contains(l, "enabl") || strings.Contains(l, "symlink") || strings.Contains(l, "antidrift.service") {
			t.Errorf("%s printed %q, want nothing about enabling the unit", what, line)
		}
	}
}

// startGraphicalSession starts user 1000's graphical-session.target as a
// desktop session does (its session target binds to it; the target itself
// refuses a manual start), and returns antidrift.service's ActiveState
// once the manager has no job left.
func startGraphicalSession(t *testing.T, m *testenv.Machine) string {
	t.Helper()
	m.WriteFile(t, testenv.MachineHome+"/.config/systemd/user/test-desktop-session.target",
		[]byte("[Unit]\nDescription=a desktop session, as gnome-session's target\nBindsTo=graphical-session.target\nBefore=graphical-session.target\n"),
		0o644, testenv.MachineUID)
	must(t, m, "systemctl", "--user", "daemon-reload")
	must(t, m, "systemctl", "--user", "start", "test-desktop-session.target")
	testenv.WaitForValue(t, wait, "graphical-session.target active, and no job left in user 1000's manager", "active", func() string {
		jobs, _ := m.User(cmdWait, "systemctl", "--user", "list-jobs", "--no-legend")
		state, _ := m.User(cmdWait, "systemctl", "--user", "is-active", "graphical-session.target")
		if strings.TrimSpace(jobs) != "" {
			return "jobs pending: " + strings.TrimSpace(jobs)
		}
		return strings.TrimSpace(state)
	})
	return unitProp(t, m, "ActiveState")
}

// Installing the package starts nothing for anyone: no link under
// /etc/systemd/user, the unit disabled for every user, the user manager
// seeing nothing that would pull it in, and a graphical session that
// starts leaves it inactive. Activation and systemctl --user enable still
// work: TestActivationThroughSystemd.
func TestPackageEnablesNothing(t *testing.T) {
	m := testenv.BootMachine(t, testenv.DBusDaemon)
	deb, _ := debPackage(t)
	out := aptInstall(t, m, deb)
	saidNothingOfEnabling(t, "apt-get install of the package", out)
	if got := enablement(t, m); got != (enabled{"", "disabled", ""}) {
		t.Fatalf("after installing the package: got links %q, systemctl --global is-enabled %q, WantedBy %q; want no link, disabled, nothing",
			got.links, got.global, got.wantedBy)
	}
	// is-enabled says so with its exit status too: 1.
	if got, _ := m.User(cmdWait, "systemctl", "--user", "is-enabled", "antidrift"); strings.TrimSpace(got) != "disabled" {
		t.Fatalf("systemctl --user is-enabled antidrift after installing: got %s, want disabled", got)
	}
	if got := startGraphicalSession(t, m); got != "inactive" {
		t.Fatalf("antidrift.service once a graphical session started: got %s, want inactive (nothing enabled it)", got)
	}
}

// Upgrading from a package that enabled the unit for everyone (every
// package before #37) keeps it enabled, saying nothing about it; and where
// the administrator had disabled it since, it stays disabled.
func TestUpgradeKeepsEnablementAsItWas(t *testing.T) {
	m := testenv.BootMachine(t, testenv.DBusDaemon)
	deb, _ := debPackage(t)
	aptInstall(t, m, enablingPackage(t, deb))
	// What the older package did, seen by the user manager: if this
	// failed, the test would prove nothing about keeping it.
	was := enablement(t, m)
	if was.links != globalLink || was.global != "enabled" || !strings.Contains(was.wantedBy, "graphical-session.target") {
		t.Fatalf("the older package: got links %q, is-enabled %q, WantedBy %q; want %s, enabled, graphical-session.target",
			was.links, was.global, was.wantedBy, globalLink)
	}

	out := aptInstall(t, m, deb)
	if v := must(t, m, "dpkg-query", "-W", "-f", "${Version}", "antidrift"); v == "0~0.old" {
		t.Fatalf("the installed version after the upgrade: got %s, want the current package's", v)
	}
	saidNothingOfEnabling(t, "upgrading to the package", out)
	if got := enablement(t, m); got != was {
		t.Fatalf("after the upgrade: got links %q, is-enabled %q, WantedBy %q; want them as before: %q, %q, %q",
			got.links, got.global, got.wantedBy, was.links, was.global, was.wantedBy)
	}
	if got := startGraphicalSession(t, m); got != "active" {
		t.Fatalf("antidrift.service once a graphical session started, after the upgrade: got %s, want active (still enabled)", got)
	}
	must(t, m, "systemctl", "--user", "stop", "test-desktop-session.target", "graphical-session.target")

	if out, err := m.Root(cmdWait, "systemctl", "--global", "disable", "antidrift.service"); err != nil {
		t.Fatalf("systemctl --global disable: %v\n%s", err, out)
	}
	aptInstall(t, m, deb, "--reinstall")
	if got := enablement(t, m); got != (enabled{"", "disabled", ""}) {
		t.Fatalf("reinstalling after systemctl --global disable: got links %q, is-enabled %q, WantedBy %q; want it left disabled",
			got.links, got.global, got.wantedBy)
	}
}
