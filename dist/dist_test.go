package dist_test

// Tests of what antidrift installs: the files in dist/ agree with each other
// and with the daemon, and `make install` / `make uninstall` (and the -user
// variants) put every file in its place with sane modes and take it away.

import (
	"context"
	"io/fs"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/antidrift/antidrift/dbusapi"
	"github.com/antidrift/antidrift/dist"
	"github.com/antidrift/antidrift/internal/testsupport/testenv"
)

// keys parses an ini-style file (systemd unit, D-Bus service file) into
// section -> key -> values, skipping comments.
func keys(t *testing.T, path string) map[string]map[string][]string {
	t.Helper()
	data, err := os.ReadFile(path)
	if err != nil {
		t.Fatal(err)
	}
	out := map[string]map[string][]string{}
	section := ""
	for n, line := range strings.Split(string(data), "\n") {
		line = strings.TrimSpace(line)
		switch {
		case line == "" || strings.HasPrefix(line, "#") || strings.HasPrefix(line, ";"):
		case strings.HasPrefix(line, "[") && strings.HasSuffix(line, "]"):
			section = line[1 : len(line)-1]
			if out[section] == nil {
				out[section] = map[string][]string{}
			}
		default:
			k, v, ok := strings.Cut(line, "=")
			if !ok || section == "" {
				t.Fatalf("%s:%d: got %q, want a key=value line in a section", path, n+1, line)
			}
			out[section][k] = append(out[section][k], v)
		}
	}
	return out
}

func one(t *testing.T, m map[string]map[string][]string, section, key string) string {
	t.Helper()
	v := m[section][key]
	if len(v) != 1 {
		t.Fatalf("[%s] %s: want exactly one value, got %q", section, key, v)
	}
	return v[0]
}

// TestActivationFileAndUnitAgree: the bus name, the unit name and the binary
// are spelled the same way in the unit, the activation file and the daemon.
func TestActivationFileAndUnitAgree(t *testing.T) {
	act := keys(t, "org.antidrift.service.in")
	unit := keys(t, "antidrift.service.in")
	for _, c := range []struct{ got, want, what string }{
		{one(t, act, "D-BUS Service", "Name"), dbusapi.BusName, "activation file Name="},
		{one(t, act, "D-BUS Service", "Exec"), "@BINDIR@/antidriftd", "activation file Exec="},
		{one(t, act, "D-BUS Service", "SystemdService"), "antidrift.service", "activation file SystemdService="},
		{one(t, unit, "Service", "Type"), "dbus", "unit Type="},
		{one(t, unit, "Service", "BusName"), dbusapi.BusName, "unit BusName="},
		{one(t, unit, "Service", "ExecStart"), "@BINDIR@/antidriftd", "unit ExecStart="},
		{one(t, unit, "Service", "Restart"), "on-failure", "unit Restart="},
		// Type=dbus drops notifications unless told otherwise; STATUS= and
		// the watchdog pings need this.
		{one(t, unit, "Service", "NotifyAccess"), "main", "unit NotifyAccess="},
		{one(t, unit, "Unit", "PartOf"), "graphical-session.target", "unit PartOf="},
		{one(t, unit, "Unit", "After"), "graphical-session.target", "unit After="},
		{one(t, unit, "Install", "WantedBy"), "graphical-session.target", "unit WantedBy="},
	} {
		if c.got != c.want {
			t.Errorf("%s is %q, want %q", c.what, c.got, c.want)
		}
	}
	if v := one(t, unit, "Service", "WatchdogSec"); v == "" || v == "0" {
		t.Errorf("WatchdogSec: got %q, want a timeout (the daemon pings when asked, so the unit should ask)", v)
	}
	// Options that would cut the daemon off from the X socket or the bus.
	for _, k := range []string{"PrivateTmp", "PrivateNetwork", "ProtectHome", "IPAddressDeny"} {
		if v, ok := unit["Service"][k]; ok {
			t.Errorf("%s: got %v, want it unset (it hides the X server or the session bus or cannot work in a user unit)", k, v)
		}
	}
	if af := one(t, unit, "Service", "RestrictAddressFamilies"); !strings.Contains(af, "AF_UNIX") {
		t.Errorf("RestrictAddressFamilies: got %s, want AF_UNIX among them (no bus, no X without it)", af)
	}
}

// installed is one file make install puts in place, relative to DESTDIR.
type installed struct {
	path string
	mode fs.FileMode
	// contains must each appear in the file (for rendered templates).
	contains []string
}

func repoRoot(t *testing.T) string {
	t.Helper()
	root, err := filepath.Abs("..")
	if err != nil {
		t.Fatal(err)
	}
	if _, err := os.Stat(filepath.Join(root, "go.mod")); err != nil {
		t.Fatalf("%s: got no go.mod, want the module root", root)
	}
	return root
}

func needMake(t *testing.T) {
	t.Helper()
	for _, tool := range []string{"make", "install", "sed"} {
		if _, err := exec.LookPath(tool); err != nil {
			if os.Getenv("ANTIDRIFT_E2E") == "require" {
				t.Fatalf("ANTIDRIFT_E2E=require but %s is missing (apt package make / coreutils / sed)", tool)
			}
			t.Skipf("%s is missing (apt package make / coreutils / sed)", tool)
		}
	}
}

// runMake runs make in the repository with the given variables and env.
func runMake(t *testing.T, env []string, args ...string) string {
	t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), 5*time.Minute)
	defer cancel()
	cmd := exec.CommandContext(ctx, "make", append([]string{"--no-print-directory", "-C", repoRoot(t)}, args...)...)
	cmd.Env = env
	out, err := cmd.CombinedOutput()
	if err != nil {
		t.Fatalf("make %s: %v\n%s", strings.Join(args, " "), err, out)
	}
	return string(out)
}

// hasCLI says whether this checkout builds the antidrift CLI (make installs
// it only then).
func hasCLI(t *testing.T) bool {
	m, _ := filepath.Glob(filepath.Join(repoRoot(t), "cmd", "antidrift", "*.go"))
	return len(m) > 0
}

// completions lists the completion files make installs from dist/completions,
// as install paths under share/, for those that exist in this checkout.
func completions(t *testing.T) []string {
	var out []string
	dir := filepath.Join(repoRoot(t), "dist", "completions")
	exists := func(names ...string) bool {
		return slices.ContainsFunc(names, func(n string) bool { _, err := os.Stat(filepath.Join(dir, n)); return err == nil })
	}
	if exists("antidrift.bash", "antidrift") {
		out = append(out, "bash-completion/completions/antidrift")
	}
	if exists("_antidrift", "antidrift.zsh") {
		out = append(out, "zsh/site-functions/_antidrift")
	}
	if exists("antidrift.fish") {
		out = append(out, "fish/vendor_completions.d/antidrift.fish")
	}
	return out
}

// checkTree checks that exactly want is installed under root: every file in
// place with its mode and contents, no other file, no @VAR@ left anywhere.
func checkTree(t *testing.T, root string, want []installed) {
	t.Helper()
	var got []string
	filepath.WalkDir(root, func(p string, d fs.DirEntry, err error) error {
		if err != nil {
			t.Fatal(err)
		}
		if d.IsDir() {
			info, _ := d.Info()
			if p != root && info.Mode().Perm() != 0o755 {
				t.Errorf("directory %s has mode %v, want 0755", p, info.Mode().Perm())
			}
			return nil
		}
		got = append(got, strings.TrimPrefix(p, root))
		return nil
	})
	var paths []string
	for _, w := range want {
		paths = append(paths, w.path)
		info, err := os.Stat(filepath.Join(root, w.path))
		if err != nil {
			t.Errorf("%s: got %v, want it installed", w.path, err)
			continue
		}
		if info.Mode().Perm() != w.mode {
			t.Errorf("%s has mode %v, want %v", w.path, info.Mode().Perm(), w.mode)
		}
		data, _ := os.ReadFile(filepath.Join(root, w.path))
		if w.mode == 0o644 {
			if m := regexp.MustCompile(`@[A-Z_]+@`).Find(data); m != nil {
				t.Errorf("%s: got %s still in it, want every @PLACEHOLDER@ filled in", w.path, m)
			}
		}
		for _, c := range w.contains {
			if !strings.Contains(string(data), c) {
				t.Errorf("%s: got it without %q, want it to contain that", w.path, c)
			}
		}
	}
	slices.Sort(got)
	slices.Sort(paths)
	if !slices.Equal(got, paths) {
		t.Errorf("installed files:\n%s\nwant:\n%s", strings.Join(got, "\n"), strings.Join(paths, "\n"))
	}
}

// noFiles checks that nothing but (empty) directories is left under root.
func noFiles(t *testing.T, root string) {
	t.Helper()
	filepath.WalkDir(root, func(p string, d fs.DirEntry, err error) error {
		if err == nil && !d.IsDir() {
			t.Errorf("after uninstall: got %s left behind, want no files", p)
		}
		return nil
	})
}

// gnomeExtension lists the GNOME Shell extension's files as installed
// under share/: the files of dist/gnome-shell/<uuid>/ (its code and the
// interface XML its proxy reads), its settings schema with the compiled
// form GNOME Shell reads, and its German translation.
func gnomeExtension(t *testing.T) []string {
	t.Helper()
	const uuid = "antidrift@antidrift.github.io"
	entries, err := os.ReadDir(filepath.Join("gnome-shell", uuid))
	if err != nil || len(entries) == 0 {
		t.Fatalf("the GNOME Shell extension: %v", err)
	}
	dir := "gnome-shell/extensions/" + uuid + "/"
	files := []string{dir + "schemas/org.gnome.shell.extensions.antidrift.gschema.xml", dir + "locale/de/LC_MESSAGES/antidrift.mo"}
	if _, err := exec.LookPath("glib-compile-schemas"); err == nil {
		files = append(files, dir+"schemas/gschemas.compiled")
	}
	for _, e := range entries {
		if !e.IsDir() {
			files = append(files, dir+e.Name())
		}
	}
	return files
}

// plasmoid lists the Plasma applet's files as installed under share/, its
// German translation among them.
func plasmoid(t *testing.T) []string {
	t.Helper()
	files := []string{"plasma/plasmoids/org.antidrift.panel/metadata.json",
		"plasma/plasmoids/org.antidrift.panel/contents/locale/de/LC_MESSAGES/plasma_applet_org.antidrift.panel.mo"}
	entries, err := os.ReadDir("plasma/org.antidrift.panel/contents/ui")
	if err != nil || len(entries) == 0 {
		t.Fatalf("the Plasma applet: %v", err)
	}
	for _, e := range entries {
		files = append(files, "plasma/plasmoids/org.antidrift.panel/contents/ui/"+e.Name())
	}
	return files
}

// browserExtension lists the browser extension's files as installed under
// share/: the unpacked folder Chromium's "Load unpacked" takes (every file
// of dist/webextension) in antidrift/browser/, and the Firefox .xpi.
func browserExtension(t *testing.T) []string {
	t.Helper()
	entries, err := os.ReadDir("webextension")
	if err != nil || len(entries) == 0 {
		t.Fatalf("the browser extension: %v", err)
	}
	files := []string{"antidrift/antidrift-browser.xpi"}
	for _, e := range entries {
		files = append(files, "antidrift/browser/"+e.Name())
	}
	return files
}

func TestMakeInstallAndUninstall(t *testing.T) {
	needMake(t)
	destdir, build := t.TempDir(), t.TempDir()
	vars := []string{"DESTDIR=" + destdir, "PREFIX=/usr", "BUILDDIR=" + build}
	runMake(t, os.Environ(), append([]string{"install"}, vars...)...)

	want := []installed{
		{path: "/usr/bin/antidriftd", mode: 0o755},
		{path: "/usr/lib/systemd/user/antidrift.service", mode: 0o644,
			contains: []string{"\nExecStart=/usr/bin/antidriftd\n", "\nBusName=org.antidrift\n",
				"with the directory\n# antidriftd was installed to filled into ExecStart= below."}},
		// The comments still read right once the path is filled in.
		{path: "/usr/share/dbus-1/services/org.antidrift.service", mode: 0o644,
			contains: []string{"\nExec=/usr/bin/antidriftd\n", "\nName=org.antidrift\n", "\nSystemdService=antidrift.service\n",
				"with the directory\n# antidriftd was installed to filled into Exec= below."}},
		{path: "/usr/share/dbus-1/interfaces/org.antidrift.Session1.xml", mode: 0o644, contains: []string{dist.InterfaceXML}},
	}
	if hasCLI(t) {
		want = append(want, installed{path: "/usr/bin/antidrift", mode: 0o755})
	}
	want = append(want, nativeHost("/usr/bin", "/usr/bin/antidrift-native-host",
		"/usr/lib/mozilla/native-messaging-hosts/", "/etc/chromium/native-messaging-hosts/")...)
	for _, c := range slices.Concat(completions(t), gnomeExtension(t), plasmoid(t), browserExtension(t)) {
		want = append(want, installed{path: "/usr/share/" + c, mode: 0o644})
	}
	// The Taskwarrior hook: executable, naming the CLI and where it lies.
	want = append(want, installed{path: "/usr/share/antidrift/taskwarrior/on-modify.antidrift", mode: 0o755,
		contains: []string{"\nantidrift=/usr/bin/antidrift\n", "ln -s /usr/share/antidrift/taskwarrior/on-modify.antidrift ~/.task/hooks/"}})
	want = append(want, manInstalled(t, "/usr/share/man/man1/")...)
	checkTree(t, destdir, want)
	// The binaries are the ones just built, and they run.
	out, err := exec.Command(filepath.Join(destdir, "usr/bin/antidriftd"), "--version").CombinedOutput()
	if err != nil || !strings.HasPrefix(string(out), "antidriftd ") {
		t.Errorf("installed antidriftd --version: %q %v", out, err)
	}

	runMake(t, os.Environ(), append([]string{"uninstall"}, vars...)...)
	noFiles(t, destdir)
}

// nativeHost is the browser extension's native host as installed: the
// binary at bin, and its manifests for Firefox and Chromium in their
// directories, naming the binary in bindir and each browser's extension.
func nativeHost(bindir, bin, firefoxDir, chromiumDir string) []installed {
	const name = "org.antidrift.native_host.json"
	path := `"path": "` + bindir + `/antidrift-native-host"`
	return []installed{
		{path: bin, mode: 0o755},
		{path: firefoxDir + name, mode: 0o644, contains: []string{path, `"allowed_extensions": ["browser@antidrift.github.io"]`, `"name": "org.antidrift.native_host"`}},
		{path: chromiumDir + name, mode: 0o644, contains: []string{path, `"allowed_origins": ["chrome-extension://fopagejekiabnkobjkkggigkgddpcehh/"]`}},
	}
}

// manInstalled is the manual pages as installed into the man1 directory
// dir: every page of dist/man, as it is.
func manInstalled(t *testing.T, dir string) []installed {
	t.Helper()
	pages, _ := filepath.Glob("man/*.1")
	if len(pages) == 0 {
		t.Fatal("no manual pages in dist/man")
	}
	var out []installed
	for _, page := range pages {
		data, err := os.ReadFile(page)
		if err != nil {
			t.Fatal(err)
		}
		out = append(out, installed{path: dir + filepath.Base(page), mode: 0o644, contains: []string{string(data)}})
	}
	return out
}

// TestMakeInstallUser installs into a stand-in home. Without a reachable
// user manager it must still succeed and say what to run.
func TestMakeInstallUser(t *testing.T) {
	needMake(t)
	home, build, runtime := t.TempDir(), t.TempDir(), t.TempDir()
	// Go finds its caches through HOME unless told: keep the real ones, so
	// the build is not a cold one and the stand-in home holds only the install.
	goenv, err := exec.Command("go", "env", "GOCACHE", "GOPATH", "GOMODCACHE").Output()
	if err != nil {
		t.Fatalf("go env: %v", err)
	}
	gv := strings.Split(strings.TrimSpace(string(goenv)), "\n")
	if len(gv) != 3 {
		t.Fatalf("go env: got %q, want 3 lines", goenv)
	}
	env := append(os.Environ(), "GOCACHE="+gv[0], "GOPATH="+gv[1], "GOMODCACHE="+gv[2],
		"HOME="+home, "XDG_CONFIG_HOME=", "XDG_DATA_HOME=",
		// No user manager and no bus: systemctl --user fails, as in a
		// container or over su, and never reaches the developer's own.
		"XDG_RUNTIME_DIR="+runtime, "DBUS_SESSION_BUS_ADDRESS=unix:path="+filepath.Join(runtime, "nobus"))
	out := runMake(t, env, "install-user", "BUILDDIR="+build)

	bindir := filepath.Join(home, ".local/bin")
	want := []installed{
		{path: "/.local/bin/antidriftd", mode: 0o755},
		{path: "/.config/systemd/user/antidrift.service", mode: 0o644, contains: []string{"\nExecStart=" + bindir + "/antidriftd\n"}},
		{path: "/.local/share/dbus-1/services/org.antidrift.service", mode: 0o644, contains: []string{"\nExec=" + bindir + "/antidriftd\n"}},
		{path: "/.local/share/dbus-1/interfaces/org.antidrift.Session1.xml", mode: 0o644, contains: []string{dist.InterfaceXML}},
	}
	if hasCLI(t) {
		want = append(want, installed{path: "/.local/bin/antidrift", mode: 0o755})
	}
	want = append(want, nativeHost(bindir, "/.local/bin/antidrift-native-host",
		"/.mozilla/native-messaging-hosts/", "/.config/chromium/NativeMessagingHosts/")...)
	for _, c := range slices.Concat(completions(t), gnomeExtension(t), plasmoid(t), browserExtension(t)) {
		want = append(want, installed{path: "/.local/share/" + c, mode: 0o644})
	}
	want = append(want, installed{path: "/.local/share/antidrift/taskwarrior/on-modify.antidrift", mode: 0o755,
		contains: []string{"\nantidrift=" + bindir + "/antidrift\n"}})
	want = append(want, manInstalled(t, "/.local/share/man/man1/")...)
	// The go command keeps its telemetry counters under ~/.config/go; they
	// are not part of the install.
	os.RemoveAll(filepath.Join(home, ".config/go"))
	checkTree(t, home, want)
	if !strings.Contains(out, "systemctl --user daemon-reload") {
		t.Errorf("install-user without a user manager: got\n%s\nwant a line saying to run systemctl --user daemon-reload", out)
	}
	t.Run("man finds the pages", func(t *testing.T) {
		// As a person's shell finds them: man-db looks in ../share/man of
		// every directory on PATH, with no MANPATH set.
		testenv.Need(t, "man")
		for _, name := range []string{"antidrift", "antidriftd"} {
			cmd := exec.Command("man", "-w", name)
			cmd.Env = []string{"HOME=" + home, "PATH=" + bindir + ":/usr/bin:/bin", "LC_ALL=C.UTF-8"}
			got, err := cmd.Output()
			if want := filepath.Join(home, ".local/share/man/man1", name+".1"); err != nil || strings.TrimSpace(string(got)) != want {
				t.Errorf("man -w %s with %s on PATH: %q %v, want %s", name, bindir, got, err, want)
			}
		}
	})

	runMake(t, env, "uninstall-user", "BUILDDIR="+build)
	noFiles(t, home)
}
