package testenv

import (
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"strings"
	"testing"
	"time"
)

// Monitor is dbus-monitor on a private bus, so a test can check the exact
// arguments of calls it cannot otherwise see, such as Notify to dunst.
type Monitor struct {
	out  string // file receiving dbus-monitor's stdout
	proc *proc
}

// StartMonitor starts dbus-monitor on b with the given match rules (all
// traffic if none) and waits until it is monitoring, so nothing sent after it
// returns is missed. It is stopped at cleanup.
func StartMonitor(t testing.TB, b *Bus, matchRules ...string) *Monitor {
	t.Helper()
	Need(t, "dbus-monitor")
	dir := tempDir(t)
	m := &Monitor{out: filepath.Join(dir, "monitor.out")}
	f, err := os.Create(m.out)
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	m.proc = start(t, dir, b.Env(), func(c *exec.Cmd) { c.Stdout = f },
		"dbus-monitor", append([]string{"--address", b.Address}, matchRules...)...)
	// On BecomeMonitor the bus takes away the monitor's unique name, and
	// dbus-monitor prints that NameLost signal (whatever the match rules) once
	// the call has succeeded.
	if !waitUntil(readyTimeout, func() bool { return m.proc.exited() || strings.Contains(m.Output(), "member=NameLost") }) ||
		m.proc.exited() {
		t.Fatalf("dbus-monitor did not start monitoring\n%s\n%s", m.Output(), m.proc.output())
	}
	return m
}

// Output returns everything dbus-monitor has printed so far.
func (m *Monitor) Output() string {
	b, _ := os.ReadFile(m.out)
	return string(b)
}

// header starts each message in dbus-monitor's output; argument lines are
// indented. (Matching the header rather than "no indent" keeps strings with
// embedded newlines inside their message.)
var header = regexp.MustCompile(`(?m)^(method call|method return|signal|error) time=`)

// Messages splits Output into one block per message, header line first.
func (m *Monitor) Messages() []string {
	return splitMessages(m.Output())
}

func splitMessages(out string) []string {
	starts := header.FindAllStringIndex(out, -1)
	msgs := make([]string, len(starts))
	for i, s := range starts {
		end := len(out)
		if i+1 < len(starts) {
			end = starts[i+1][0]
		}
		msgs[i] = out[s[0]:end]
	}
	return msgs
}

// WaitFor waits until a message containing substr has been seen and returns
// its whole block (the first such message). On timeout the test fails and the
// message shows everything the monitor saw.
//
// dbus-monitor flushes after each message, but a big one can reach us in
// several writes; so the last block only counts once the output has stopped
// growing between two polls.
func (m *Monitor) WaitFor(t testing.TB, substr string, timeout time.Duration) string {
	t.Helper()
	var found string
	prev := -1
	ok := waitUntil(timeout, func() bool {
		out := m.Output()
		msgs := splitMessages(out)
		for i, msg := range msgs {
			if !strings.Contains(msg, substr) {
				continue
			}
			if i < len(msgs)-1 || (len(out) == prev && strings.HasSuffix(out, "\n")) {
				found = msg
				return true
			}
		}
		prev = len(out)
		return false
	})
	if !ok {
		t.Fatalf("dbus-monitor saw no message containing %q within %v; it saw:\n%s\n%s",
			substr, timeout, m.Output(), m.proc.output())
	}
	return found
}
