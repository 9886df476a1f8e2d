package dist

import (
	"crypto/sha256"
	"encoding/base64"
	"encoding/hex"
	"encoding/json"
	"os"
	"os/exec"
	"path/filepath"
	"slices"
	"strings"
	"testing"

	"github.com/antidrift/antidrift/internal/testsupport/testenv"
)

// The browser extension's manifest names the ids the native host's
// manifests allow: Chromium's, derived from the manifest's key as Chromium
// derives it, and Firefox's gecko id.
func TestWebExtensionIdsAreTheOnesTheHostAllows(t *testing.T) {
	var m struct {
		ManifestVersion int    `json:"manifest_version"`
		Key             string `json:"key"`
		Background      struct {
			ServiceWorker string   `json:"service_worker"`
			Scripts       []string `json:"scripts"`
		} `json:"background"`
		Permissions []string `json:"permissions"`
		Settings    struct {
			Gecko struct {
				ID string `json:"id"`
			} `json:"gecko"`
		} `json:"browser_specific_settings"`
	}
	data, err := os.ReadFile("webextension/manifest.json")
	if err != nil {
		t.Fatal(err)
	}
	if err := json.Unmarshal(data, &m); err != nil {
		t.Fatalf("manifest.json: %v", err)
	}
	der, err := base64.StdEncoding.DecodeString(m.Key)
	if err != nil {
		t.Fatalf("the manifest's key: %v", err)
	}
	sum := sha256.Sum256(der)
	var id strings.Builder
	for _, c := range hex.EncodeToString(sum[:16]) {
		id.WriteByte(byte('a' + strings.IndexRune("0123456789abcdef", c)))
	}
	chromium, _ := os.ReadFile("native-messaging/chromium.json.in")
	firefox, _ := os.ReadFile("native-messaging/firefox.json.in")
	if !strings.Contains(string(chromium), "chrome-extension://"+id.String()+"/") {
		t.Errorf("Chromium's host manifest: got no chrome-extension://%s/, want the extension's id allowed", id.String())
	}
	if m.Settings.Gecko.ID == "" || !strings.Contains(string(firefox), `"`+m.Settings.Gecko.ID+`"`) {
		t.Errorf("Firefox's host manifest: got no %q, want the extension's id allowed", m.Settings.Gecko.ID)
	}
	if m.ManifestVersion != 3 || m.Background.ServiceWorker != "background.js" || !slices.Equal(m.Background.Scripts, []string{"background.js"}) {
		t.Errorf("background: got %+v, want one Manifest V3 background.js for both browsers", m)
	}
	for _, p := range []string{"tabs", "nativeMessaging", "storage"} {
		if !slices.Contains(m.Permissions, p) {
			t.Errorf("the manifest's permissions: got %q, want %s among them", m.Permissions, p)
		}
	}
	// Every script parses.
	if _, err := exec.LookPath("node"); err == nil {
		scripts, _ := filepath.Glob("webextension/*.js")
		for _, s := range scripts {
			if out, err := exec.Command("node", "--check", s).CombinedOutput(); err != nil {
				t.Errorf("%s: %v\n%s", s, err, out)
			}
		}
	}
}

// make package-panels packs the extension twice over, the same files: an
// .xpi for Firefox and a .zip for Chromium, byte for byte reproducible.
func TestPackWebExtension(t *testing.T) {
	testenv.Need(t, "zip")
	out := t.TempDir()
	if b, err := exec.Command("../scripts/pack-webextension.sh", out).CombinedOutput(); err != nil {
		t.Fatalf("pack-webextension.sh: %v\n%s", err, b)
	}
	src, _ := filepath.Glob("webextension/*")
	var want []string
	for _, f := range src {
		want = append(want, filepath.Base(f))
	}
	for _, pkg := range []string{"antidrift-browser.xpi", "antidrift-browser.zip"} {
		entries := zipEntries(t, filepath.Join(out, pkg))
		if got := slices.Sorted(mapsKeys(entries)); !slices.Equal(got, slices.Sorted(slices.Values(want))) {
			t.Errorf("%s holds %q, want %q", pkg, got, want)
		}
	}
	again := t.TempDir()
	if b, err := exec.Command("../scripts/pack-webextension.sh", again).CombinedOutput(); err != nil {
		t.Fatalf("pack-webextension.sh: %v\n%s", err, b)
	}
	a, _ := os.ReadFile(filepath.Join(out, "antidrift-browser.xpi"))
	b, _ := os.ReadFile(filepath.Join(again, "antidrift-browser.xpi"))
	if len(a) == 0 || string(a) != string(b) {
		t.Error("two packs of the same sources differ")
	}
}
