package testenv

import (
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"
)

// The rootfs is Debian 13, programs in it see only the environment they are
// given, and a file the host writes under /tmp is at the same path inside.
func TestRootfsRunsDebian13WithTheHostsTmp(t *testing.T) {
	r := NeedRootfs(t)
	dir := r.TempDir(t)
	if err := os.WriteFile(filepath.Join(dir, "hello"), []byte("from the host"), 0o644); err != nil {
		t.Fatal(err)
	}
	out, err := r.Run(1000, []string{"GREETING=hi"}, 30*time.Second, "/bin/sh", "-c",
		`. /etc/os-release; echo "$VERSION_CODENAME $(id -u) $GREETING ${HOME:-nohome}"; cat "$0"/hello`, dir)
	if err != nil {
		t.Fatal(err)
	}
	if want := "trixie 1000 hi nohome\nfrom the host"; strings.TrimSpace(out) != want {
		t.Fatalf("inside the rootfs: %q, want %q", out, want)
	}
}
