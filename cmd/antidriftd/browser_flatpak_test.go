package main

import (
	"fmt"
	"net"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/antidrift/antidrift/internal/testsupport/testenv"
)

// nmProxy is the xdg-native-messaging-proxy as Debian installs it, and its
// name on the session bus.
const (
	nmProxy     = "/usr/libexec/xdg-native-messaging-proxy"
	nmProxyName = "org.freedesktop.NativeMessagingProxy"
)

// nmProxyPref is the Firefox preference that makes it start native hosts
// through xdg-native-messaging-proxy (0: never, 1: always, 2: inside a
// sandbox), docs/browsers.md.
const nmProxyPref = "widget.use-xdg-desktop-portal.native-messaging-proxy"

// A Flatpak Firefox reaches antidrift's host-installed native host through
// xdg-native-messaging-proxy: real Firefox 157 or later (Debian unstable's)
// with the proxy path forced by its preference, the real proxy from the
// same release, started by D-Bus activation on Firefox's first call as on a
// desktop (nothing enables it), and a home of Firefox's own that holds
// no native-messaging manifest, as Flatpak gives it (~/.var/app/…). The
// host's manifest is where make install-user puts it, in the person's home
// the proxy runs with. The extension, loaded as a person tries it on a
// release Firefox (about:debugging's temporary load, here over Marionette),
// reports the tab in front, after consent, through the proxy and the host
// to a real daemon on X; switching tabs changes the site. The native host
// running is the proxy's child, not Firefox's.
func TestFlatpakFirefoxReachesTheHostThroughTheProxy(t *testing.T) {
	testenv.Need(t, "Xvfb", "openbox", "xdotool", "zip")
	r := testenv.NeedSuiteRootfs(t, "sid")
	out, err := r.Run(0, nil, time.Minute, "firefox", "--version")
	m := regexp.MustCompile(`Firefox (\d+)\.`).FindStringSubmatch(out)
	if err != nil || m == nil {
		t.Fatalf("firefox --version in the sid rootfs: %v %q", err, out)
	}
	if v, _ := strconv.Atoi(m[1]); v < 157 {
		t.Fatalf("the sid rootfs's Firefox: got %s, want 157 or later (the first with the proxy)", strings.TrimSpace(out))
	}
	if _, err := os.Stat(filepath.Join(r.Dir, nmProxy)); err != nil {
		t.Fatalf("the sid rootfs's xdg-native-messaging-proxy: %v", err)
	}
	t.Logf("%s, xdg-native-messaging-proxy in the sid rootfs", strings.TrimSpace(out))

	x := testenv.StartX(t)
	bus := testenv.StartBus(t)
	// The person opted in to believing a host the proxy starts
	// (docs/browsers.md, step 6); TestTabReportsAreBelievedOnlyFromTheBrowsersOwnHost
	// shows that without it such a host is refused.
	d := testenv.StartDaemon(t, bus, filepath.Join(t.TempDir(), "state"), "DISPLAY="+x.Name,
		"XDG_CONFIG_HOME="+configHome(t, "flatpak_browsers = true\n"))
	port := pages(t)
	work, distraction := pageURLs(port)

	// The host: antidrift installed as make install-user installs it, the
	// native host's manifest in ~/.mozilla/native-messaging-hosts, and the
	// proxy running in that home on the session bus.
	home := r.TempDir(t)
	nmh := filepath.Join(home, ".mozilla", "native-messaging-hosts")
	if err := os.MkdirAll(nmh, 0o755); err != nil {
		t.Fatal(err)
	}
	manifest, err := os.ReadFile("../../dist/native-messaging/firefox.json.in")
	if err != nil {
		t.Fatal(err)
	}
	host := testenv.Binary(t, "antidrift-native-host")
	filled := strings.ReplaceAll(string(manifest), "@BINDIR@/antidrift-native-host", host)
	if err := os.WriteFile(filepath.Join(nmh, "org.antidrift.native_host.json"), []byte(filled), 0o644); err != nil {
		t.Fatal(err)
	}
	// The proxy is not running: D-Bus starts it on Firefox's first call,
	// as Debian's org.freedesktop.NativeMessagingProxy.service does on a
	// desktop (here its Exec= enters the rootfs first).
	proxyLog := filepath.Join(r.TempDir(t), "xdg-native-messaging-proxy.log")
	wrapper := filepath.Join(r.TempDir(t), "xdg-native-messaging-proxy")
	r.Script(t, wrapper, proxyLog, 0, []string{"HOME=" + home, "DBUS_SESSION_BUS_ADDRESS=$DBUS_STARTER_ADDRESS"}, nmProxy)
	activation := fmt.Sprintf("[D-BUS Service]\nName=%s\nExec=%s\n", nmProxyName, wrapper)
	if err := os.WriteFile(filepath.Join(bus.ServiceDir, nmProxyName+".service"), []byte(activation), 0o644); err != nil {
		t.Fatal(err)
	}
	if pid := bus.OwnerPID(t, nmProxyName); pid != 0 {
		t.Fatalf("%s before Firefox asked for it: got pid %d, want no owner", nmProxyName, pid)
	}
	proxyOutput := func() string { b, _ := os.ReadFile(proxyLog); return string(b) }

	// The sandbox: Firefox with a home of its own, no manifest in it (nor
	// in the rootfs's /usr/lib/mozilla/native-messaging-hosts), the proxy
	// path forced, and Marionette to load the extension on.
	if _, err := os.Stat(filepath.Join(r.Dir, "usr/lib/mozilla/native-messaging-hosts/org.antidrift.native_host.json")); err == nil {
		t.Fatal("the sid rootfs has antidrift's native host manifest in /usr/lib/mozilla: Firefox could start the host without the proxy")
	}
	sandbox := r.TempDir(t)
	profile := filepath.Join(sandbox, "profile")
	if err := os.MkdirAll(profile, 0o700); err != nil {
		t.Fatal(err)
	}
	marionette := freePort(t)
	prefs := []string{
		fmt.Sprintf(`user_pref(%q, 1);`, nmProxyPref),
		fmt.Sprintf(`user_pref("marionette.port", %d);`, marionette),
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
	runtime := r.TempDir(t)
	os.Chmod(runtime, 0o700)
	ff := r.Start(t, sandbox, 0, []string{"HOME=" + sandbox, "DISPLAY=" + x.Name, "DBUS_SESSION_BUS_ADDRESS=" + bus.Address,
		"XDG_RUNTIME_DIR=" + runtime, "MOZ_CRASHREPORTER_DISABLE=1", "NO_AT_BRIDGE=1"},
		"firefox", "--marionette", "--no-remote", "--profile", profile, work, distraction)
	t.Cleanup(func() {
		if t.Failed() {
			t.Logf("firefox:\n%s", ff.Output())
			t.Logf("xdg-native-messaging-proxy:\n%s", proxyOutput())
			t.Logf("antidriftd:\n%s", d.Output())
		}
	})
	packed := r.TempDir(t)
	if out, err := exec.Command("../../scripts/pack-webextension.sh", packed).CombinedOutput(); err != nil {
		t.Fatalf("pack-webextension.sh: %v\n%s", err, out)
	}
	id := testenv.DialMarionette(t, marionette).InstallTemporaryAddon(t, filepath.Join(packed, "antidrift-browser.xpi"))
	if id != "browser@antidrift.github.io" {
		t.Fatalf("Addon:Install: got %q, want browser@antidrift.github.io", id)
	}

	// The consent page opens; nothing is reported before the person
	// agrees. Return presses its button (again, while the page is still
	// taking the keyboard).
	api := d.Session(t)
	testenv.WaitFor(t, time.Minute, "the consent page in front", func() string { return api.String(t, "CurrentTitle") },
		func(title string) bool { return strings.HasPrefix(title, "antidrift: what this extension sends") })
	if got := api.String(t, "SiteReason"); !strings.Contains(got, "no antidrift extension connected") {
		t.Fatalf("SiteReason before consent: got %q, want it to say no antidrift extension connected", got)
	}
	pressed := time.Time{}
	testenv.WaitFor(t, time.Minute, "the extension to report once the person agreed (SiteReason without no antidrift extension connected)", func() string {
		if time.Since(pressed) > 3*time.Second {
			x.Run(t, "xdotool", "key", "Return")
			pressed = time.Now()
		}
		return api.String(t, "SiteReason")
	}, func(reason string) bool { return !strings.Contains(reason, "no antidrift extension connected") })

	// Tab switches, as a person makes them, change the site.
	tab := func(title, site string) {
		t.Helper()
		pressed := time.Time{}
		testenv.WaitFor(t, time.Minute, fmt.Sprintf("the tab %s in front", title), func() string {
			got := api.String(t, "CurrentTitle")
			if !strings.HasPrefix(got, title) && time.Since(pressed) > 4*time.Second {
				x.Run(t, "xdotool", "key", "ctrl+Next")
				pressed = time.Now()
			}
			return got
		}, func(got string) bool { return strings.HasPrefix(got, title) })
		waitProp(t, d, "CurrentSite", site)
	}
	tab("Tabs, not windows #3", "github.test/antidrift/antidrift/pull/3")
	tab("Cats", "www.youtube.test/watch")
	tab("Tabs, not windows #3", "github.test/antidrift/antidrift/pull/3")

	// The host that reported is the proxy's child: Firefox found no
	// manifest and started nothing itself.
	owner := bus.OwnerPID(t, nmProxyName)
	if hosts := children(t, owner, "antidrift-nativ"); len(hosts) != 1 {
		t.Errorf("antidrift-native-host processes started by xdg-native-messaging-proxy (pid %d): got %v, want one", owner, hosts)
	}
	if hosts := children(t, ff.PID(), "antidrift-nativ"); len(hosts) != 0 {
		t.Errorf("antidrift-native-host processes started by Firefox (pid %d): got %v, want none", ff.PID(), hosts)
	}
	if !strings.Contains(proxyOutput(), "Handling Start org.antidrift.native_host (mozilla)") {
		t.Errorf("xdg-native-messaging-proxy's log: got\n%s\nwant it to have started org.antidrift.native_host", proxyOutput())
	}
}

// freePort is a TCP port on 127.0.0.1 that nothing listens on now.
func freePort(t *testing.T) int {
	t.Helper()
	l, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	defer l.Close()
	return l.Addr().(*net.TCPAddr).Port
}

// children are the pids of parent's children whose command name (comm,
// at most 15 bytes) is name.
func children(t *testing.T, parent int, name string) []int {
	t.Helper()
	entries, err := os.ReadDir("/proc")
	if err != nil {
		t.Fatal(err)
	}
	var pids []int
	for _, e := range entries {
		pid, err := strconv.Atoi(e.Name())
		if err != nil {
			continue
		}
		b, err := os.ReadFile(fmt.Sprintf("/proc/%d/status", pid))
		if err != nil {
			continue
		}
		n := regexp.MustCompile(`(?m)^Name:\s+(.*)$`).FindSubmatch(b)
		pp := regexp.MustCompile(`(?m)^PPid:\s+(\d+)$`).FindSubmatch(b)
		if n != nil && pp != nil && string(n[1]) == name && string(pp[1]) == strconv.Itoa(parent) {
			pids = append(pids, pid)
		}
	}
	return pids
}
