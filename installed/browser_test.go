package installed

import (
	"os/exec"
	"strings"
	"testing"

	"github.com/antidrift/antidrift/internal/testsupport/testenv"
)

// The package carries the browser extension where a person adds it from
// (/usr/share/antidrift: the folder Chromium's "Load unpacked" takes, and
// the Firefox .xpi), and suggests xdg-native-messaging-proxy, through which
// a Flatpak Firefox starts the native host it installs (docs/browsers.md).
func TestPackageShipsTheBrowserExtension(t *testing.T) {
	testenv.Need(t, "dpkg-deb")
	deb, _ := debPackage(t)
	out, err := exec.Command("dpkg-deb", "--contents", deb).Output()
	if err != nil {
		t.Fatalf("dpkg-deb --contents: %v", err)
	}
	for _, want := range []string{"./usr/share/antidrift/browser/manifest.json", "./usr/share/antidrift/browser/background.js", "./usr/share/antidrift/antidrift-browser.xpi"} {
		if !strings.Contains(string(out), " "+want+"\n") {
			t.Errorf("the package: got no %s, want the browser extension there", want)
		}
	}
	suggests, err := exec.Command("dpkg-deb", "-f", deb, "Suggests").Output()
	if err != nil {
		t.Fatalf("dpkg-deb -f Suggests: %v", err)
	}
	if !strings.Contains(string(suggests), "xdg-native-messaging-proxy") {
		t.Errorf("the package's Suggests: got %q, want xdg-native-messaging-proxy among them", strings.TrimSpace(string(suggests)))
	}
}
