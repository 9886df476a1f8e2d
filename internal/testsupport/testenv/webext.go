package testenv

import (
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"
)

// NeedWebExt returns the path of Mozilla's web-ext, installed from npm into
// a cache by scripts/web-ext.sh. It skips the test, naming why, when it is
// not installed; with ANTIDRIFT_E2E=require it fails instead. make test-deps
// installs it.
func NeedWebExt(t testing.TB) string {
	t.Helper()
	Need(t, "node")
	out, err := exec.Command(filepath.Join(scriptsDir(), "web-ext.sh"), "--path").CombinedOutput()
	why := strings.TrimSpace(string(out))
	if err != nil {
		if os.Getenv(RequireEnv) == "require" {
			t.Fatalf("%s=require but %s", RequireEnv, why)
		}
		t.Skipf("%s (set %s=require to fail instead of skipping)", why, RequireEnv)
	}
	return why
}
