package main

import (
	"fmt"
	"net"
	"net/http"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/antidrift/antidrift/internal/testsupport/testenv"
)

// pages serves the sites the browser tests visit, all on 127.0.0.1: the
// browser maps every host name there (--host-resolver-rules), so no request
// leaves the machine. Each page's title is its path.
func pages(t *testing.T) (port int) {
	t.Helper()
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	srv := &http.Server{Handler: http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		title := map[string]string{"/antidrift/antidrift/pull/3": "Tabs, not windows #3", "/watch": "Cats",
			"/clinic/results": "City clinic: HIV test results"}[r.URL.Path]
		if strings.HasPrefix(r.URL.Path, "/watch/") {
			title = "Long cats" // a page with a long address (longAddress)
		}
		if title == "" {
			title = "Page " + r.URL.Path
		}
		fmt.Fprintf(w, "<!doctype html><title>%s</title><h1>%s on %s</h1>", title, title, r.Host)
	})}
	go srv.Serve(ln)
	t.Cleanup(func() { srv.Close() })
	return ln.Addr().(*net.TCPAddr).Port
}

// startChromiumWithExtension runs the host's Chromium on sway as a person
// who installed antidrift would: its extension loaded from dist/webextension
// (--load-extension, as "Load unpacked" does), the native host's manifest in
// the profile's NativeMessagingHosts (~/.config/chromium's, where make
// install-user puts it), on the test's bus.
// home is the person's home directory ("" for a fresh one, returned); a
// second call with the same home hands its command line to the running
// browser, as a person opening another window does.
func startChromiumWithExtension(t *testing.T, s *swayDesktop, home string, port int, urls ...string) (string, *exec.Cmd) {
	t.Helper()
	ext, err := filepath.Abs("../../dist/webextension")
	if err != nil {
		t.Fatal(err)
	}
	return startChromiumWith(t, s, home, ext, port, urls...)
}

// startChromiumWith is startChromiumWithExtension with the unpacked
// extension in ext.
func startChromiumWith(t *testing.T, s *swayDesktop, home, ext string, port int, urls ...string) (string, *exec.Cmd) {
	t.Helper()
	testenv.Need(t, "chromium")
	if home == "" {
		home = t.TempDir()
	}
	profile := filepath.Join(home, ".config", "chromium")
	manifest, err := os.ReadFile("../../dist/native-messaging/chromium.json.in")
	if err != nil {
		t.Fatal(err)
	}
	host := testenv.Binary(t, "antidrift-native-host")
	nmh := filepath.Join(profile, "NativeMessagingHosts")
	if err := os.MkdirAll(nmh, 0o700); err != nil {
		t.Fatal(err)
	}
	filled := strings.ReplaceAll(string(manifest), "@BINDIR@/antidrift-native-host", host)
	if err := os.WriteFile(filepath.Join(nmh, "org.antidrift.native_host.json"), []byte(filled), 0o600); err != nil {
		t.Fatal(err)
	}
	args := []string{"--ozone-platform=wayland", "--no-sandbox", "--disable-gpu", "--no-first-run",
		"--no-default-browser-check", "--disable-background-networking", "--disable-sync", "--disable-component-update",
		"--user-data-dir=" + profile, "--load-extension=" + ext,
		fmt.Sprintf("--host-resolver-rules=MAP * 127.0.0.1:%d", port), "--disable-features=HttpsUpgrades,HttpsFirstBalancedModeAutoEnable",
		"--enable-logging=stderr", "--new-window"}
	cmd := exec.Command("chromium", append(args, urls...)...)
	cmd.Env = append(os.Environ(), s.sway.Env()...)
	cmd.Env = append(cmd.Env, "HOME="+home, "DBUS_SESSION_BUS_ADDRESS="+s.bus.Address)
	testenv.StartLogged(t, home, "chromium", cmd)
	return home, cmd
}

// front is the focused window of appID in sway's tree (a browser may have
// more than one window), or nil.
func (s *swayDesktop) front(t *testing.T, appID string) *swayNode {
	t.Helper()
	return s.find(t, func(n *swayNode) bool { return n.AppID == appID && n.Focused })
}

// key types keys into the focused window (wtype in the rootfs).
func (s *swayDesktop) key(t *testing.T, args ...string) {
	t.Helper()
	// Each wtype is a new virtual keyboard with a keymap of its own: give
	// the browser a moment to take the keymap before the keys (Firefox
	// drops keys that come with it).
	if out, err := s.sway.Run(append([]string{"wtype", "-s", "300"}, args...)...); err != nil {
		t.Fatalf("wtype %v: %v\n%s", args, err, out)
	}
}

// tab brings the tab titled title (the n-th) to the front of the focused
// browser window, as a person does with Ctrl+PageDown, which cycles through
// the tabs in both browsers; once more while the title has not come. (wtype
// types with a keymap of its own, in which the browsers read Ctrl+2 as
// Ctrl+1: the named keys are read alike everywhere.)
func (s *swayDesktop) tab(t *testing.T, appID string, n int, title string) {
	t.Helper()
	pressed := time.Time{}
	api := s.d.Session(t)
	in := func(w current) bool { return w.class == appID && strings.HasPrefix(w.title, title) }
	testenv.WaitFor(t, wait, fmt.Sprintf("tab %d (%s) of %s in front", n, title, appID), func() current {
		// The focused window's title as the daemon has it: the browser may
		// have more than one window in sway's tree.
		w := current{class: api.String(t, "CurrentClass"), title: api.String(t, "CurrentTitle")}
		if !in(w) && time.Since(pressed) > 4*time.Second {
			s.key(t, "-M", "ctrl", "-k", "Next", "-m", "ctrl")
			pressed = time.Now()
		}
		return w
	}, in)
}

// current is the window in front as the daemon has it.
type current struct{ class, title string }

func (w current) String() string { return fmt.Sprintf("%s %q", w.class, w.title) }

// Real Chromium on sway with antidrift's extension: it sends nothing until
// the person agrees on its consent page; then switching tabs changes the
// current site, a url: rule makes one tab on task and the other drift in
// the same window, at block the drifting tab shows the extension's page
// while the window and the work tab stay, and after the session the tab is
// restored; the native host outlives a daemon restart; a forged report of
// a tab not in front changes nothing; an incognito window reports nothing
// and leaves no title;
// the browser closing and coming back connects again.
func TestChromiumTabsOnSway(t *testing.T) {
	s := startSwayDesktop(t, testenv.Stable(testenv.SwayReleases), browserConfig)
	port := pages(t)
	work, distraction := pageURLs(port)
	home, browser := startChromiumWithExtension(t, s, "", port, work, distraction)
	tabScenario(t, s, "chromium")

	// A private (incognito) window reports nothing: no site, whatever it shows.
	// (Chromium hands the command line to the running browser.)
	startChromiumWithExtension(t, s, home, port, "--incognito", "http://www.youtube.test/watch?v=private")
	testenv.WaitFor(t, wait, "an incognito window (Cats…) in front", func() *swayNode { return s.window(t, "chromium") },
		func(w *swayNode) bool { return w != nil && w.Focused && strings.HasPrefix(w.Name, "Cats") })
	time.Sleep(3 * time.Second) // past the wait for a tab report that fits
	api := s.d.Session(t)
	if got := api.String(t, "CurrentSite"); got != "" {
		t.Errorf("CurrentSite of the incognito window: got %q, want none", got)
	}
	// Its extension disowns it: it may be private, and nothing of its title
	// is kept.
	if got := api.String(t, "CurrentTitle"); got != "" {
		t.Errorf("CurrentTitle of the incognito window: got %q, want none", got)
	}
	t.Logf("incognito window %q: SiteReason %q", s.window(t, "chromium").Name, api.String(t, "SiteReason"))

	// The browser closes and comes back: its extension connects again.
	browser.Process.Kill()
	browser.Wait()
	s.waitFocused(t, "Editor")
	startChromiumWithExtension(t, s, home, port, work)
	waitProp(t, s.d, "CurrentSite", "github.test/antidrift/antidrift/pull/3")
}

// browserConfig is the daemon's config in the browser tests: drift at
// once, and YouTube a distraction by its address.
const browserConfig = "drift_grace = \"0s\"\nnudge_repeat = \"10m\"\ndistractions = [\"url:*.youtube.test\"]\n"

// pageURLs are the work tab's and the distraction's addresses, each with a
// query that must never reach antidrift.
func pageURLs(port int) (work, distraction string) {
	return fmt.Sprintf("http://github.test:%d/antidrift/antidrift/pull/3?token=SECRET", port),
		fmt.Sprintf("http://www.youtube.test:%d/watch?v=SECRET", port)
}

// tabScenario is what a person does with the browser appID (its window in
// front, the work tab and the distraction open, the consent page on top):
// agree, switch tabs, start a session, drift, get blocked, go back, end.
func tabScenario(t *testing.T, s *swayDesktop, appID string) {
	t.Helper()
	t.Cleanup(func() {
		if t.Failed() { // what the person would have seen
			t.Logf("antidriftd's log:\n%s", s.d.Output())
			shot := filepath.Join(s.sway.RuntimeDir, "failed.png")
			if _, err := s.sway.Run("grim", shot); err == nil {
				if b, err := os.ReadFile(shot); err == nil {
					os.WriteFile(filepath.Join(testenv.ArtifactsDir(t), appID+"-failed.png"), b, 0o644)
				}
			}
		}
	})
	s.consent(t, appID)
	api := s.d.Session(t)
	s.tab(t, appID, 1, "Tabs, not windows #3")
	waitProp(t, s.d, "CurrentSite", "github.test/antidrift/antidrift/pull/3")
	s.tab(t, appID, 2, "Cats")
	waitProp(t, s.d, "CurrentSite", "www.youtube.test/watch")
	s.tab(t, appID, 1, "Tabs, not windows #3")
	waitProp(t, s.d, "CurrentSite", "github.test/antidrift/antidrift/pull/3")

	// The daemon restarts: the native host tells the new one the page in front.
	s.d.Stop(t)
	s.d.Start(t)
	waitProp(t, s.d, "CurrentSite", "github.test/antidrift/antidrift/pull/3")

	startSession(t, api, "review the PR", "approved", 600, "block", "url:github.test/antidrift/*")
	waitProp(t, s.d, "Drift", "on_task")
	// Another bus client forges a report of the distraction: refused (it
	// is not a native host the browser started), and nothing changes.
	family := map[string]string{"chromium": "chromium", "firefox-esr": "firefox"}[appID]
	if err := s.bus.Dial(t).Object("org.antidrift", "/org/antidrift/Session1").Call("org.antidrift.Evidence1.ReportTab", 0,
		family, int64(1), "http", "www.youtube.test", "/watch", "Cats", false).Err; err == nil || !strings.Contains(err.Error(), "only from antidrift-native-host started by a browser") {
		t.Fatalf("the forged ReportTab: got %v, want it refused: believed only from antidrift-native-host started by a browser", err)
	}
	time.Sleep(500 * time.Millisecond)
	if got, want := (current{api.String(t, "CurrentSite"), api.String(t, "Drift")}), (current{"github.test/antidrift/antidrift/pull/3", "on_task"}); got != want {
		t.Fatalf("CurrentSite and Drift after a forged report: got %v, want %v", got, want)
	}
	s.tab(t, appID, 2, "antidrift: back to work")
	// The drifting tab's page is replaced by the extension's; the window stays.
	waitProp(t, s.d, "CurrentSite", "antidrift:")
	if w := s.front(t, appID); w == nil || !w.Visible || !strings.HasPrefix(w.Name, "antidrift: back to work") {
		t.Fatalf("the browser window after the block: got %+v, want it visible, titled antidrift: back to work", w)
	}
	if got := api.Uint32(t, "MinimizeCount"); got != 0 {
		t.Errorf("MinimizeCount after a tab's block: got %d, want 0 (the window stays)", got)
	}
	shot := filepath.Join(s.sway.RuntimeDir, "blocked.png")
	if out, err := s.sway.Run("grim", shot); err == nil {
		if b, err := os.ReadFile(shot); err == nil {
			os.WriteFile(filepath.Join(testenv.ArtifactsDir(t), appID+"-tab-blocked.png"), b, 0o644)
		}
	} else {
		t.Logf("grim: %v %s", err, out)
	}
	// The work tab is untouched.
	s.tab(t, appID, 1, "Tabs, not windows #3")
	waitProp(t, s.d, "CurrentSite", "github.test/antidrift/antidrift/pull/3")
	waitProp(t, s.d, "Drift", "on_task")

	// After the session the page comes back.
	api.Call(t, "Complete", nil)
	s.tab(t, appID, 2, "Cats")
	waitProp(t, s.d, "CurrentSite", "www.youtube.test/watch")
	if got := api.String(t, "CurrentSite"); strings.Contains(got, "SECRET") {
		t.Errorf("CurrentSite: got %q, want it without the query", got)
	}

}

// consent is the person agreeing on the extension's consent page, which
// opened on install in the browser appID's window: before it nothing is
// reported, after it the extension reports.
func (s *swayDesktop) consent(t *testing.T, appID string) {
	t.Helper()
	s.waitFocused(t, appID)
	api := s.d.Session(t)
	// The consent page opened on install; nothing is reported yet.
	testenv.WaitFor(t, wait, "the consent page in front", func() *swayNode { return s.front(t, appID) },
		func(w *swayNode) bool {
			return w != nil && strings.HasPrefix(w.Name, "antidrift: what this extension sends")
		})
	if got := api.String(t, "SiteReason"); !strings.Contains(got, "no antidrift extension connected") {
		t.Fatalf("SiteReason before consent: got %q, want it to say no antidrift extension connected", got)
	}
	// The agree button has the focus: Return presses it (again, as a person
	// would, while the page is still taking the keyboard).
	pressed := time.Time{}
	testenv.WaitFor(t, wait, "the extension to report once the person agreed (SiteReason without no antidrift extension connected)", func() string {
		if time.Since(pressed) > 3*time.Second {
			s.key(t, "-k", "Return")
			pressed = time.Now()
		}
		return api.String(t, "SiteReason")
	}, func(reason string) bool { return !strings.Contains(reason, "no antidrift extension connected") })
}

// startFirefoxWithExtension runs the host's Firefox ESR on sway as a person
// who installed antidrift would: the unsigned .xpi make package-panels
// packs, in a profile that allows unsigned add-ons (ESR honours
// xpinstall.signatures.required = false), the native host's manifest in
// ~/.mozilla/native-messaging-hosts, on the test's bus. The test's host
// names resolve to 127.0.0.1 (network.dns.localDomains).
func startFirefoxWithExtension(t *testing.T, s *swayDesktop, urls ...string) (home string, cmd *exec.Cmd) {
	t.Helper()
	testenv.Need(t, "firefox-esr", "zip")
	home = t.TempDir()
	manifest, err := os.ReadFile("../../dist/native-messaging/firefox.json.in")
	if err != nil {
		t.Fatal(err)
	}
	nmh := filepath.Join(home, ".mozilla", "native-messaging-hosts")
	if err := os.MkdirAll(nmh, 0o700); err != nil {
		t.Fatal(err)
	}
	filled := strings.ReplaceAll(string(manifest), "@BINDIR@/antidrift-native-host", testenv.Binary(t, "antidrift-native-host"))
	if err := os.WriteFile(filepath.Join(nmh, "org.antidrift.native_host.json"), []byte(filled), 0o600); err != nil {
		t.Fatal(err)
	}
	packed := t.TempDir()
	if out, err := exec.Command("../../scripts/pack-webextension.sh", packed).CombinedOutput(); err != nil {
		t.Fatalf("pack-webextension.sh: %v\n%s", err, out)
	}
	profile := filepath.Join(home, "profile")
	if err := os.MkdirAll(filepath.Join(profile, "extensions"), 0o700); err != nil {
		t.Fatal(err)
	}
	xpi, err := os.ReadFile(filepath.Join(packed, "antidrift-browser.xpi"))
	if err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(filepath.Join(profile, "extensions", "browser@antidrift.github.io.xpi"), xpi, 0o600); err != nil {
		t.Fatal(err)
	}
	prefs := []string{
		`user_pref("xpinstall.signatures.required", false);`,
		`user_pref("extensions.autoDisableScopes", 0);`,
		`user_pref("extensions.enabledScopes", 15);`,
		`user_pref("network.dns.localDomains", "github.test,www.youtube.test");`,
		`user_pref("dom.security.https_first", false);`,
		`user_pref("dom.security.https_only_mode", false);`,
		`user_pref("browser.shell.checkDefaultBrowser", false);`,
		`user_pref("browser.aboutwelcome.enabled", false);`,
		`user_pref("browser.startup.homepage_override.mstone", "ignore");`,
		`user_pref("datareporting.policy.dataSubmissionEnabled", false);`,
		`user_pref("toolkit.telemetry.reportingpolicy.firstRun", false);`,
		`user_pref("app.update.enabled", false);`,
		`user_pref("browser.tabs.warnOnClose", false);`,
	}
	if err := os.WriteFile(filepath.Join(profile, "user.js"), []byte(strings.Join(prefs, "\n")+"\n"), 0o600); err != nil {
		t.Fatal(err)
	}
	cmd = firefoxESR(s, home, append([]string{"--new-instance"}, urls...)...)
	testenv.StartLogged(t, home, "firefox", cmd)
	return home, cmd
}

// firefoxESR is Firefox ESR with the profile in home, on sway and the test's
// bus (where a second one hands its command line to the running one).
func firefoxESR(s *swayDesktop, home string, args ...string) *exec.Cmd {
	cmd := exec.Command("firefox-esr", append([]string{"--profile", filepath.Join(home, "profile")}, args...)...)
	cmd.Env = append(os.Environ(), s.sway.Env()...)
	cmd.Env = append(cmd.Env, "HOME="+home, "DBUS_SESSION_BUS_ADDRESS="+s.bus.Address, "MOZ_ENABLE_WAYLAND=1", "MOZ_CRASHREPORTER_DISABLE=1")
	return cmd
}

// Real Firefox ESR on sway with antidrift's unsigned .xpi, as
// TestChromiumTabsOnSway does with Chromium; then a private window, in a
// session: nothing of its title or its page is anywhere — CurrentTitle,
// the buckets, the raw log, the sealed audit line — only that it was
// Firefox.
func TestFirefoxTabsOnSway(t *testing.T) {
	s := startSwayDesktop(t, testenv.Stable(testenv.SwayReleases), browserConfig)
	port := pages(t)
	work, distraction := pageURLs(port)
	home, _ := startFirefoxWithExtension(t, s, work, distraction)
	tabScenario(t, s, "firefox-esr")

	api := s.d.Session(t)
	var hash string
	api.Call(t, "End", nil, &hash)
	id := startSession(t, api, "read the results", "read", 600, "observe", "firefox-esr")
	// A private window: Firefox runs no extension there unless the person
	// allows it (the extension says none of its windows is in front), and
	// titles it "… — Mozilla Firefox Private Browsing".
	const secret = "clinic"
	if out, err := firefoxESR(s, home, "--private-window", fmt.Sprintf("http://www.youtube.test:%d/clinic/results?patient=SECRET", port)).CombinedOutput(); err != nil {
		t.Fatalf("firefox-esr --private-window: %v\n%s", err, out)
	}
	testenv.WaitFor(t, wait, "the private window in front (its sway title naming the clinic)", func() *swayNode { return s.front(t, "firefox-esr") },
		func(w *swayNode) bool {
			return w != nil && strings.Contains(w.Name, "City clinic") && strings.Contains(w.Name, "Private Browsing")
		})
	testenv.WaitFor(t, wait, "the daemon to see a private Firefox window (SiteReason)", func() string { return api.String(t, "SiteReason") },
		func(reason string) bool { return strings.Contains(reason, "a private Firefox window") })
	time.Sleep(3 * time.Second) // past the wait for a tab report that fits, and accounted a while
	if got := (current{api.String(t, "CurrentClass"), api.String(t, "CurrentTitle")}); got != (current{"firefox-esr", ""}) {
		t.Errorf("the private window: got %v, want firefox-esr with no title", got)
	}
	if got := api.String(t, "CurrentSite"); got != "" {
		t.Errorf("CurrentSite of the private window: got %q, want none", got)
	}
	for _, b := range buckets(t, s.d) {
		if strings.Contains(b.Title, secret) || strings.Contains(b.Title, "Private Browsing") {
			t.Errorf("Buckets: got %+v, want nothing of the private window's title", b)
		}
	}
	completeAndEnd(t, api)
	for _, f := range []string{filepath.Join("sessions", id+".jsonl"), "audit.jsonl"} {
		b, err := os.ReadFile(filepath.Join(s.d.StateDir, f))
		if err != nil {
			t.Fatal(err)
		}
		if strings.Contains(string(b), secret) || strings.Contains(string(b), "SECRET") {
			t.Errorf("%s: got\n%s\nwant nothing of the private window's title or page", f, b)
		}
		if !strings.Contains(string(b), "firefox-esr") {
			t.Errorf("%s: got\n%s\nwant the private window accounted as firefox-esr", f, b)
		}
	}
}
