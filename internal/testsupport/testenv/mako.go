package testenv

import (
	"os"
	"path/filepath"
	"strings"
	"testing"
)

// Mako is mako, the notification server, drawing on a sway of the same
// rootfs and serving a private bus, with its config under ConfigHome
// (mako/config): the daemon under test reads the same directory as
// XDG_CONFIG_HOME, as in a person's session.
type Mako struct {
	sway       *Sway
	bus        *Bus
	ConfigHome string
	proc       *Process
}

// StartMako starts mako with config as its config file and waits until it
// owns org.freedesktop.Notifications on b.
func (s *Sway) StartMako(t testing.TB, b *Bus, config string) *Mako {
	t.Helper()
	m := &Mako{sway: s, bus: b, ConfigHome: s.r.TempDir(t)}
	if err := os.MkdirAll(filepath.Join(m.ConfigHome, "mako"), 0o755); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(filepath.Join(m.ConfigHome, "mako", "config"), []byte(config), 0o644); err != nil {
		t.Fatal(err)
	}
	m.Start(t)
	return m
}

func (m *Mako) env() []string {
	return append(m.sway.Env(), "DBUS_SESSION_BUS_ADDRESS="+m.bus.Address, "XDG_CONFIG_HOME="+m.ConfigHome)
}

// Start starts mako (again, after Kill9) and waits for its name.
func (m *Mako) Start(t testing.TB) {
	t.Helper()
	m.proc = m.sway.r.Start(t, m.sway.dir, 0, m.env(), "mako")
	WaitUntil(t, readyTimeout, "mako to own "+NotificationsName, func() bool {
		if m.proc.Exited() {
			t.Fatalf("mako exited\n%s", m.proc.Output())
		}
		return m.bus.OwnerPID(t, NotificationsName) != 0
	})
}

// Kill9 kills mako with SIGKILL, as a crash would, and waits until its
// name is gone.
func (m *Mako) Kill9(t testing.TB) {
	t.Helper()
	m.proc.Kill9()
	WaitUntil(t, readyTimeout, "mako's name to be gone", func() bool { return m.bus.OwnerPID(t, NotificationsName) == 0 })
}

// Modes is makoctl mode: the modes on now, one a line, sorted as mako says.
func (m *Mako) Modes(t testing.TB) string {
	t.Helper()
	out, err := m.sway.r.Run(0, m.env(), runTimeout, "makoctl", "mode")
	if err != nil {
		t.Fatalf("makoctl mode: %v\n%s", err, out)
	}
	return strings.TrimSpace(out)
}
