package main

import (
	"encoding/json"
	"os"
	"path/filepath"
	"strings"
	"testing"
)

// antidrift report names the apps as the desktop does, from the desktop
// entries of the session it runs in: Name[de] under LANG=de_DE.UTF-8,
// beside the class in the JSON, in place of it in the text.
func TestReportNamesAppsByTheirDesktopEntries(t *testing.T) {
	dir := reportFixture(t)
	data := filepath.Join(t.TempDir(), "data")
	if err := os.MkdirAll(filepath.Join(data, "applications"), 0o755); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(filepath.Join(data, "applications", "kitty.desktop"),
		[]byte("[Desktop Entry]\nType=Application\nExec=kitty\nName=kitty\nName[de]=Kitty-Terminal\nIcon=kitty\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	env := noBus("XDG_DATA_HOME="+data, "XDG_DATA_DIRS="+filepath.Join(t.TempDir(), "none"), "LANG=de_DE.UTF-8")
	r := cli(t, env, "report", "--state-dir", dir, "--json")
	if r.code != 0 {
		t.Fatalf("report --json: got %v, want exit 0", r)
	}
	var doc struct {
		Windows []map[string]any `json:"windows"`
	}
	if err := json.Unmarshal([]byte(r.stdout), &doc); err != nil {
		t.Fatal(err)
	}
	named := false
	for _, w := range doc.Windows {
		switch w["class"] {
		case "kitty":
			named = w["app"] == "Kitty-Terminal" && w["desktop_id"] == "kitty"
		default:
			if _, ok := w["app"]; ok {
				t.Errorf("window %v: got app %v, want none (no desktop entry)", w["class"], w["app"])
			}
		}
	}
	if !named {
		t.Errorf("report --json under LANG=de_DE.UTF-8: got windows %v, want kitty with app \"Kitty-Terminal\" and desktop_id \"kitty\"", doc.Windows)
	}
	text := cli(t, env, "report", "--state-dir", dir)
	if text.code != 0 || !strings.Contains(text.stdout, "  Kitty-Terminal ") {
		t.Errorf("report: got %v, want the app named Kitty-Terminal in Top windows", text)
	}
}
