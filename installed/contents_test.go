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
// GNOME extension with its schema, the Plasma applet, the changelog and
// the copyright file.
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
		"/usr/bin/antidriftd":                                                           "-rwxr-xr-x",
		"/usr/bin/antidrift":                                                            "-rwxr-xr-x",
		"/usr/lib/systemd/user/antidrift.service":                                       "-rw-r--r--",
		"/usr/share/dbus-1/services/org.antidrift.service":                              "-rw-r--r--",
		"/usr/share/dbus-1/interfaces/org.antidrift.Session1.xml":                       "-rw-r--r--",
		"/usr/share/bash-completion/completions/antidrift":                              "-rw-r--r--",
		"/usr/share/zsh/site-functions/_antidrift":                                      "-rw-r--r--",
		"/usr/share/fish/vendor_completions.d/antidrift.fish":                           "-rw-r--r--",
		"/usr/share/gnome-shell/extensions/antidrift@antidrift.github.io/metadata.json": "-rw-r--r--",
		"/usr/share/glib-2.0/schemas/org.gnome.shell.extensions.antidrift.gschema.xml":  "-rw-r--r--",
		"/usr/share/plasma/plasmoids/org.antidrift.panel/metadata.json":                 "-rw-r--r--",
		"/usr/share/doc/antidrift/changelog.gz":                                         "-rw-r--r--",
		"/usr/share/doc/antidrift/copyright":                                            "-rw-r--r--",
	}
	for path, mode := range want {
		if got, ok := files[path]; !ok || got != mode {
			t.Errorf("%s: got mode %q, want %q", path, got, mode)
		}
	}
	for path := range files {
		if strings.Contains(path, "gschemas.compiled") || strings.HasPrefix(path, "/usr/local") {
			t.Errorf("the package ships %s", path)
		}
	}
}

// lintian finds no error in the package and its source, Go's static
// binaries included (lintian knows a source that build-depends on Go).
func TestLintianFindsNoError(t *testing.T) {
	testenv.Need(t, "lintian")
	deb, _ := debPackage(t)
	changes, _ := filepath.Glob(filepath.Join(filepath.Dir(deb), "deb", "*.changes"))
	if len(changes) != 1 {
		t.Skipf("no .changes next to %s to check the source with", deb)
	}
	out, err := exec.Command("lintian", "--fail-on", "error", changes[0]).CombinedOutput()
	if err != nil {
		t.Fatalf("lintian: %v\n%s", err, out)
	}
	t.Logf("lintian:\n%s", out)
}
