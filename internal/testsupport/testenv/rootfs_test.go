package testenv

import (
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"
)

// Each suite's rootfs is built from that suite (its apt source names it),
// programs in it see only the environment they are given, and a file the
// host writes under /tmp is at the same path inside.
func TestRootfsRunsItsSuiteWithTheHostsTmp(t *testing.T) {
	for _, suite := range []string{"trixie", "forky", "sid"} {
		t.Run(suite, func(t *testing.T) {
			r := NeedSuiteRootfs(t, suite)
			dir := r.TempDir(t)
			if err := os.WriteFile(filepath.Join(dir, "hello"), []byte("from the host"), 0o644); err != nil {
				t.Fatal(err)
			}
			out, err := r.Run(1000, []string{"GREETING=hi"}, 30*time.Second, "/bin/sh", "-c",
				`set -- "$0" $(cat /etc/apt/sources.list /etc/apt/sources.list.d/* 2>/dev/null); echo "$4 $(id -u) $GREETING ${HOME:-nohome}"; cat "$1"/hello`, dir)
			if err != nil {
				t.Fatal(err)
			}
			if want := suite + " 1000 hi nohome\nfrom the host"; strings.TrimSpace(out) != want {
				t.Fatalf("inside the rootfs: %q, want %q", out, want)
			}
		})
	}
}
