package testenv

import (
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"
)

func init() {
	aptPackages["gnome-keyring-daemon"] = "gnome-keyring"
	aptPackages["secret-tool"] = "libsecret-tools"
}

// Keyring is a real gnome-keyring-daemon serving the Secret Service
// (org.freedesktop.secrets) on a test's private bus, with its login
// keyring in a temp home, created and unlocked with Password.
type Keyring struct {
	Bus      *Bus
	Home     string
	Password string
	proc     *proc
}

// StartKeyring starts gnome-keyring-daemon --components=secrets on bus,
// unlocked with password (given on stdin, as PAM does), and waits until it
// owns org.freedesktop.secrets.
func StartKeyring(t testing.TB, bus *Bus, password string) *Keyring {
	t.Helper()
	Need(t, "gnome-keyring-daemon", "secret-tool")
	home := tempDir(t)
	runtime := filepath.Join(home, "run")
	if err := os.Mkdir(runtime, 0o700); err != nil {
		t.Fatal(err)
	}
	k := &Keyring{Bus: bus, Home: home, Password: password}
	env := withEnv(bus.Env(), "HOME="+home, "XDG_RUNTIME_DIR="+runtime,
		"XDG_DATA_HOME="+filepath.Join(home, "data"), "XDG_CONFIG_HOME="+filepath.Join(home, "config"))
	k.proc = start(t, home, env, func(c *exec.Cmd) { c.Stdin = strings.NewReader(password) },
		"gnome-keyring-daemon", "--foreground", "--unlock", "--components=secrets")
	bus.waitForOwner(t, "gnome-keyring-daemon", "org.freedesktop.secrets", k.proc)
	return k
}

// Store stores secret under the attributes (name, value pairs) with
// secret-tool, a client of the Secret Service apart from antidrift.
func (k *Keyring) Store(t testing.TB, secret, label string, attrs ...string) {
	t.Helper()
	args := append([]string{"store", "--label=" + label}, attrs...)
	cmd := exec.Command("secret-tool", args...)
	cmd.Env = withEnv(k.Bus.Env(), ownerMark())
	cmd.Stdin = strings.NewReader(secret)
	if out, err := cmd.CombinedOutput(); err != nil {
		t.Fatalf("secret-tool store: %v\n%s\n%s", err, out, k.proc.output())
	}
}

// Lock locks the login keyring (the Secret Service's Lock, called with
// gdbus), as after a screen lock with the keyring set to lock.
func (k *Keyring) Lock(t testing.TB) {
	t.Helper()
	out, err := k.Bus.Run(t, "gdbus", "call", "--address", k.Bus.Address, "--dest", "org.freedesktop.secrets",
		"--object-path", "/org/freedesktop/secrets", "--method", "org.freedesktop.Secret.Service.Lock",
		"['/org/freedesktop/secrets/collection/login']")
	if err != nil || !strings.Contains(out, "/collection/login") {
		t.Fatalf("locking the login keyring: got %q, %v; want it among the locked", out, err)
	}
}
