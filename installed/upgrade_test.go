package installed

import (
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"runtime"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/antidrift/antidrift/internal/testsupport/testenv"
	"github.com/antidrift/antidrift/persist"
)

// firstPackageCommit is the commit where `make package` first appeared
// ("make package: a Debian package built with debhelper"): the oldest
// package anyone can have installed, and so the oldest state directory an
// upgrade must keep.
const firstPackageCommit = "ec8bb95"

// OldPackageEnv names firstPackageCommit's .deb to use instead of building
// it (or the one cached from an earlier run).
const OldPackageEnv = "ANTIDRIFT_OLD_DEB"

var oldBuilt struct {
	once sync.Once
	deb  string
	err  error
}

// oldPackage is firstPackageCommit's .deb, built as that commit's own
// `make package` builds it, from `git archive` of the commit (offline: the
// modules come from the module cache, GOPROXY=off), and cached under the
// user's cache directory by the commit's full hash, so only a machine's
// first run pays for it (about a minute and a half).
func oldPackage(t *testing.T) string {
	t.Helper()
	if deb := os.Getenv(OldPackageEnv); deb != "" {
		return deb
	}
	testenv.Need(t, "git", "tar", "make", "dpkg-buildpackage", "dh")
	_, file, _, _ := runtime.Caller(0)
	root := filepath.Join(filepath.Dir(file), "..")
	full, err := exec.Command("git", "-C", root, "rev-parse", "--verify", "--quiet", firstPackageCommit+"^{commit}").Output()
	if err != nil {
		msg := fmt.Sprintf("this clone has no commit %s (the first package, whose state directory an upgrade must keep): a shallow clone? `git fetch --unshallow` brings it", firstPackageCommit)
		if os.Getenv(testenv.RequireEnv) == "require" {
			t.Fatalf("%s=require but %s", testenv.RequireEnv, msg)
		}
		t.Skipf("%s (set %s=require to fail instead of skipping)", msg, testenv.RequireEnv)
	}
	oldBuilt.once.Do(func() { oldBuilt.deb, oldBuilt.err = buildOldPackage(root, strings.TrimSpace(string(full))) })
	if oldBuilt.err != nil {
		t.Fatal(oldBuilt.err)
	}
	return oldBuilt.deb
}

func buildOldPackage(root, commit string) (string, error) {
	base, err := os.UserCacheDir()
	if err != nil {
		return "", err
	}
	cache := filepath.Join(base, "antidrift", "deb-"+commit)
	if debs, _ := filepath.Glob(filepath.Join(cache, "antidrift_*.deb")); len(debs) == 1 {
		return debs[0], nil
	}
	if err := os.MkdirAll(filepath.Dir(cache), 0o755); err != nil {
		return "", err
	}
	work, err := os.MkdirTemp(filepath.Dir(cache), ".deb-build-")
	if err != nil {
		return "", err
	}
	defer os.RemoveAll(work)
	src, out := filepath.Join(work, "src"), filepath.Join(work, "out")
	for _, d := range []string{src, out} {
		if err := os.Mkdir(d, 0o755); err != nil {
			return "", err
		}
	}
	// Its make package lists the tree with git ls-files: an index is enough.
	steps := [][]string{
		{"sh", "-c", `git -C "$1" archive --format=tar "$2" | tar -x -C "$3"`, "sh", root, commit, src},
		{"git", "-C", src, "init", "-q"},
		{"git", "-C", src, "add", "-A"},
		// VERSION as that commit's git describe printed it (no tag yet):
		// the package version sorts below every later one's.
		{"make", "-C", src, "package", "LINTIAN=", "BUILDDIR=" + out, "VERSION=" + commit[:7]},
	}
	for _, argv := range steps {
		cmd := exec.Command(argv[0], argv[1:]...)
		cmd.Env = append(os.Environ(), "GOPROXY=off", "GOTOOLCHAIN=local", "GOFLAGS=-mod=mod")
		if b, err := cmd.CombinedOutput(); err != nil {
			return "", fmt.Errorf("building %s's package (offline, from the module cache): %v: %v\n%s", commit[:7], argv, err, b)
		}
	}
	debs, _ := filepath.Glob(filepath.Join(out, "antidrift_*.deb"))
	if len(debs) != 1 {
		return "", fmt.Errorf("%s's make package: got %v, want one antidrift_*.deb", commit[:7], debs)
	}
	kept := filepath.Join(work, "kept")
	if err := os.Mkdir(kept, 0o755); err != nil {
		return "", err
	}
	if err := os.Rename(debs[0], filepath.Join(kept, filepath.Base(debs[0]))); err != nil {
		return "", err
	}
	if err := os.Rename(kept, cache); err != nil && !os.IsExist(err) {
		return "", err
	}
	debs, _ = filepath.Glob(filepath.Join(cache, "antidrift_*.deb"))
	if len(debs) != 1 {
		return "", fmt.Errorf("the cached package in %s: got %v, want one antidrift_*.deb", cache, debs)
	}
	return debs[0], nil
}

// installDeb copies debs into the machine and installs them with apt, in
// one transaction.
func installDeb(t *testing.T, m *testenv.Machine, debs ...string) {
	t.Helper()
	argv := []string{"apt-get", "install", "-y"}
	for _, deb := range debs {
		data, err := os.ReadFile(deb)
		if err != nil {
			t.Fatal(err)
		}
		name := "/root/" + filepath.Base(deb)
		m.WriteFile(t, name, data, 0o644, 0)
		argv = append(argv, name)
	}
	if out, err := m.Root(2*wait, argv...); err != nil {
		t.Fatalf("%s: %v\n%s", strings.Join(argv, " "), err, out)
	}
}

// gsettingsBackend is a package that Provides: gsettings-backend, which
// the first package Depends on (for its GNOME extension's settings; every
// GNOME or Plasma desktop has dconf) and the test machine, which has no
// desktop and no archive to fetch dconf from, lacks. The daemon never
// reads GSettings.
func gsettingsBackend(t *testing.T) string {
	t.Helper()
	testenv.Need(t, "dpkg-deb")
	dir := t.TempDir()
	control := "Package: antidrift-test-gsettings-backend\nVersion: 1\nArchitecture: all\nMaintainer: antidrift tests <tests@antidrift.invalid>\n" +
		"Provides: gsettings-backend\nDescription: stand-in for dconf in the upgrade test\n the first antidrift package depends on a GSettings backend.\n"
	if err := os.MkdirAll(filepath.Join(dir, "tree", "DEBIAN"), 0o755); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(filepath.Join(dir, "tree", "DEBIAN", "control"), []byte(control), 0o644); err != nil {
		t.Fatal(err)
	}
	deb := filepath.Join(dir, "antidrift-test-gsettings-backend.deb")
	if out, err := exec.Command("dpkg-deb", "--root-owner-group", "-b", filepath.Join(dir, "tree"), deb).CombinedOutput(); err != nil {
		t.Fatalf("dpkg-deb -b: %v\n%s", err, out)
	}
	return deb
}

// focus makes win the focused window and waits until the daemon says so.
func focus(t *testing.T, m *testenv.Machine, x *testenv.Display, win uint32, class string) {
	t.Helper()
	x.Activate(t, win)
	testenv.WaitForValue(t, wait, "CurrentClass after focusing the "+class+" window", class, func() string {
		c, _ := readProp[string](m, "CurrentClass")
		return c
	})
}

// bucketSeconds is the Buckets property (a(sst): class, title, seconds)
// as class+title → seconds.
func bucketSeconds(t *testing.T, m *testenv.Machine) map[string]uint64 {
	t.Helper()
	got := map[string]uint64{}
	for _, b := range prop[[][]any](t, m, "Buckets") {
		if len(b) != 3 {
			t.Fatalf("a bucket: got %v, want (class, title, seconds)", b)
		}
		secs, _ := b[2].(float64)
		got[fmt.Sprint(b[0])+" / "+fmt.Sprint(b[1])] = uint64(secs)
	}
	return got
}

// The state directory as the user's files: every path with its type,
// mode and, for a file, its sha256.
func stateListing(t *testing.T, m *testenv.Machine) string {
	t.Helper()
	out, err := m.Root(cmdWait, "sh", "-c", "cd "+testenv.MachineHome+"/.local/state/antidrift && find . -printf '%p %y %m %l\\n' | sort && find . -type f -exec sha256sum {} + | sort -k2")
	if err != nil {
		t.Fatalf("listing the state directory: %v\n%s", err, out)
	}
	return out
}

// A person who installed the first package (ec8bb95's) and upgrades to
// this one mid-session loses nothing: with a sealed session and a running
// one with focus history behind it, the current .deb is installed over the
// old one and the user unit restarted; the session goes on with the same
// id, start, deadline, enforcement and buckets, config.toml still loads,
// `antidrift verify` passes over the lines the old daemon sealed and the
// one the new daemon seals (and --journal over both daemons' anchors), and
// `antidrift history` and `antidrift report` show the old session.
// Then the other way: a state directory a later version wrote (state.json
// of a version above this build's) keeps this daemon from starting, with
// the reason in the journal, and nothing in the directory changed.
func TestUpgradeFromTheFirstPackageMidSession(t *testing.T) {
	began := time.Now()
	// This build's package first: on a cold machine its build fills the
	// module cache (ec8bb95's go.sum is the same), which the old one's
	// offline build then reads.
	deb, _ := debPackage(t)
	old := oldPackage(t)
	built := time.Now()
	m := testenv.BootMachine(t, testenv.DBusDaemon)
	x := testenv.StartX(t)
	m.ShareX(t, x)
	installDeb(t, m, gsettingsBackend(t), old)
	if v := must(t, m, "antidriftd", "--version"); v != "antidriftd "+firstPackageCommit {
		t.Fatalf("antidriftd --version of the first package: got %q, want %q", v, "antidriftd "+firstPackageCommit)
	}

	// Settings only that version knew, and not its defaults.
	must(t, m, "mkdir", "-p", testenv.MachineHome+"/.config/antidrift")
	const config = "enforcement = \"observe\"\nnudge_repeat = \"30s\"\nretention = \"240h\"\nallowed_classes = [\"Editor\"]\n"
	m.WriteFile(t, testenv.MachineHome+"/.config/antidrift/config.toml", []byte(config), 0o600, testenv.MachineUID)

	editor := x.XTerm(t, "Editor", "chapter one.txt")
	reader := x.XTerm(t, "Reader", "the news")
	focus(t, m, x, editor, "Editor")

	// A session the old daemon seals, with focus history.
	must(t, m, "antidrift", "start", "outline the intro", "--done-when", "the outline is saved", "--for", "25m")
	focus(t, m, x, reader, "Reader")
	focus(t, m, x, editor, "Editor")
	must(t, m, "antidrift", "complete")
	must(t, m, "antidrift", "end")

	// The running session, at an enforcement other than the config's.
	must(t, m, "antidrift", "start", "write the intro", "--done-when", "the intro is committed", "--for", "40m", "--enforce", "warn")
	id := prop[string](t, m, "SessionId")
	// A second in each window: buckets to keep.
	for _, w := range []struct {
		win   uint32
		class string
	}{{reader, "Reader"}, {editor, "Editor"}} {
		focus(t, m, x, w.win, w.class)
		testenv.WaitFor(t, wait, "a second in the "+w.class+" window's bucket", func() map[string]uint64 { return bucketSeconds(t, m) },
			func(b map[string]uint64) bool {
				for k, secs := range b {
					if strings.HasPrefix(k, w.class+" / ") && secs >= 1 {
						return true
					}
				}
				return false
			})
	}
	type kept struct {
		started, deadline int64
		enforcement       string
		timebox           uint64
	}
	read := func() kept {
		return kept{prop[int64](t, m, "StartedAt"), prop[int64](t, m, "Deadline"), prop[string](t, m, "Enforcement"), prop[uint64](t, m, "TimeboxSeconds")}
	}
	before, bucketsBefore := read(), bucketSeconds(t, m)
	if before.enforcement != "warn" || len(bucketsBefore) < 2 {
		t.Fatalf("the old daemon's session before the upgrade: got enforcement %q and buckets %v, want warn and a bucket per window", before.enforcement, bucketsBefore)
	}

	installDeb(t, m, deb)
	must(t, m, "systemctl", "--user", "restart", "antidrift")
	if v := prop[string](t, m, "Version"); v == firstPackageCommit {
		t.Fatalf("Version after the restart: got %q, want the new daemon's", v)
	}
	if got := prop[string](t, m, "SessionId"); got != id {
		t.Fatalf("SessionId after the upgrade: got %q, want %q", got, id)
	}
	if got := prop[string](t, m, "State"); got != "active" {
		t.Fatalf("State after the upgrade: got %q, want active", got)
	}
	if after := read(); after != before {
		t.Fatalf("the session after the upgrade: got %+v, want %+v (start, deadline, enforcement, timebox kept)", after, before)
	}
	bucketsAfter := bucketSeconds(t, m)
	for k, secs := range bucketsBefore {
		if bucketsAfter[k] < secs {
			t.Errorf("bucket %s after the upgrade: got %d s, want at least the %d s it had", k, bucketsAfter[k], secs)
		}
	}
	if problems := prop[[]string](t, m, "Problems"); len(problems) > 0 {
		t.Errorf("Problems after the upgrade: got %q, want none (config.toml loads, no file set aside)", problems)
	}
	if out := must(t, m, "antidriftd", "--check-config"); !strings.HasSuffix(out, "config.toml: ok") {
		t.Errorf("antidriftd --check-config after the upgrade: got %q, want config.toml: ok", out)
	}

	// The new daemon writes into the old raw log and seals after the old line.
	focus(t, m, x, reader, "Reader")
	focus(t, m, x, editor, "Editor")
	must(t, m, "antidrift", "complete")
	must(t, m, "antidrift", "end")
	if out := must(t, m, "antidrift", "verify"); !strings.Contains(out, "intact: 2 entries") {
		t.Errorf("antidrift verify over the old daemon's line and the new one's: got %q, want it intact with 2 entries", out)
	}
	// The anchors: the old daemon's seal in the journal and the new one's.
	if out := must(t, m, "antidrift", "verify", "--journal"); !strings.Contains(out, "The journal recorded 2 seals; audit.jsonl holds every one.") {
		t.Errorf("antidrift verify --journal after the upgrade: got\n%s\nwant %q", out, "The journal recorded 2 seals; audit.jsonl holds every one.")
	}
	history := must(t, m, "antidrift", "history")
	for _, want := range []string{"outline the intro", "write the intro"} {
		if !strings.Contains(history, want) {
			t.Errorf("antidrift history after the upgrade: got\n%s\nwant the session %q", history, want)
		}
	}
	report := must(t, m, "antidrift", "report", "--today")
	if !strings.Contains(report, "outline the intro") {
		t.Errorf("antidrift report --today after the upgrade: got\n%s\nwant the old daemon's session (outline the intro)", report)
	}
	upgraded := time.Now()

	// The other way: what a later version wrote is refused, untouched.
	must(t, m, "systemctl", "--user", "stop", "antidrift")
	statePath := testenv.MachineHome + "/.local/state/antidrift/state.json"
	later := fmt.Sprintf(`"version": %d`, persist.StateFileVersion+1)
	must(t, m, "sed", "-i", `s/"version": [0-9]*/`+later+`/`, statePath)
	if got := must(t, m, "cat", statePath); !strings.Contains(got, later) {
		t.Fatalf("state.json as a later version wrote it: got\n%s\nwant %s", got, later)
	}
	unchanged := stateListing(t, m)
	if out, err := m.User(cmdWait, "systemctl", "--user", "start", "antidrift"); err == nil {
		t.Fatalf("systemctl --user start on a later version's state: got it started (%s), want it refused", out)
	}
	testenv.WaitUntil(t, wait, "the refusal's reason in the journal", func() bool {
		_, raw := journalEntries(t, m)
		return strings.Contains(raw, "written by a later version of antidrift") && strings.Contains(raw, "Nothing in the state directory was changed")
	})
	if got := unitProp(t, m, "ActiveState"); got != "failed" {
		t.Errorf("antidrift.service after the refusal: got %s, want failed (not restarted over and over)", got)
	}
	if after := stateListing(t, m); after != unchanged {
		t.Fatalf("the state directory after the refused start: got\n%s\nwant it unchanged:\n%s", after, unchanged)
	}
	// The CLI, which activates the daemon again, says why it cannot reach it.
	// (The bus answers an activation that fails so only at its own timeout;
	// the CLI's is shortened to the test's patience.)
	out, err := m.User(cmdWait, "env", "ANTIDRIFT_TIMEOUT=10s", "antidrift", "status")
	if err == nil || !strings.Contains(out+err.Error(), "antidriftd will not start on "+testenv.MachineHome+"/.local/state/antidrift: state.json has format version") {
		t.Errorf("antidrift status on a later version's state: got %v\n%s\nwant it to say antidriftd will not start, naming state.json", err, out)
	}
	if after := stateListing(t, m); after != unchanged {
		t.Fatalf("the state directory after antidrift status activated the daemon again: got\n%s\nwant it unchanged:\n%s", after, unchanged)
	}
	t.Logf("time: %v building or finding the packages, %v the upgrade, %v the refusal", built.Sub(began).Round(time.Second), upgraded.Sub(built).Round(time.Second), time.Since(upgraded).Round(time.Second))
}
