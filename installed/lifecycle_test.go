package installed

import (
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"

	"github.com/antidrift/antidrift/internal/testsupport/testenv"
)

// stateSums is the sha256 of every file in the user's antidrift state
// directory: state, raw session logs, the audit chain.
func stateSums(t *testing.T, m *testenv.Machine) string {
	t.Helper()
	out, err := m.Root(cmdWait, "sh", "-c", "cd "+testenv.MachineHome+"/.local/state/antidrift && find . -type f -exec sha256sum {} + | sort -k2")
	if err != nil || !strings.Contains(out, "audit.jsonl") {
		t.Fatalf("the state directory: %v\n%s", err, out)
	}
	return out
}

// upgradeOf is deb repacked with a higher version: the same files, as the
// next release would replace them.
func upgradeOf(t *testing.T, deb string) string {
	t.Helper()
	testenv.Need(t, "dpkg-deb")
	dir := t.TempDir()
	tree := filepath.Join(dir, "tree")
	if out, err := exec.Command("dpkg-deb", "-R", deb, tree).CombinedOutput(); err != nil {
		t.Fatalf("dpkg-deb -R: %v\n%s", err, out)
	}
	control := filepath.Join(tree, "DEBIAN", "control")
	raw, err := os.ReadFile(control)
	if err != nil {
		t.Fatal(err)
	}
	lines := strings.Split(string(raw), "\n")
	for i, l := range lines {
		if strings.HasPrefix(l, "Version: ") {
			lines[i] = l + "+upgrade1"
		}
	}
	if err := os.WriteFile(control, []byte(strings.Join(lines, "\n")), 0o644); err != nil {
		t.Fatal(err)
	}
	next := filepath.Join(dir, "antidrift-upgrade.deb")
	if out, err := exec.Command("dpkg-deb", "--root-owner-group", "-b", tree, next).CombinedOutput(); err != nil {
		t.Fatalf("dpkg-deb -b: %v\n%s", err, out)
	}
	return next
}

// Upgrading the package while a session runs keeps the session (also once
// the new daemon runs); apt remove and apt purge leave the user's state,
// raw logs and audit chain exactly as they were.
func TestUpgradeRemovePurgeKeepTheUsersData(t *testing.T) {
	forEachBus(t, func(t *testing.T, m *testenv.Machine) {
		deb, _ := debPackage(t)
		startSession(t, m)
		session(t, m, "call", "Complete")
		session(t, m, "call", "End")
		id := startSession(t, m)

		next := upgradeOf(t, deb)
		data, err := os.ReadFile(next)
		if err != nil {
			t.Fatal(err)
		}
		m.WriteFile(t, "/root/antidrift-upgrade.deb", data, 0o644, 0)
		if out, err := m.Root(2*wait, "apt-get", "install", "-y", "/root/antidrift-upgrade.deb"); err != nil {
			t.Fatalf("upgrading: %v\n%s", err, out)
		}
		if v := must(t, m, "dpkg-query", "-W", "-f", "${Version}", "antidrift"); !strings.HasSuffix(v, "+upgrade1") {
			t.Fatalf("the installed version after the upgrade: got %s, want one ending +upgrade1", v)
		}
		keeps := func(when string) {
			t.Helper()
			if got := prop[string](t, m, "SessionId"); got != id {
				t.Fatalf("SessionId %s: got %q, want %q", when, got, id)
			}
			if got := prop[string](t, m, "State"); got != "active" {
				t.Fatalf("State %s: got %q, want %q", when, got, "active")
			}
		}
		keeps("after the upgrade")
		must(t, m, "systemctl", "--user", "restart", "antidrift")
		keeps("with the upgraded daemon")

		must(t, m, "antidrift", "complete")
		must(t, m, "antidrift", "end")
		before := stateSums(t, m)
		for _, verb := range []string{"remove", "purge"} {
			if out, err := m.Root(2*wait, "apt-get", verb, "-y", "antidrift"); err != nil {
				t.Fatalf("apt-get %s: %v\n%s", verb, err, out)
			}
			if after := stateSums(t, m); after != before {
				t.Fatalf("the user's state after apt-get %s: got\n%s\nwant it unchanged:\n%s", verb, after, before)
			}
		}
		if _, err := m.Root(cmdWait, "test", "-e", "/usr/bin/antidriftd"); err == nil {
			t.Fatalf("/usr/bin/antidriftd after purge: got it still there, want it gone")
		}
	})
}
