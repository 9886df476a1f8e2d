package main

import (
	"encoding/json"
	"strings"
	"testing"
	"time"

	"github.com/godbus/dbus/v5"

	"github.com/antidrift/antidrift/internal/inert"
	"github.com/antidrift/antidrift/internal/testsupport/hostile"
)

func TestAppLabel(t *testing.T) {
	for _, c := range []struct{ name, class, want string }{
		{"", "Editor", "Editor"},
		{"Firefox ESR", "firefox-esr", "Firefox ESR"},
		{"XTerm", "XTerm", "XTerm"},
		{"Files", "org.gnome.Nautilus", "Files (org.gnome.Nautilus)"},
		{"GNU Emacs", "Emacs", "GNU Emacs"},
		{"IntelliJ IDEA", "jetbrains-idea", "IntelliJ IDEA (jetbrains-idea)"},
		{"Name only", "", "Name only"},
	} {
		if got := appLabel(c.name, c.class); got != c.want {
			t.Errorf("appLabel(%q, %q) = %q, want %q", c.name, c.class, got, c.want)
		}
	}
}

// An app's name is text from outside (a .desktop file anyone can write):
// status and status --follow show it inert, and --json exact.
func TestAppNamesAreShownInert(t *testing.T) {
	now := time.Now()
	v := dbus.MakeVariant
	for _, h := range hostile.Texts {
		s := decodeStatus(map[string]dbus.Variant{
			"State": v("active"), "NextAction": v("write"), "SuccessCondition": v("done"), "Drift": v("on_task"),
			"CurrentClass": v("evil-app"), "CurrentTitle": v("a title"), "EvidenceAvailable": v(true),
			"Deadline": v(now.Add(10 * time.Minute).Unix()), "TimeboxSeconds": v(uint64(1500)),
			"CurrentAppId": v("evil-app"), "CurrentAppName": v(h.Text), "CurrentAppIcon": v("evil"),
			"Buckets":    v([]bucket{{"evil-app", "a title", 600}, {"Editor", "main.go", 60}}),
			"BucketApps": v([]bucketApp{{"evil-app", "evil-app", h.Text, "evil"}}),
		})
		shown := prefix(inert.Terminal(h.Text), 15)
		for view, out := range map[string]string{
			"status":          statusText(s, now, textOpts{}),
			"status --follow": statusLine("text", s, now),
		} {
			if err := hostile.CheckTerminal(out); err != nil {
				t.Errorf("%s: %s: got %q, want it inert: %v", h.Name, view, out, err)
			}
			if !strings.Contains(out, shown) {
				t.Errorf("%s: %s: got\n%s\nwant it to show the app's name %q", h.Name, view, out, shown)
			}
		}
		if text := statusText(s, now, textOpts{}); strings.Count(text, shown) < 2 {
			t.Errorf("%s: status: got\n%s\nwant the name on the window line and in the chart", h.Name, text)
		}
		raw, err := json.Marshal(s.jsonObject())
		if err != nil {
			t.Fatal(err)
		}
		var back struct {
			Name       string `json:"current_app_name"`
			ID         string `json:"current_app_id"`
			BucketApps []struct {
				Class, Name string
				DesktopID   string `json:"desktop_id"`
			} `json:"bucket_apps"`
		}
		if err := json.Unmarshal(raw, &back); err != nil {
			t.Fatal(err)
		}
		if back.Name != h.Text || back.ID != "evil-app" || len(back.BucketApps) != 1 || back.BucketApps[0].Name != h.Text || back.BucketApps[0].DesktopID != "evil-app" {
			t.Errorf("%s: --json: got %s, want the name exact", h.Name, raw)
		}
	}
}
