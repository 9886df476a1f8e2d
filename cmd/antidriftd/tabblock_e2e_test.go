package main

import (
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/antidrift/antidrift/internal/testsupport/testenv"
)

// longAddress is a distraction whose address is 600 characters long (a
// Japanese Wikipedia article's is, percent-encoded), with a query that must
// never reach antidrift: longer than a site is shown and stored (512).
func longAddress(port int) string {
	head := fmt.Sprintf("http://www.youtube.test:%d/watch/", port)
	query := "?t=SECRET"
	return head + strings.Repeat("%E6%97%A5", (600-len(head)-len(query))/9) + strings.Repeat("x", (600-len(head)-len(query))%9) + query
}

// failShot keeps what the person would have seen when the test fails.
func failShot(t *testing.T, s *swayDesktop, name string) {
	t.Cleanup(func() {
		if t.Failed() {
			t.Logf("antidriftd's log:\n%s", s.d.Output())
			shot := filepath.Join(s.sway.RuntimeDir, name)
			if _, err := s.sway.Run("grim", shot); err == nil {
				if b, err := os.ReadFile(shot); err == nil {
					os.WriteFile(filepath.Join(testenv.ArtifactsDir(t), name), b, 0o644)
				}
			}
		}
	})
}

// rawLog is the raw log of session id.
func rawLog(t *testing.T, s *swayDesktop, id string) string {
	t.Helper()
	b, err := os.ReadFile(filepath.Join(s.d.StateDir, "sessions", id+".jsonl"))
	if err != nil {
		t.Fatal(err)
	}
	return string(b)
}

// Real Chromium on sway: a distracting page whose address is 600
// characters long is blocked in its tab (the extension's page shows, the
// window stays), the block confirmed and recorded as tab_blocked with the
// site cut as stored; nothing of the query anywhere.
func TestChromiumBlocksALongAddressInItsTabOnSway(t *testing.T) {
	s := startSwayDesktop(t, testenv.Stable(testenv.SwayReleases), browserConfig)
	failShot(t, s, "chromium-long-failed.png")
	port := pages(t)
	work, _ := pageURLs(port)
	long := longAddress(port)
	if len(long) != 600 {
		t.Fatalf("the long address: got %d characters, want 600", len(long))
	}
	startChromiumWithExtension(t, s, "", port, work, long)
	s.consent(t, "chromium")
	api := s.d.Session(t)
	s.tab(t, "chromium", 1, "Tabs, not windows #3")
	waitProp(t, s.d, "CurrentSite", "github.test/antidrift/antidrift/pull/3")
	id := startSession(t, api, "review the PR", "approved", 600, "block", "url:github.test/antidrift/*")
	waitProp(t, s.d, "Drift", "on_task")

	s.tab(t, "chromium", 2, "antidrift: back to work")
	waitProp(t, s.d, "CurrentSite", "antidrift:")
	if w := s.front(t, "chromium"); w == nil || !w.Visible || !strings.HasPrefix(w.Name, "antidrift: back to work") {
		t.Fatalf("the browser window after the block: got %+v, want it visible, titled antidrift: back to work", w)
	}
	shot := filepath.Join(s.sway.RuntimeDir, "long-blocked.png")
	if out, err := s.sway.Run("grim", shot); err == nil {
		if b, err := os.ReadFile(shot); err == nil {
			os.WriteFile(filepath.Join(testenv.ArtifactsDir(t), "chromium-long-address-blocked.png"), b, 0o644)
		}
	} else {
		t.Logf("grim: %v %s", err, out)
	}
	// Confirmed: tab_blocked in the raw log, the site as stored (cut, with …).
	testenv.WaitFor(t, wait, "a tab_blocked line in the raw log", func() string { return rawLog(t, s, id) },
		func(log string) bool { return strings.Contains(log, `"tab_blocked"`) })
	log := rawLog(t, s, id)
	if !strings.Contains(log, "www.youtube.test/watch/%E6%97%A5") || !strings.Contains(log, "…") {
		t.Errorf("the raw log: got\n%s\nwant the long site, cut with …", log)
	}
	// Well past the wait for a confirmation: the window was never minimized.
	time.Sleep(3 * time.Second)
	if got := api.Uint32(t, "MinimizeCount"); got != 0 {
		t.Errorf("MinimizeCount after a confirmed block: got %d, want 0", got)
	}
	if w := s.front(t, "chromium"); w == nil || !w.Visible {
		t.Errorf("the browser window 3 s after the block: got %+v, want it in front and visible", w)
	}
	if strings.Contains(log, "SECRET") || strings.Contains(api.String(t, "CurrentSite"), "SECRET") {
		t.Errorf("the query (SECRET) reached antidrift")
	}
}

// Real Chromium on sway with an extension that never confirms a block (a
// build that ignores BlockTab, as an older one would): the daemon minimizes
// the browser window, as for a browser without the extension, and counts
// it; no tab_blocked is recorded.
func TestChromiumUnconfirmedBlockMinimizesOnSway(t *testing.T) {
	s := startSwayDesktop(t, testenv.Stable(testenv.SwayReleases), browserConfig)
	failShot(t, s, "chromium-unconfirmed-failed.png")
	port := pages(t)
	work, distraction := pageURLs(port)
	ext := deafExtension(t)
	startChromiumWith(t, s, "", ext, port, work, distraction)
	s.consent(t, "chromium")
	api := s.d.Session(t)
	s.tab(t, "chromium", 1, "Tabs, not windows #3")
	waitProp(t, s.d, "CurrentSite", "github.test/antidrift/antidrift/pull/3")
	// The editor is work too: once the browser leaves the screen, focus
	// lands there and the drift ends.
	id := startSession(t, api, "review the PR", "approved", 600, "block", "url:github.test/antidrift/*", "Editor")
	waitProp(t, s.d, "Drift", "on_task")

	s.key(t, "-M", "ctrl", "-k", "Next", "-m", "ctrl") // to the distraction
	waitProp(t, s.d, "MinimizeCount", uint32(1))
	testenv.WaitFor(t, wait, "the browser to leave the screen and the editor to have focus", func() swayScreen {
		b, e := s.window(t, "chromium"), s.window(t, "Editor")
		return swayScreen{distractionHidden: b != nil && !b.Visible, editorFocused: e != nil && e.Focused}
	}, func(w swayScreen) bool { return w.distractionHidden && w.editorFocused })
	waitProp(t, s.d, "Drift", "on_task")
	if got := api.Uint32(t, "MinimizeCount"); got != 1 {
		t.Errorf("MinimizeCount with the editor in front: got %d, want 1 (the browser alone)", got)
	}
	if log := rawLog(t, s, id); strings.Contains(log, `"tab_blocked"`) || !strings.Contains(log, `"minimized"`) {
		t.Errorf("the raw log: got\n%s\nwant a minimized line and no tab_blocked", log)
	}
}

// deafExtension is dist/webextension with a background script that ignores
// the daemon's BlockTab (it neither blocks nor confirms).
func deafExtension(t *testing.T) string {
	t.Helper()
	dir := t.TempDir()
	entries, err := os.ReadDir("../../dist/webextension")
	if err != nil {
		t.Fatal(err)
	}
	for _, e := range entries {
		b, err := os.ReadFile(filepath.Join("../../dist/webextension", e.Name()))
		if err != nil {
			t.Fatal(err)
		}
		if e.Name() == "background.js" {
			const order = `if (msg.type === "block") {`
			if !strings.Contains(string(b), order) {
				t.Fatalf("background.js: no %q to make deaf", order)
			}
			b = []byte(strings.Replace(string(b), order, `if (msg.type === "block" && false) {`, 1))
		}
		if err := os.WriteFile(filepath.Join(dir, e.Name()), b, 0o644); err != nil {
			t.Fatal(err)
		}
	}
	return dir
}
