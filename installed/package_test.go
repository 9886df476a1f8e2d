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
)

// PackageEnv names a .deb to test instead of building one (make package
// takes minutes on a busy machine); its version must be in VersionEnv.
const (
	PackageEnv = "ANTIDRIFT_DEB"
	VersionEnv = "ANTIDRIFT_DEB_VERSION"
)

// cmdWait bounds one command inside a machine; wait bounds what the
// machine's managers do (start, restart, log) on a busy host.
const (
	cmdWait = 30 * time.Second
	wait    = 60 * time.Second
)

var built struct {
	once               sync.Once
	dir, deb, describe string
	err                error
}

func TestMain(m *testing.M) {
	code := m.Run()
	if built.dir != "" {
		os.RemoveAll(built.dir)
	}
	for _, dir := range cleanups.dirs {
		os.RemoveAll(dir)
	}
	os.Exit(code)
}

// debPackage is the package under test: $ANTIDRIFT_DEB, or one make package
// builds (without lintian) once per test run. describe is the git version
// antidrift --version prints.
func debPackage(t *testing.T) (deb, describe string) {
	t.Helper()
	if deb := os.Getenv(PackageEnv); deb != "" {
		return deb, os.Getenv(VersionEnv)
	}
	testenv.Need(t, "make", "dpkg-buildpackage", "dh")
	built.once.Do(func() {
		_, file, _, _ := runtime.Caller(0)
		root := filepath.Join(filepath.Dir(file), "..")
		dir, err := os.MkdirTemp("", "antidrift-deb-")
		if err != nil {
			built.err = err
			return
		}
		built.dir = dir
		out, err := exec.Command("git", "-C", root, "describe", "--tags", "--always", "--dirty").Output()
		if err != nil {
			built.err = fmt.Errorf("git describe: %v", err)
			return
		}
		built.describe = strings.TrimSpace(string(out))
		cmd := exec.Command("make", "-C", root, "package", "LINTIAN=", "BUILDDIR="+dir, "VERSION="+built.describe)
		if out, err := cmd.CombinedOutput(); err != nil {
			built.err = fmt.Errorf("make package: %v\n%s", err, out)
			return
		}
		debs, _ := filepath.Glob(filepath.Join(dir, "antidrift_*.deb"))
		if len(debs) != 1 {
			built.err = fmt.Errorf("make package's output in %s: got %v, want one antidrift_*.deb", dir, debs)
			return
		}
		built.deb = debs[0]
	})
	if built.err != nil {
		t.Fatal(built.err)
	}
	return built.deb, built.describe
}

// forEachBus runs test on a fresh machine with the package installed by
// apt, once with each session bus desktops ship.
func forEachBus(t *testing.T, test func(t *testing.T, m *testenv.Machine)) {
	for _, bus := range []testenv.SessionBus{testenv.DBusDaemon, testenv.DBusBroker} {
		t.Run(string(bus), func(t *testing.T) {
			m := testenv.BootMachine(t, bus)
			install(t, m)
			test(t, m)
		})
	}
}

// install copies the package in and installs it with apt, as a person would.
func install(t *testing.T, m *testenv.Machine) {
	t.Helper()
	deb, _ := debPackage(t)
	data, err := os.ReadFile(deb)
	if err != nil {
		t.Fatal(err)
	}
	const name = "/root/antidrift.deb"
	m.WriteFile(t, name, data, 0o644, 0)
	if out, err := m.Root(2*wait, "apt-get", "install", "-y", name); err != nil {
		t.Fatalf("apt-get install %s: %v\n%s", name, err, out)
	}
}

// must runs argv as user 1000 and fails the test if it fails.
func must(t *testing.T, m *testenv.Machine, argv ...string) string {
	t.Helper()
	out, err := m.User(cmdWait, argv...)
	if err != nil {
		t.Fatalf("%v\n%s\nmachine log:\n%s", err, out, tail(m.Log()))
	}
	return strings.TrimSpace(out)
}

// unitProp is one property of antidrift.service, from the user manager.
func unitProp(t *testing.T, m *testenv.Machine, name string) string {
	t.Helper()
	return must(t, m, "systemctl", "--user", "show", "--value", "-p", name, "antidrift.service")
}

// session calls a method of the daemon's session object with busctl.
func session(t *testing.T, m *testenv.Machine, verb string, args ...string) string {
	t.Helper()
	return must(t, m, append([]string{"busctl", "--user", verb, "org.antidrift", "/org/antidrift/Session1", "org.antidrift.Session1"}, args...)...)
}

// prop is a property of the daemon's session object, decoded into a T.
// The daemon's bus is user 1000's session bus inside the machine, which
// the test process (root, in the host's namespaces) is not let onto: a
// session bus admits only its own user. So it is read there, as the user
// reads it, with busctl, whose JSON carries the value as D-Bus typed it.
func prop[T any](t *testing.T, m *testenv.Machine, name string) T {
	t.Helper()
	v, err := readProp[T](m, name)
	if err != nil {
		t.Fatalf("%v\nmachine log:\n%s", err, tail(m.Log()))
	}
	return v
}

// readProp is prop, saying why it could not read name.
func readProp[T any](m *testenv.Machine, name string) (T, error) {
	out, err := m.User(cmdWait, testenv.BusctlGetProperty(name)...)
	if err != nil {
		var zero T
		return zero, fmt.Errorf("reading %s: %v\n%s", name, err, out)
	}
	return testenv.DecodeBusctlProperty[T](name, out)
}

// startSession starts a session through the CLI and returns its id.
func startSession(t *testing.T, m *testenv.Machine) string {
	t.Helper()
	must(t, m, "antidrift", "start", "write the intro", "--done-when", "the intro is committed", "--for", "25m", "--allow", "Editor")
	return prop[string](t, m, "SessionId")
}

func tail(s string) string {
	if len(s) > 3000 {
		return "…" + s[len(s)-3000:]
	}
	return s
}
