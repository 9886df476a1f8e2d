package main

import (
	"encoding/base64"
	"encoding/json"
	"html"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/antidrift/antidrift/internal/testsupport/testenv"
	"github.com/antidrift/antidrift/persist"
	"github.com/antidrift/antidrift/service"
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
	env := noBus("XDG_DATA_HOME="+data, "XDG_DATA_DIRS="+filepath.Join(t.TempDir(), "none"), "LANG=de_DE.UTF-8", "LC_ALL=", "LC_MESSAGES=", "LANGUAGE=")
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

// A real Firefox: the firefox-esr package's own desktop entry names a
// window of class firefox-esr "Firefox ESR" in the report, and the HTML
// page embeds the package's own 32-pixel icon from hicolor.
func TestReportNamesTheRealFirefox(t *testing.T) {
	testenv.Need(t, "firefox-esr")
	const icon = "/usr/share/icons/hicolor/32x32/apps/firefox-esr.png" // from the firefox-esr package
	png, err := os.ReadFile(icon)
	if err != nil {
		t.Fatalf("firefox-esr is installed but its icon is not: %v", err)
	}
	dir := filepath.Join(t.TempDir(), "state")
	st, _, err := persist.Open(dir)
	if err != nil {
		t.Fatal(err)
	}
	start := time.Now().Add(-3 * time.Hour).Truncate(time.Second)
	if _, err := st.AppendAudit(service.Summary{SessionID: "s1", NextAction: "read the spec", Outcome: service.OutcomeCompleted, Enforcement: service.LevelWarn,
		StartedUnix: start.Unix(), EndedUnix: start.Add(30 * time.Minute).Unix(), TimeboxSecs: 1800,
		Buckets: []service.Bucket{{Class: "firefox-esr", Title: "RFC 9110", Seconds: 1500}, {Class: "XTerm", Title: "make", Seconds: 300}}}); err != nil {
		t.Fatal(err)
	}
	st.Close()
	env := noBus("XDG_DATA_HOME="+t.TempDir(), "XDG_DATA_DIRS=/usr/share", "LANG=C.UTF-8", "LC_ALL=", "LC_MESSAGES=", "LANGUAGE=")
	r := cli(t, env, "report", "--state-dir", dir, "--json")
	var doc struct {
		Windows []map[string]any `json:"windows"`
	}
	if r.code != 0 || json.Unmarshal([]byte(r.stdout), &doc) != nil || len(doc.Windows) == 0 {
		t.Fatalf("report --json: got %v, want exit 0 and windows", r)
	}
	if w := doc.Windows[0]; w["class"] != "firefox-esr" || w["app"] != "Firefox ESR" || w["desktop_id"] != "firefox-esr" || w["icon"] != "firefox-esr" {
		t.Errorf("report --json, the first window: got %v, want class firefox-esr named by the package's entry: app \"Firefox ESR\", desktop_id and icon firefox-esr", w)
	}
	page := cli(t, env, "report", "--state-dir", dir, "--html", "-")
	uri := "data:image/png;base64," + base64.StdEncoding.EncodeToString(png)
	if page.code != 0 || !strings.Contains(html.UnescapeString(page.stdout), `<img class="icon" src="`+uri+`"`) || !strings.Contains(page.stdout, ">Firefox ESR</div>") {
		t.Errorf("report --html -: got exit %d, want the app named Firefox ESR with the package's icon %s embedded as a data: URI", page.code, icon)
	}
}
