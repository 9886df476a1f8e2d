package testenv

import (
	"os"
	"os/exec"
	"path/filepath"
	"testing"
)

// GermanLocale is the environment of a program that runs in German inside
// the rootfs: LANG=de_DE.UTF-8 and LOCPATH naming the locale, compiled by
// the host's localedef into a directory the rootfs sees (the rootfs has no
// locales but C.UTF-8, and gettext ignores LANGUAGE there). It skips, naming
// the package, without the host's locale sources.
func GermanLocale(t testing.TB) []string {
	t.Helper()
	Need(t, "localedef")
	if _, err := os.Stat("/usr/share/i18n/locales/de_DE"); err != nil {
		const why = "the German locale's source /usr/share/i18n/locales/de_DE is missing; install with: apt-get install locales"
		if os.Getenv(RequireEnv) == "require" {
			t.Fatalf("%s=require but %s", RequireEnv, why)
		}
		t.Skipf("%s (set %s=require to fail instead of skipping)", why, RequireEnv)
	}
	dir := sharedTempDir(t)
	out, err := exec.Command("localedef", "-i", "de_DE", "-f", "UTF-8", filepath.Join(dir, "de_DE.UTF-8")).CombinedOutput()
	if err != nil {
		t.Fatalf("localedef de_DE.UTF-8: %v\n%s", err, out)
	}
	return []string{"LOCPATH=" + dir, "LANG=de_DE.UTF-8"}
}
