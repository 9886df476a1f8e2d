package dist

import (
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/antidrift/antidrift/internal/testsupport/testenv"
)

// The GNOME indicator and the Plasma applet share one module of display
// rules (format.mjs); gjs runs its checks inside the Debian 13 rootfs,
// where GNOME Shell 48's gjs is.
func TestPanelFormatting(t *testing.T) {
	r := testenv.NeedRootfs(t)
	dir := r.TempDir(t) // the checkout may be outside /tmp, which the rootfs sees
	for _, f := range []string{"testdata/format_check.mjs", "gnome-shell/antidrift@antidrift.github.io/format.mjs"} {
		data, err := os.ReadFile(f)
		if err != nil {
			t.Fatal(err)
		}
		dst := filepath.Join(dir, f)
		if err := os.MkdirAll(filepath.Dir(dst), 0o755); err != nil {
			t.Fatal(err)
		}
		if err := os.WriteFile(dst, data, 0o644); err != nil {
			t.Fatal(err)
		}
	}
	out, err := r.Run(0, []string{"HOME=" + dir}, time.Minute, "gjs", "-m", filepath.Join(dir, "testdata", "format_check.mjs"))
	if err != nil {
		t.Fatal(err)
	}
	if strings.TrimSpace(out) != "" {
		t.Fatalf("format.mjs checks: got\n%s\nwant no output", out)
	}
}
