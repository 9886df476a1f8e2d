package installed

import (
	"encoding/json"
	"fmt"
	"regexp"
	"strings"
	"testing"

	"github.com/antidrift/antidrift/internal/testsupport/testenv"
	"github.com/antidrift/antidrift/service"
)

// The first call to org.antidrift activates the daemon through systemd:
// the bus hands the activation to antidrift.service (SystemdService=), so
// the daemon runs as that unit, supervised and sandboxed, and the unit is
// active once the name is owned (Type=dbus). systemctl --user status then
// shows the daemon's own STATUS= line, live, and enable hooks it to the
// graphical session.
func TestActivationThroughSystemd(t *testing.T) {
	forEachBus(t, func(t *testing.T, m *testenv.Machine) {
		_, describe := debPackage(t)
		if got := must(t, m, "antidrift", "--version"); describe != "" && got != "antidrift "+describe {
			t.Errorf("antidrift --version = %q, want %q", got, "antidrift "+describe)
		}
		if got := must(t, m, "antidriftd", "--version"); describe != "" && got != "antidriftd "+describe {
			t.Errorf("antidriftd --version = %q, want %q", got, "antidriftd "+describe)
		}
		if state := unitProp(t, m, "ActiveState"); state != "inactive" {
			t.Fatalf("antidrift.service before anything called it: got %s, want inactive", state)
		}
		if got := prop[string](t, m, "State"); got != "locked" {
			t.Fatalf("State of a freshly activated daemon: got %q, want %q", got, "locked")
		}
		if state := unitProp(t, m, "ActiveState"); state != "active" {
			t.Fatalf("antidrift.service after the first call: got %s, want active (activated through systemd)", state)
		}
		owner := must(t, m, "busctl", "--user", "status", "--no-pager", "org.antidrift")
		if pid := unitProp(t, m, "MainPID"); !regexp.MustCompile(`(?m)^PID=` + pid + `$`).MatchString(owner) {
			t.Fatalf("org.antidrift's owner: got\n%s\nwant the unit's main process PID=%s", owner, pid)
		}

		status := func() string {
			out, _ := m.User(cmdWait, "systemctl", "--user", "status", "--no-pager", "antidrift")
			return out
		}
		if s := status(); !strings.Contains(s, "Status: \"locked") {
			t.Fatalf("systemctl --user status: got\n%s\nwant a STATUS line Status: \"locked…", s)
		}
		startSession(t, m)
		testenv.WaitFor(t, wait, `the STATUS line to show the running session (Status: "active…)`, statusLine(status),
			func(line string) bool { return strings.Contains(line, "Status: \"active") })

		must(t, m, "systemctl", "--user", "enable", "antidrift")
		link := testenv.MachineHome + "/.config/systemd/user/graphical-session.target.wants/antidrift.service"
		if got := must(t, m, "readlink", link); got != "/usr/lib/systemd/user/antidrift.service" {
			t.Fatalf("systemctl --user enable's link into graphical-session.target: got %s -> %q, want -> %q", link, got, "/usr/lib/systemd/user/antidrift.service")
		}
		if got := must(t, m, "systemctl", "--user", "is-enabled", "antidrift"); got != "enabled" {
			t.Fatalf("is-enabled after enable: got %s, want enabled", got)
		}
	})
}

// statusLine is the Status: line of what status, systemctl --user status
// of the unit, prints ("" when it prints none).
func statusLine(status func() string) func() string {
	return func() string {
		for _, line := range strings.Split(status(), "\n") {
			if strings.HasPrefix(strings.TrimSpace(line), "Status:") {
				return strings.TrimSpace(line)
			}
		}
		return ""
	}
}

// unitState is what the user manager says of antidrift.service's process.
type unitState struct{ mainPID, activeState string }

func (u unitState) String() string {
	return fmt.Sprintf("MainPID %s, ActiveState %s", u.mainPID, u.activeState)
}

// journalEntries is antidriftd's journal as journalctl --user -u antidrift
// -o json gives it to the user.
func journalEntries(t *testing.T, m *testenv.Machine) (entries []map[string]any, raw string) {
	t.Helper()
	raw = must(t, m, "journalctl", "--user", "-u", "antidrift", "-o", "json", "--no-pager")
	for _, line := range strings.Split(raw, "\n") {
		if strings.TrimSpace(line) == "" {
			continue
		}
		var e map[string]any
		if err := json.Unmarshal([]byte(line), &e); err != nil {
			t.Fatalf("journalctl -o json line %q: %v", line, err)
		}
		entries = append(entries, e)
	}
	return entries, raw
}

// The user's journal carries antidrift's own structured fields and the
// audit head each seal records, which antidrift verify --journal checks
// audit.jsonl against; and no window title, though the daemon saw one.
func TestJournalUnderTheUserManager(t *testing.T) {
	forEachBus(t, func(t *testing.T, m *testenv.Machine) {
		const secret = "payroll-2026-secret.xlsx - Sheets"
		x := testenv.StartX(t)
		win := x.XTerm(t, "Sheets", secret)
		x.Activate(t, win)
		m.ShareX(t, x)

		id := startSession(t, m)
		testenv.WaitForValue(t, wait, "the CurrentTitle of the daemon under systemd (the X window's)", secret, func() string {
			title, _ := readProp[string](m, "CurrentTitle")
			return title
		})
		session(t, m, "call", "Complete")
		session(t, m, "call", "End")

		var entries []map[string]any
		var raw string
		var sealed map[string]any
		testenv.WaitUntil(t, wait, "the seal's audit head in the user's journal", func() bool {
			entries, raw = journalEntries(t, m)
			for _, e := range entries {
				if e["MESSAGE_ID"] == service.AuditHeadMessageID && e["ANTIDRIFT_SESSION_ID"] == id {
					sealed = e
				}
			}
			return sealed != nil
		})
		withID := 0
		for _, e := range entries {
			if e["ANTIDRIFT_SESSION_ID"] == id {
				withID++
			}
			// The daemon's own lines, and the manager's about the unit.
			if e["_SYSTEMD_USER_UNIT"] != "antidrift.service" && e["USER_UNIT"] != "antidrift.service" {
				t.Errorf("journalctl -u antidrift: got an entry about another unit %v, want only antidrift.service's", e)
			}
		}
		if withID < 2 || sealed["ANTIDRIFT_AUDIT_SEQ"] != "1" || len(fmt.Sprint(sealed["ANTIDRIFT_AUDIT_HASH"])) != 64 {
			t.Fatalf("want entries with ANTIDRIFT_SESSION_ID=%s (got %d) and a seal with seq 1 and a hash: %v", id, withID, sealed)
		}
		if strings.Contains(raw, "payroll") {
			t.Fatalf("the journal: got a window title (payroll) in\n%s\nwant no window title", raw)
		}
		if out := must(t, m, "antidrift", "verify", "--journal"); !strings.Contains(out, "The journal recorded 1 seal; audit.jsonl holds every one.") {
			t.Fatalf("antidrift verify --journal: got\n%s\nwant it to say %q", out, "The journal recorded 1 seal; audit.jsonl holds every one.")
		}
	})
}

// dropIn adds a drop-in to antidrift.service for the user, and reloads.
func dropIn(t *testing.T, m *testenv.Machine, name, body string) {
	t.Helper()
	dir := testenv.MachineHome + "/.config/systemd/user/antidrift.service.d"
	must(t, m, "mkdir", "-p", dir)
	m.WriteFile(t, dir+"/"+name, []byte(body), 0o644, testenv.MachineUID)
	must(t, m, "systemctl", "--user", "daemon-reload")
}

// A wedged daemon (stopped with SIGSTOP: no watchdog pings) is killed by
// the user manager's watchdog and restarted, and the running session is
// still there. Then a crash loop: the daemon crashing as soon as it is back
// is restarted as Restart= says until StartLimitBurst= starts within
// StartLimitIntervalSec=, and then left failed.
func TestWatchdogAndCrashLoop(t *testing.T) {
	forEachBus(t, func(t *testing.T, m *testenv.Machine) {
		// The unit's 30 s, shortened so the test waits seconds, not minutes.
		dropIn(t, m, "watchdog.conf", "[Service]\nWatchdogSec=4s\n")
		id := startSession(t, m)
		wedged := unitProp(t, m, "MainPID")
		must(t, m, "systemctl", "--user", "kill", "--kill-whom=main", "--signal=SIGSTOP", "antidrift")
		testenv.WaitFor(t, wait, "the watchdog to restart the wedged daemon "+wedged+" (an active unit with another MainPID)", func() unitState {
			return unitState{mainPID: unitProp(t, m, "MainPID"), activeState: unitProp(t, m, "ActiveState")}
		}, func(u unitState) bool { return u.mainPID != wedged && u.mainPID != "0" && u.activeState == "active" })
		if got := unitProp(t, m, "NRestarts"); got != "1" {
			t.Errorf("NRestarts after the watchdog: got %s, want 1", got)
		}
		_, raw := journalEntries(t, m)
		if !strings.Contains(raw, "Watchdog timeout") {
			t.Errorf("the user's journal: got\n%s\nwant it to say the watchdog killed it (Watchdog timeout)", tail(raw))
		}
		if got := prop[string](t, m, "SessionId"); got != id {
			t.Fatalf("SessionId after the watchdog restart: got %q, want %q", got, id)
		}
		if got := prop[string](t, m, "State"); got != "active" {
			t.Fatalf("State after the watchdog restart: got %q, want %q", got, "active")
		}

		burst := unitProp(t, m, "StartLimitBurst")
		crashed, crashes := "", 0
		testenv.WaitUntil(t, 3*wait, "the crash loop to hit the start limit", func() bool {
			// One by one: systemctl show prints properties in its own order.
			f := []string{"", unitProp(t, m, "ActiveState"), unitProp(t, m, "MainPID")}
			if f[1] == "failed" {
				// systemd 257 leaves the last crash's Result; the
				// manager's refusal to start again is in the journal.
				_, raw := journalEntries(t, m)
				return strings.Contains(raw, "Start request repeated too quickly")
			}
			if f[1] == "active" && f[2] != "0" && f[2] != crashed {
				if crashes++; crashes > 20 {
					t.Fatalf("restarts: got still restarting after %d crashes, want a stop after StartLimitBurst=%s", crashes, burst)
				}
				crashed = f[2]
				m.User(cmdWait, "systemctl", "--user", "kill", "--kill-whom=main", "--signal=SIGABRT", "antidrift")
			}
			return false
		})
		starts := crashes + 1 // the wedged first start; each crash was a start too
		if want := burst; fmt.Sprint(starts) != want {
			t.Errorf("the crash loop stopped after %d starts, want StartLimitBurst=%s", starts, want)
		}
		if state := unitProp(t, m, "ActiveState"); state != "failed" {
			t.Errorf("antidrift.service after the start limit: got %s, want failed", state)
		}
		t.Logf("the crash loop stopped after %d starts (StartLimitBurst=%s)", starts, burst)
	})
}

// The sandbox the unit asks for is in effect under a real user manager:
// no new privileges, a seccomp filter, and what it forbids fails (an
// ExecStartPre= of the same unit tries to make a user namespace, which
// RestrictNamespaces= refuses and the same user may do outside it).
func TestSandboxInEffect(t *testing.T) {
	forEachBus(t, func(t *testing.T, m *testenv.Machine) {
		if out, err := m.User(cmdWait, "unshare", "--user", "true"); err != nil {
			t.Skipf("user namespaces do not work here even outside the unit: %v\n%s", err, out)
		}
		dropIn(t, m, "probe.conf", "[Service]\nExecStartPre=-/usr/bin/unshare --user /bin/true\n")
		prop[string](t, m, "State") // activates the daemon, and with it the probe
		status := string(must(t, m, "cat", fmt.Sprintf("/proc/%s/status", unitProp(t, m, "MainPID"))))
		for _, want := range []string{"NoNewPrivs:\t1", "Seccomp:\t2"} {
			if !strings.Contains(status, want) {
				t.Errorf("the daemon's /proc status lacks %q:\n%s", want, status)
			}
		}
		testenv.WaitUntil(t, wait, "the probe's refusal in the journal", func() bool {
			_, raw := journalEntries(t, m)
			return strings.Contains(raw, "unshare failed: Operation not permitted")
		})
	})
}
