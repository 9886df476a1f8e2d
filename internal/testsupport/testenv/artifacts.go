package testenv

import (
	"os"
	"testing"
)

// ArtifactsEnv names the directory where tests leave what a person should
// look at (screenshots of panels, reports, desktops). Unset, they go to the
// test's temp dir and are removed with it.
const ArtifactsEnv = "ANTIDRIFT_ARTIFACTS"

// ArtifactsDir is where a test leaves its artifacts.
func ArtifactsDir(t testing.TB) string {
	t.Helper()
	dir := os.Getenv(ArtifactsEnv)
	if dir == "" {
		return t.TempDir()
	}
	if err := os.MkdirAll(dir, 0o755); err != nil {
		t.Fatal(err)
	}
	return dir
}
