package dist

import (
	"encoding/json"
	"os"
	"path/filepath"
	"regexp"
	"testing"
	"time"

	"github.com/antidrift/antidrift/internal/testsupport/testenv"
	"github.com/antidrift/antidrift/service"
)

// Classes a program may choose that spell something else as a rule.
var patternClasses = []string{
	"*", "*:*", "Fire?ox", "[A-Z]*", `back\slash`, `ends in \`, "a:b", "Term:*GitHub*",
	" padded ", "\u3000wide\u00a0", "Firefox", "org.gnome.Nautilus", "日本語",
}

// The GNOME start dialog offers the running applications as chips and
// sends each one's window class as an allowlist entry. The class is the
// program's choice: a program whose class is "*" must not get every window
// allowed by a chip labelled with its name. format.mjs's literalRule, run
// by gjs (GNOME Shell 48's, in the Debian 13 rootfs), writes each class as
// the daemon's own service.LiteralRule does, and the dialog sends that.
func TestRunningAppChipsAllowTheClassAsItIs(t *testing.T) {
	src, err := os.ReadFile(filepath.Join("gnome-shell", "antidrift@antidrift.github.io", "dialogs.js"))
	if err != nil {
		t.Fatal(err)
	}
	if !regexp.MustCompile(`value:\s*Format\.literalRule\(cls\)`).Match(src) {
		t.Errorf("dialogs.js: got no value: Format.literalRule(cls), want the running applications' chips to send it")
	}
	r := testenv.NeedRootfs(t)
	dir := r.TempDir(t)
	module, err := os.ReadFile(filepath.Join("gnome-shell", "antidrift@antidrift.github.io", "format.mjs"))
	if err != nil {
		t.Fatal(err)
	}
	classes, _ := json.Marshal(patternClasses)
	// print() writes in the locale's charset: the answer is ASCII, JSON's \u escapes.
	script := "import * as F from './format.mjs';\nprint(JSON.stringify(" + string(classes) + ".map(F.literalRule))" +
		".replace(/[^\\x20-\\x7e]/g, c => '\\\\u' + c.charCodeAt(0).toString(16).padStart(4, '0')));\n"
	for name, data := range map[string][]byte{"format.mjs": module, "check.mjs": []byte(script)} {
		if err := os.WriteFile(filepath.Join(dir, name), data, 0o644); err != nil {
			t.Fatal(err)
		}
	}
	out, err := r.Run(0, []string{"HOME=" + dir}, time.Minute, "gjs", "-m", filepath.Join(dir, "check.mjs"))
	if err != nil {
		t.Fatal(err)
	}
	var rules []string
	if err := json.Unmarshal([]byte(out), &rules); err != nil || len(rules) != len(patternClasses) {
		t.Fatalf("gjs printed %q (%v), want %d rules", out, err, len(patternClasses))
	}
	for i, class := range patternClasses {
		if want := service.LiteralRule(class); rules[i] != want {
			t.Errorf("literalRule(%q) = %q, want the daemon's %q", class, rules[i], want)
		}
		if _, err := service.ParseRule(rules[i]); err != nil {
			t.Errorf("literalRule(%q) = %q, which the daemon refuses: %v", class, rules[i], err)
		}
	}
}
