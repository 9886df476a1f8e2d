package main

// Tests of antidriftd as the system runs it: started by D-Bus activation
// from the installed activation file, checked by systemd-analyze as a user
// unit, talking sd_notify to a service manager and logging to journald; and
// `make demo`, the newcomer's first command, run to the end.

import (
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"net"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"slices"
	"strconv"
	"strings"
	"sync"
	"syscall"
	"testing"
	"time"

	"github.com/antidrift/antidrift/internal/testsupport/testenv"
	"github.com/antidrift/antidrift/service"
)

// repoRoot is the module root, two levels above this package.
func repoRoot(t *testing.T) string {
	t.Helper()
	root, err := filepath.Abs(filepath.Join("..", ".."))
	if err != nil {
		t.Fatal(err)
	}
	if _, err := os.Stat(filepath.Join(root, "go.mod")); err != nil {
		t.Fatalf("module root not found from %s: %v", root, err)
	}
	return root
}

// fillIn renders dist/<name>.in the way `make install` does, with @BINDIR@
// replaced by bindir, and fails if any @VAR@ is left.
func fillIn(t *testing.T, name, bindir string) string {
	t.Helper()
	tmpl, err := os.ReadFile(filepath.Join(repoRoot(t), "dist", name+".in"))
	if err != nil {
		t.Fatal(err)
	}
	out := strings.ReplaceAll(string(tmpl), "@BINDIR@", bindir)
	if m := regexp.MustCompile(`@[A-Z_]+@`).FindString(out); m != "" {
		t.Fatalf("dist/%s.in: got %s, want only placeholders make install substitutes (@BINDIR@)", name, m)
	}
	return out
}

// TestBusActivationStartsTheDaemon installs the activation file, as make
// install renders it, into a private bus's service directory: the first call
// to org.antidrift must start the daemon, and be answered by it.
func TestBusActivationStartsTheDaemon(t *testing.T) {
	testenv.Need(t, "dbus-daemon", "dbus-send")
	daemon := testenv.Binary(t, "antidriftd")
	cli := testenv.Binary(t, "antidrift")
	// Activation passes no arguments, only the bus's environment: the state
	// and config go to temp dirs through XDG_STATE_HOME and XDG_CONFIG_HOME.
	stateHome, configHome := t.TempDir(), t.TempDir()
	bus := testenv.StartBus(t, "XDG_STATE_HOME="+stateHome, "XDG_CONFIG_HOME="+configHome, "DISPLAY=")
	file := filepath.Join(bus.ServiceDir, "org.antidrift.service")
	if err := os.WriteFile(file, []byte(fillIn(t, "org.antidrift.service", filepath.Dir(daemon))), 0o644); err != nil {
		t.Fatal(err)
	}
	// dbus-daemon notices new files by inotify, asynchronously; ReloadConfig
	// rereads the service directories before it returns.
	if out, err := bus.Run(t, "dbus-send", "--session", "--print-reply", "--dest=org.freedesktop.DBus",
		"/org/freedesktop/DBus", "org.freedesktop.DBus.ReloadConfig"); err != nil {
		t.Fatalf("ReloadConfig: %v\n%s", err, out)
	}
	if pid := bus.OwnerPID(t, "org.antidrift"); pid != 0 {
		t.Fatalf("org.antidrift before any call: got owned by pid %d, want no owner", pid)
	}

	// The first call: the CLI's verify, a method call that auto-starts.
	cmd := exec.Command(cli, "verify")
	cmd.Env = bus.Env()
	out, err := cmd.CombinedOutput()
	if err != nil {
		t.Fatalf("antidrift verify (the activating call): %v\n%s", err, out)
	}
	pid := bus.OwnerPID(t, "org.antidrift")
	if pid == 0 {
		t.Fatalf("org.antidrift after the activating call: got no owner, want the activated daemon\n%s", out)
	}
	exe, err := os.Readlink(fmt.Sprintf("/proc/%d/exe", pid))
	if err != nil {
		t.Fatal(err)
	}
	if want, _ := filepath.EvalSymlinks(daemon); exe != want {
		t.Fatalf("org.antidrift's owner: got %s, want the activated %s", exe, want)
	}
	// It runs on the activation environment: its state is where we said.
	if _, err := os.Stat(filepath.Join(stateHome, "antidrift")); err != nil {
		t.Fatalf("the activated daemon's state under XDG_STATE_HOME: got %v, want its antidrift directory there", err)
	}
	// And it stays: a second call goes to the same process.
	if got := bus.Session(t).String(t, "State"); got != "locked" {
		t.Fatalf("State from the activated daemon: got %q, want %q", got, "locked")
	}
	if again := bus.OwnerPID(t, "org.antidrift"); again != pid {
		t.Fatalf("org.antidrift's owner at a second call: got pid %d, want the first call's %d", again, pid)
	}
}

// TestUserUnitPassesSystemdAnalyzeVerify renders the unit with ExecStart at
// the built daemon (verify checks that it is executable) and runs
// systemd-analyze --user verify on it: no errors, and no warnings about the
// unit's own lines (an unknown or misspelled key is only a warning).
func TestUserUnitPassesSystemdAnalyzeVerify(t *testing.T) {
	testenv.Need(t, "systemd-analyze")
	daemon := testenv.Binary(t, "antidriftd")
	dir := t.TempDir()
	unit := filepath.Join(dir, "antidrift.service")
	if err := os.WriteFile(unit, []byte(fillIn(t, "antidrift.service", filepath.Dir(daemon))), 0o644); err != nil {
		t.Fatal(err)
	}
	runtime := filepath.Join(dir, "runtime")
	if err := os.Mkdir(runtime, 0o700); err != nil {
		t.Fatal(err)
	}
	ctx, cancel := context.WithTimeout(context.Background(), wait)
	defer cancel()
	cmd := exec.CommandContext(ctx, "systemd-analyze", "--user", "verify", unit)
	// --user wants a runtime dir; give it an empty one of ours, and no bus,
	// so the check never talks to the developer's own user manager.
	cmd.Env = append(os.Environ(), "XDG_RUNTIME_DIR="+runtime, "DBUS_SESSION_BUS_ADDRESS=", "SYSTEMD_LOG_COLOR=0")
	out, err := cmd.CombinedOutput()
	if err != nil {
		t.Fatalf("systemd-analyze --user verify: %v\n%s", err, out)
	}
	for _, line := range strings.Split(string(out), "\n") {
		if strings.Contains(line, unit) || strings.Contains(line, "antidrift.service") {
			t.Errorf("systemd-analyze --user verify: got %q, want no warning about the unit", line)
		}
	}
}

// notifySocket is a stand-in for systemd's notification socket: a unixgram
// socket that collects every datagram sent to it.
type notifySocket struct {
	Path string
	conn *net.UnixConn
	mu   sync.Mutex
	msgs []string
}

func listenNotify(t *testing.T) *notifySocket {
	t.Helper()
	// A short dir: sun_path holds 108 bytes, and t.TempDir can be long.
	dir, err := os.MkdirTemp("", "ad-notify-")
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { os.RemoveAll(dir) })
	n := &notifySocket{Path: filepath.Join(dir, "notify")}
	n.conn, err = net.ListenUnixgram("unixgram", &net.UnixAddr{Name: n.Path, Net: "unixgram"})
	if err != nil {
		t.Fatal(err)
	}
	done := make(chan struct{})
	t.Cleanup(func() { n.conn.Close(); <-done })
	go func() {
		defer close(done)
		buf := make([]byte, 64<<10)
		for {
			k, err := n.conn.Read(buf)
			if err != nil {
				return
			}
			n.mu.Lock()
			n.msgs = append(n.msgs, string(buf[:k]))
			n.mu.Unlock()
		}
	}()
	return n
}

// Lines returns every assignment received so far (a datagram may hold
// several, one per line), in order.
func (n *notifySocket) Lines() []string {
	n.mu.Lock()
	defer n.mu.Unlock()
	var lines []string
	for _, m := range n.msgs {
		lines = append(lines, strings.Split(strings.TrimRight(m, "\n"), "\n")...)
	}
	return lines
}

func (n *notifySocket) Has(pred func(string) bool) bool {
	for _, l := range n.Lines() {
		if pred(l) {
			return true
		}
	}
	return false
}

// TestSdNotify checks what systemd hears from the daemon: READY=1 with a
// first STATUS= once it is serving, a new STATUS= when a session starts (the
// line `systemctl --user status antidrift` shows), watchdog pings when
// WATCHDOG_USEC asks for them, and STOPPING=1 on SIGTERM.
func TestSdNotify(t *testing.T) {
	testenv.Need(t, "dbus-daemon", "busctl", "dbus-send")
	n := listenNotify(t)
	bus := testenv.StartBus(t)
	// 400 ms: the daemon pings every 200 ms.
	d := testenv.StartDaemon(t, bus, filepath.Join(t.TempDir(), "state"),
		"NOTIFY_SOCKET="+n.Path, "WATCHDOG_USEC=400000", "WATCHDOG_PID=")

	has := func(line string) func([]string) bool {
		return func(lines []string) bool { return slices.Contains(lines, line) }
	}
	testenv.WaitFor(t, wait, "READY=1 on the notify socket", n.Lines, has("READY=1"))
	if got := n.Lines(); !has("STATUS=locked")(got) {
		t.Fatalf("the notify socket with READY=1: got %q, want STATUS=locked too", got)
	}
	testenv.WaitFor(t, wait, "a watchdog ping (WATCHDOG=1)", n.Lines, has("WATCHDOG=1"))

	startSession(t, d.Session(t), "write the intro", "intro committed", 1500, "warn", "Editor")
	testenv.WaitFor(t, wait, "a STATUS= line saying active (STATUS=active: … left)", n.Lines, func(lines []string) bool {
		return slices.ContainsFunc(lines, func(l string) bool { return strings.HasPrefix(l, "STATUS=active: ") && strings.HasSuffix(l, " left") })
	})
	// STATUS= is one short line: systemctl shows it as is.
	for _, l := range n.Lines() {
		if strings.HasPrefix(l, "STATUS=") && len(l) > 100 {
			t.Errorf("a STATUS= line: got %d bytes (%q), want at most 100 for systemctl status", len(l), l)
		}
	}

	d.Stop(t)
	if got := n.Lines(); !has("STOPPING=1")(got) {
		t.Fatalf("the notify socket after SIGTERM: got %q, want STOPPING=1", got)
	}
}

// journaldPath is where Debian and most distributions keep the journal daemon.
func journaldPath() string {
	for _, p := range []string{"/lib/systemd/systemd-journald", "/usr/lib/systemd/systemd-journald"} {
		if _, err := os.Stat(p); err == nil {
			return p
		}
	}
	return ""
}

// journalScript runs inside a private mount namespace (unshare -m): it hides
// /run and /var/log/journal behind empty tmpfs mounts, so the systemd-journald
// it starts has its sockets and files to itself and never meets the host's
// journal; then it runs the daemon with stderr connected to that journald's
// stream socket and JOURNAL_STREAM set, exactly as systemd does for a unit
// with StandardError=journal. Arguments: journald, antidriftd, state dir.
const journalScript = `set -eu
mount -t tmpfs -o mode=0755 tmpfs /run
mkdir -p /run/systemd/journal
if [ -d /var/log/journal ]; then mount -t tmpfs tmpfs /var/log/journal; fi
"$1" &
echo "journald pid $!"
i=0
until [ -S /run/systemd/journal/socket ] && [ -S /run/systemd/journal/stdout ]; do
	i=$((i + 1))
	if [ "$i" -gt 300 ]; then echo "journald did not create its sockets" >&2; exit 1; fi
	sleep 0.1
done
echo "journald up"
exec systemd-cat -t antidriftd sh -c 'JOURNAL_STREAM=$(stat -L -c %d:%i /proc/self/fd/2) exec "$0" --state-dir "$1"' "$2" "$3"
`

// TestJournalHasStructuredFieldsAndNoTitles runs the daemon as systemd would,
// logging to a private systemd-journald, through a session on a window whose
// title is a secret; then reads that journal with journalctl -o json: the
// daemon's records carry ANTIDRIFT_SESSION_ID and ANTIDRIFT_STATE as fields,
// and the title appears nowhere.
func TestJournalHasStructuredFieldsAndNoTitles(t *testing.T) {
	journald := journaldPath()
	if journald == "" {
		t.Skip("systemd-journald is not installed (/lib/systemd/systemd-journald): no journal to log to")
	}
	if os.Geteuid() != 0 {
		t.Skip("needs root: the test journald runs in a private mount namespace (unshare -m) so it never touches the host's journal")
	}
	testenv.Need(t, "unshare", "nsenter", "systemd-cat", "journalctl", "stat",
		"dbus-daemon", "busctl", "dbus-send", "Xvfb", "openbox", "xterm", "xdotool", "xprop")
	daemon := testenv.Binary(t, "antidriftd")
	const secret = "payroll-2026-secret.xlsx - Sheets"
	bus := testenv.StartBus(t)
	x := testenv.StartX(t)
	win := x.XTerm(t, "Sheets", secret)
	x.Activate(t, win)

	dir := t.TempDir()
	logPath := filepath.Join(dir, "unshare.log")
	logf, err := os.Create(logPath)
	if err != nil {
		t.Fatal(err)
	}
	defer logf.Close()
	cmd := exec.Command("unshare", "--mount", "--propagation", "private",
		"sh", "-c", journalScript, "sh", journald, daemon, filepath.Join(dir, "state"))
	cmd.Env = append(bus.Env(), "DISPLAY="+x.Name, "XDG_CONFIG_HOME="+dir, "NOTIFY_SOCKET=", "JOURNAL_STREAM=")
	cmd.Stdout, cmd.Stderr = logf, logf
	cmd.SysProcAttr = &syscall.SysProcAttr{Setpgid: true, Pdeathsig: syscall.SIGKILL}
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	exited := make(chan struct{})
	go func() { cmd.Wait(); close(exited) }()
	t.Cleanup(func() {
		syscall.Kill(-cmd.Process.Pid, syscall.SIGTERM)
		select {
		case <-exited:
		case <-time.After(10 * time.Second):
		}
		syscall.Kill(-cmd.Process.Pid, syscall.SIGKILL)
		<-exited
	})
	scriptLog := func() string { b, _ := os.ReadFile(logPath); return string(b) }
	var pid int
	testenv.WaitUntil(t, wait, "antidriftd (under the test journald) to own org.antidrift", func() bool {
		select {
		case <-exited:
			msg := fmt.Sprintf("the private journald or the daemon under it exited early:\n%s", scriptLog())
			if os.Getenv(testenv.RequireEnv) == "require" || strings.Contains(scriptLog(), "journald up") {
				t.Fatal(msg)
			}
			t.Skip(msg)
		default:
		}
		pid = bus.OwnerPID(t, "org.antidrift")
		return pid != 0
	})
	s := bus.Session(t)
	testenv.WaitForProp(t, wait, s, "CurrentTitle", secret) // the daemon sees the Sheets window
	id := startSession(t, s, "file the report", "report filed", 600, "warn", "Editor")
	x.SetTitle(t, win, secret+" (2)")
	testenv.WaitForProp(t, wait, s, "CurrentTitle", secret+" (2)")
	completeAndEnd(t, s)

	// journalctl in the daemon's mount namespace reads the test journal.
	journal := func() (string, error) {
		c := exec.Command("nsenter", "-t", strconv.Itoa(pid), "-m", "journalctl", "-o", "json", "--no-pager")
		var out, errb bytes.Buffer
		c.Stdout, c.Stderr = &out, &errb
		err := c.Run()
		if err != nil {
			err = fmt.Errorf("%v: %s", err, errb.String())
		}
		return out.String(), err
	}
	var entries []map[string]any
	var raw string
	waitFor(t, wait, "the session's end in the test journal (ANTIDRIFT_STATE=locked with its ANTIDRIFT_SESSION_ID)", func() (bool, string) {
		var err error
		if raw, err = journal(); err != nil {
			t.Fatalf("journalctl: %v", err)
		}
		entries = entries[:0]
		ended := false
		for _, line := range strings.Split(raw, "\n") {
			if strings.TrimSpace(line) == "" {
				continue
			}
			var e map[string]any
			if err := json.Unmarshal([]byte(line), &e); err != nil {
				t.Fatalf("journalctl -o json line %q: %v", line, err)
			}
			if e["SYSLOG_IDENTIFIER"] != "antidriftd" {
				continue
			}
			entries = append(entries, e)
			if e["ANTIDRIFT_SESSION_ID"] == id && e["ANTIDRIFT_STATE"] == "locked" {
				ended = true
			}
		}
		return ended, fmt.Sprintf("%d entries from antidriftd, the last %v", len(entries), entries[max(0, len(entries)-1):])
	})
	var withID, fromDaemon int
	for _, e := range entries {
		if e["ANTIDRIFT_SESSION_ID"] == id {
			withID++
		}
		if p, _ := e["_PID"].(string); p == strconv.Itoa(pid) {
			fromDaemon++
		}
		if _, ok := e["PRIORITY"]; !ok {
			t.Errorf("a journal entry: got %v, want a PRIORITY field", e)
		}
	}
	if withID < 2 || fromDaemon == 0 {
		t.Fatalf("the test journal: got %d entries with ANTIDRIFT_SESSION_ID=%s, %d from the daemon, want several from pid %d with it:\n%s", withID, id, fromDaemon, pid, raw)
	}
	t.Logf("test journal: %d records from antidriftd, %d carrying ANTIDRIFT_SESSION_ID=%s", len(entries), withID, id)
	if strings.Contains(raw, "payroll") {
		t.Fatalf("the test journal: got\n%s\nwant no window titles (payroll)", raw)
	}

	// The seal is anchored in the journal: MESSAGE_ID is journald's own
	// field, with the head's seq and hash.
	var sealed map[string]any
	for _, e := range entries {
		if e["MESSAGE_ID"] == service.AuditHeadMessageID && e["ANTIDRIFT_SESSION_ID"] == id {
			sealed = e
		}
	}
	if sealed == nil || sealed["ANTIDRIFT_AUDIT_SEQ"] != "1" || len(fmt.Sprint(sealed["ANTIDRIFT_AUDIT_HASH"])) != 64 {
		t.Fatalf("the journal's seal entry: got %v, want one with MESSAGE_ID %s, ANTIDRIFT_AUDIT_SEQ 1 and a hash", sealed, service.AuditHeadMessageID)
	}
	// antidrift verify --journal finds it in audit.jsonl; and once
	// audit.jsonl no longer holds it (both files could have been rewritten
	// by then: the daemon's own anchor is not what catches it here), it
	// names the seal the journal kept.
	cli := testenv.Binary(t, "antidrift")
	verify := func() (string, error) {
		c := exec.Command("nsenter", "-t", strconv.Itoa(pid), "-m", cli, "verify", "--journal", "--state-dir", filepath.Join(dir, "state"))
		c.Env = bus.Env()
		out, err := c.CombinedOutput()
		return string(out), err
	}
	if out, err := verify(); err != nil || !strings.Contains(out, "The journal recorded 1 seal; audit.jsonl holds every one.") {
		t.Fatalf("verify --journal on a whole chain: %v\n%s", err, out)
	}
	if err := os.WriteFile(filepath.Join(dir, "state", "audit.jsonl"), nil, 0o600); err != nil {
		t.Fatal(err)
	}
	if out, err := verify(); err == nil || !strings.Contains(out, "the journal recorded seq 1 (hash "+fmt.Sprint(sealed["ANTIDRIFT_AUDIT_HASH"])[:8]) {
		t.Fatalf("verify --journal on an emptied audit.jsonl: %v\n%s", err, out)
	}
}

// TestMakeDemo runs `make demo` headless, as a newcomer would, and checks
// that it tells the whole story: the iconified distraction, the nudge, the
// end hash and a verified audit log; that it exits 0; and that it leaves no
// process and no temp dir behind.
func TestMakeDemo(t *testing.T) {
	testenv.Need(t, "make", "dbus-daemon", "dbus-monitor", "busctl", "Xvfb", "xprop", "xdotool", "openbox", "dunst", "dunstctl", "xterm")
	if _, err := os.Stat(filepath.Join(repoRoot(t), "cmd", "antidrift")); err != nil {
		t.Skip("the demo drives the antidrift CLI, and cmd/antidrift does not exist yet")
	}
	marker := fmt.Sprintf("ANTIDRIFT_DEMO_TEST=%d-%d", os.Getpid(), time.Now().UnixNano())
	ctx, cancel := context.WithTimeout(context.Background(), 4*time.Minute)
	defer cancel()
	// BUILDDIR keeps the test's build out of the checkout's bin/.
	cmd := exec.CommandContext(ctx, "make", "--no-print-directory", "-C", repoRoot(t), "demo", "BUILDDIR="+t.TempDir())
	cmd.Env = append(os.Environ(), marker)
	cmd.SysProcAttr = &syscall.SysProcAttr{Setpgid: true}
	cmd.Cancel = func() error { return syscall.Kill(-cmd.Process.Pid, syscall.SIGTERM) }
	cmd.WaitDelay = 15 * time.Second
	var out bytes.Buffer
	cmd.Stdout, cmd.Stderr = &out, &out
	err := cmd.Run()
	text := out.String()
	if err != nil {
		t.Fatalf("make demo: %v\n%s", err, text)
	}
	for _, want := range []*regexp.Regexp{
		regexp.MustCompile(`WM_STATE Iconic`),
		regexp.MustCompile(`MinimizeCount: [1-9]`),
		regexp.MustCompile(`nudge sent \(dbus-monitor\): "Drifting: Distraction"`),
		regexp.MustCompile(`dunst history: "Drifting: Distraction"`),
		regexp.MustCompile(`(?m)^ +follow │ .*\bactive\b`),
		regexp.MustCompile(`(?m)^ +follow │ .*\breview\b`),
		regexp.MustCompile(`end hash: [0-9a-f]{64}\b`),
		regexp.MustCompile(`verify: ok`),
	} {
		if !want.MatchString(text) {
			t.Errorf("the demo's output: want a line matching %q (the output follows)", want)
		}
	}
	if t.Failed() {
		t.Fatalf("the demo's output: got\n%s\nwant the lines named above", text)
	}
	// Teardown: the temp dir it named is gone, and no process it started
	// (they all inherited the marker) is left.
	m := regexp.MustCompile(`a virtual desktop in (\S+)`).FindStringSubmatch(text)
	if m == nil {
		t.Fatalf("the demo's output: got\n%s\nwant it to name its temp dir (a virtual desktop in …)", text)
	}
	if _, err := os.Stat(m[1]); !os.IsNotExist(err) {
		t.Errorf("the demo's temp dir %s after it: got %v, want it gone", m[1], err)
	}
	var left []string
	deadline := time.Now().Add(10 * time.Second)
	for left = processesWith(marker); len(left) > 0 && time.Now().Before(deadline); left = processesWith(marker) {
		time.Sleep(50 * time.Millisecond)
	}
	if len(left) > 0 {
		t.Fatalf("the demo's processes after it: got\n%s\nwant none running", strings.Join(left, "\n"))
	}
}

// processesWith lists the live processes whose environment holds kv.
func processesWith(kv string) []string {
	var found []string
	ents, _ := os.ReadDir("/proc")
	for _, e := range ents {
		pid, err := strconv.Atoi(e.Name())
		if err != nil || pid == os.Getpid() {
			continue
		}
		env, err := os.ReadFile(filepath.Join("/proc", e.Name(), "environ"))
		if err != nil || !bytes.Contains(append(env, 0), []byte(kv+"\x00")) {
			continue
		}
		stat, _ := os.ReadFile(filepath.Join("/proc", e.Name(), "stat"))
		if f := strings.Fields(string(stat)); len(f) > 2 && f[2] == "Z" {
			continue // a zombie is gone, only not yet reaped
		}
		cmdline, _ := os.ReadFile(filepath.Join("/proc", e.Name(), "cmdline"))
		found = append(found, fmt.Sprintf("%d %s", pid, bytes.ReplaceAll(cmdline, []byte{0}, []byte{' '})))
	}
	return found
}
