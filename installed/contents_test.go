package installed

import (
	"os/exec"
	"path/filepath"
	"strings"
	"testing"

	"github.com/antidrift/antidrift/internal/testsupport/testenv"
)

// The package holds what a desktop looks for, where it looks: the
// programs, the user unit, D-Bus activation and interface, completions, the
// GNOME extension with its schema, the Plasma applet, the manual pages
// (compressed, as man-db reads them), the changelog and the copyright file.
func TestPackageContents(t *testing.T) {
	testenv.Need(t, "dpkg-deb")
	deb, _ := debPackage(t)
	out, err := exec.Command("dpkg-deb", "--contents", deb).Output()
	if err != nil {
		t.Fatalf("dpkg-deb --contents: %v", err)
	}
	files := map[string]string{} // path -> mode
	for _, line := range strings.Split(string(out), "\n") {
		f := strings.Fields(line)
		if len(f) >= 6 {
			files[strings.TrimPrefix(f[5], ".")] = f[0]
		}
	}
	want := map[string]string{
		"/usr/bin/antidriftd":            "-rwxr-xr-x",
		"/usr/bin/antidrift":             "-rwxr-xr-x",
		"/usr/bin/antidrift-native-host": "-rwxr-xr-x",
		"/usr/lib/mozilla/native-messaging-hosts/org.antidrift.native_host.json":        "-rw-r--r--",
		"/etc/chromium/native-messaging-hosts/org.antidrift.native_host.json":           "-rw-r--r--",
		"/usr/share/man/man1/antidrift-native-host.1.gz":                                "-rw-r--r--",
		"/usr/lib/systemd/user/antidrift.service":                                       "-rw-r--r--",
		"/usr/share/dbus-1/services/org.antidrift.service":                              "-rw-r--r--",
		"/usr/share/dbus-1/interfaces/org.antidrift.Session1.xml":                       "-rw-r--r--",
		"/usr/share/bash-completion/completions/antidrift":                              "-rw-r--r--",
		"/usr/share/zsh/site-functions/_antidrift":                                      "-rw-r--r--",
		"/usr/share/fish/vendor_completions.d/antidrift.fish":                           "-rw-r--r--",
		"/usr/share/gnome-shell/extensions/antidrift@antidrift.github.io/metadata.json": "-rw-r--r--",
		"/usr/share/glib-2.0/schemas/org.gnome.shell.extensions.antidrift.gschema.xml":  "-rw-r--r--",
		"/usr/share/plasma/plasmoids/org.antidrift.panel/metadata.json":                 "-rw-r--r--",
		"/usr/share/man/man1/antidrift.1.gz":                                            "-rw-r--r--",
		"/usr/share/man/man1/antidriftd.1.gz":                                           "-rw-r--r--",
		"/usr/share/doc/antidrift/changelog.gz":                                         "-rw-r--r--",
		"/usr/share/doc/antidrift/copyright":                                            "-rw-r--r--",
		"/usr/share/antidrift/taskwarrior/on-modify.antidrift":                          "-rwxr-xr-x",
	}
	for path, mode := range want {
		if got, ok := files[path]; !ok || got != mode {
			t.Errorf("%s: got mode %q, want %q", path, got, mode)
		}
	}
	for path := range files {
		if strings.Contains(path, "gschemas.compiled") || strings.HasPrefix(path, "/usr/local") ||
			strings.HasPrefix(path, "/usr/share/man/") && !strings.HasSuffix(path, "/") && !strings.HasSuffix(path, ".gz") {
			t.Errorf("the package: got %s shipped, want it left out", path)
		}
	}
}

// lintian finds no error in the package and its source, Go's static
// binaries included (lintian knows a source that build-depends on Go), and
// has nothing to say about the manual pages: every program has one
// (no-manual-page), and each renders cleanly (groff-message,
// bad-whatis-entry, typo-in-manual-page, ...).
func TestLintianFindsNoError(t *testing.T) {
	testenv.Need(t, "lintian")
	deb, _ := debPackage(t)
	changes, _ := filepath.Glob(filepath.Join(filepath.Dir(deb), "deb", "*.changes"))
	if len(changes) != 1 {
		t.Skipf("no .changes next to %s to check the source with", deb)
	}
	out, err := exec.Command("lintian", "--fail-on", "error", "--display-info", changes[0]).CombinedOutput()
	if err != nil {
		t.Fatalf("lintian: %v\n%s", err, out)
	}
	for _, line := range strings.Split(string(out), "\n") {
		if strings.Contains(line, "manual-page") || strings.Contains(line, "groff-message") || strings.Contains(line, "whatis") {
			t.Errorf("lintian on the manual pages: got %s, want no complaint", line)
		}
	}
	t.Logf("lintian:\n%s", out)
}
