package main

import (
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"strings"
	"testing"

	"github.com/antidrift/antidrift/internal/testsupport/testenv"
)

// desktopEntry writes a .desktop file under dir.
func desktopEntry(t *testing.T, dir, id string, lines ...string) {
	t.Helper()
	writeFile(t, filepath.Join(dir, id+".desktop"), "[Desktop Entry]\nType=Application\nExec=true\n"+strings.Join(lines, "\n")+"\n")
}

// appsDesktop is Xvfb and openbox with a daemon whose XDG_DATA_HOME and
// XDG_DATA_DIRS are the test's, under a German locale; its data dirs hold
// the package's own firefox-esr.desktop (a symlink to it, as Flatpak's
// exports are symlinks).
func appsDesktop(t *testing.T, dataHome string, windows func(x *testenv.Display) uint32) (*testenv.Display, *session) {
	t.Helper()
	testenv.Need(t, "dbus-daemon", "dbus-send", "busctl", "gdbus", "Xvfb", "openbox", "xterm", "xdotool", "xprop", "firefox-esr")
	const firefoxEntry = "/usr/share/applications/firefox-esr.desktop" // from the firefox-esr package
	if _, err := os.Stat(firefoxEntry); err != nil {
		t.Fatalf("firefox-esr is installed but its desktop entry is not: %v", err)
	}
	sysShare := t.TempDir()
	if err := os.MkdirAll(filepath.Join(sysShare, "applications"), 0o755); err != nil {
		t.Fatal(err)
	}
	if err := os.Symlink(firefoxEntry, filepath.Join(sysShare, "applications", "firefox-esr.desktop")); err != nil {
		t.Fatal(err)
	}
	x := testenv.StartX(t)
	first := windows(x)
	x.Activate(t, first)
	s := startDaemon(t, "drift_grace = \"1s\"\n", "DISPLAY="+x.Name, "XDG_DATA_HOME="+dataHome, "XDG_DATA_DIRS="+sysShare,
		"LANG=de_DE.UTF-8", "LC_ALL=", "LC_MESSAGES=", "LANGUAGE=")
	return x, s
}

// A window is shown by its desktop entry's name, localized (Name[de] under
// LANG=de_DE.UTF-8): an entry matched by StartupWMClass, one by a
// Flatpak-style id (org.example.App.desktop for the class
// org.example.App) and by its _GTK_APPLICATION_ID, and Firefox's own entry from the package for a window
// of class firefox-esr. busctl and gdbus read the same properties; an
// app: rule makes a window on task whatever its class; an entry written
// while the daemon runs is seen (inotify).
func TestStatusNamesWindowsByTheirDesktopEntries(t *testing.T) {
	data := t.TempDir()
	apps := filepath.Join(data, "applications")
	desktopEntry(t, apps, "myeditor", "Name=My Editor", "Name[de]=Mein Editor", "Icon=accessories-text-editor", "StartupWMClass=Editor")
	desktopEntry(t, apps, "org.example.App", "Name=Example", "Name[de]=Beispiel", "Icon=org.example.App")
	var flat, browser, editor uint32
	x, s := appsDesktop(t, data, func(x *testenv.Display) uint32 {
		flat = x.XTerm(t, "org.example.App", "example window")
		// a window with Firefox's WM_CLASS class (xterm's instance is
		// "xterm"): matched by the package entry's StartupWMClass
		browser = x.XTerm(t, "firefox-esr", "Mozilla Firefox")
		editor = x.XTerm(t, "Editor", "main.go - editor")
		return editor
	})

	s.waitForStatus(t, "the Editor window named by its entry", map[string]any{"current_class": "Editor", "current_app_id": "myeditor", "current_app_name": "Mein Editor", "current_app_icon": "accessories-text-editor"})
	contains(t, "status", s.ok(t, "status"), "window       Mein Editor: main.go - editor")
	if out, err := s.d.Busctl(t, "get-property", "CurrentAppName"); err != nil || out != `s "Mein Editor"` {
		t.Errorf("busctl get-property CurrentAppName: got %q (%v), want %q", out, err, `s "Mein Editor"`)
	}

	s.ok(t, "start", "write code", "--done-when", "tests pass", "--for", "10m", "--allow", "app:org.example.App.desktop", "--allow", "app:*firefox*", "--enforce", "observe")
	x.Activate(t, flat)
	s.waitForStatus(t, "the Flatpak-style id's window on task by its app: rule", map[string]any{"current_app_id": "org.example.App", "current_app_name": "Beispiel", "drift": "on_task"})
	contains(t, "status", s.ok(t, "status"), "window       Beispiel (org.example.App): example window")
	out, err := s.d.Bus.Run(t, "gdbus", "call", "--session", "--dest", "org.antidrift", "--object-path", "/org/antidrift/Session1",
		"--method", "org.freedesktop.DBus.Properties.Get", "org.antidrift.Session1", "CurrentAppId")
	if want := "(<'org.example.App'>,)"; err != nil || strings.TrimSpace(out) != want {
		t.Errorf("gdbus Get CurrentAppId: got %q (%v), want %s", out, err, want)
	}

	// a window whose WM_CLASS names nothing installed, but whose
	// _GTK_APPLICATION_ID does (GTK sets it for a GApplication)
	gtk := x.XTerm(t, "Unrelated", "gtk window")
	if out, err := x.Run(t, "xprop", "-id", strconv.FormatUint(uint64(gtk), 10), "-f", "_GTK_APPLICATION_ID", "8u", "-set", "_GTK_APPLICATION_ID", "org.example.App"); err != nil {
		t.Fatalf("xprop -set _GTK_APPLICATION_ID: %v\n%s", err, out)
	}
	x.Activate(t, gtk)
	s.waitForStatus(t, "the window named by its GTK application id", map[string]any{"current_class": "Unrelated", "current_app_id": "org.example.App", "drift": "on_task"})

	x.Activate(t, browser)
	s.waitForStatus(t, "the firefox-esr window named by the package's entry, on task by app:*firefox*", map[string]any{"current_class": "firefox-esr", "current_app_id": "firefox-esr", "current_app_name": "Firefox ESR", "drift": "on_task"})
	contains(t, "status", s.ok(t, "status"), "window       Firefox ESR: Mozilla Firefox")

	x.Activate(t, editor)
	s.waitForStatus(t, "drift in the Editor, which no rule allows", map[string]any{"current_app_id": "myeditor", "drift": "drifting"})
	st := s.status(t)
	if reason, _ := st["drift_reason"].(string); !strings.Contains(reason, "Mein Editor") {
		t.Errorf("drift_reason: got %q, want it to name the app (Mein Editor)", reason)
	}
	named := map[string]string{}
	bucketApps, _ := st["bucket_apps"].([]any)
	for _, b := range bucketApps {
		m, _ := b.(map[string]any)
		named[m["class"].(string)] = m["desktop_id"].(string) + "=" + m["name"].(string)
	}
	for class, want := range map[string]string{"Editor": "myeditor=Mein Editor", "org.example.App": "org.example.App=Beispiel", "firefox-esr": "firefox-esr=Firefox ESR"} {
		if named[class] != want {
			t.Errorf("status --json bucket_apps: got %v, want %s for %s", bucketApps, want, class)
		}
	}

	// An entry written now (the directory watched by inotify) names the
	// next window of its class.
	desktopEntry(t, filepath.Join(apps, "later"), "tool", "Name=Later Tool", "StartupWMClass=LaterTool")
	x.Activate(t, x.XTerm(t, "LaterTool", "later"))
	s.waitForStatus(t, "a window of an entry written after the daemon started", map[string]any{"current_class": "LaterTool", "current_app_id": "later-tool", "current_app_name": "Later Tool"})
}

// A real Firefox (the firefox-esr package, on Xvfb) is named by the
// package's own desktop entry: its WM_CLASS is Navigator/firefox-esr.
func TestARealFirefoxIsNamedByItsPackagesEntry(t *testing.T) {
	data := t.TempDir()
	x, s := appsDesktop(t, data, func(x *testenv.Display) uint32 { return x.XTerm(t, "Editor", "main.go - editor") })
	s.waitForStatus(t, "the Editor window", map[string]any{"current_class": "Editor", "current_app_id": ""})

	home := t.TempDir()
	cmd := exec.Command("firefox-esr", "--profile", filepath.Join(home, "profile"), "--new-instance", "--no-remote", "about:blank")
	if err := os.MkdirAll(filepath.Join(home, "profile"), 0o700); err != nil {
		t.Fatal(err)
	}
	cmd.Env = append(x.Env(), "HOME="+home, "MOZ_ENABLE_WAYLAND=0", "WAYLAND_DISPLAY=", "MOZ_CRASHREPORTER_DISABLE=1")
	testenv.StartLogged(t, home, "firefox", cmd)
	var id uint64
	testenv.WaitUntil(t, 3*wait, "Firefox's window (WM_CLASS instance Navigator)", func() bool {
		out, err := x.Run(t, "xdotool", "search", "--onlyvisible", "--classname", "^Navigator$")
		if err != nil {
			return false
		}
		first, _, _ := strings.Cut(strings.TrimSpace(out), "\n")
		id, err = strconv.ParseUint(first, 10, 32)
		return err == nil
	})
	x.Activate(t, uint32(id))
	s.waitForStatus(t, "the Firefox window named by firefox-esr.desktop", map[string]any{"current_class": "firefox-esr", "current_app_id": "firefox-esr", "current_app_name": "Firefox ESR", "current_app_icon": "firefox-esr"})
	contains(t, "status", s.ok(t, "status"), "window       Firefox ESR")
}
