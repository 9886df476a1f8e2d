// Package nativehost tells whether a process is antidrift's native
// messaging host started by a browser, as the kernel tells it (/proc): the
// one rule by which the daemon believes a browser's tab reports
// (docs/evidence.md, "Who may report a tab").
//
// A process is such a host when
//
//   - its executable is the antidrift-native-host installed beside the
//     daemon (the same file; after an upgrade replaced it, the same path,
//     which the kernel marks "(deleted)"), and
//   - its parent process runs a browser's own executable: a file named as
//     Firefox's or Chromium's main program (BrowserExecutables) that the
//     caller's user could not have written (owned by root or another user,
//     writable by nobody else), unless the daemon itself runs as root.
//
// That is what a browser does when its extension connects: it starts the
// host named in the host's manifest as its own child, over a pipe. Another
// program of the same user can run the host, but then it is the host's
// parent; it can copy a program under a browser's name, but not into a
// file the user cannot write. What the rule cannot tell apart is a real
// browser run for the purpose (its own profile, the extension loaded,
// pages of the attacker's choosing), or one whose code was changed at run
// time (LD_PRELOAD, ptrace): the user's own programs can do that, and the
// core still believes such a report only for the window in front whose
// title it fits.
package nativehost

import (
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"slices"
	"strconv"
	"strings"
	"syscall"
)

// Name is the host's executable's name.
const Name = "antidrift-native-host"

// Browser families, as the core names them (service.BrowserFirefox, …).
const (
	Firefox  = "firefox"
	Chromium = "chromium"
)

// BrowserExecutables maps the names of the browsers' main programs, as
// /proc/<pid>/exe shows them, to their family: Debian's
// /usr/lib/firefox-esr/firefox-esr, /usr/lib/chromium/chromium, Mozilla's
// tarballs' firefox (Developer Edition and Nightly too), Google's
// /opt/google/chrome/chrome.
var BrowserExecutables = map[string]string{
	"firefox":          Firefox,
	"firefox-esr":      Firefox,
	"firefox-bin":      Firefox,
	"librewolf":        Firefox,
	"chromium":         Chromium,
	"chromium-browser": Chromium,
	"chrome":           Chromium,
}

// FamilyOfArgs is the browser family that started a host with args (its
// arguments after the program's name): Chromium passes the calling
// extension's origin (chrome-extension://…/), Firefox the path of the
// host's manifest and the extension's id. The host reads its own
// arguments so (cmd/antidrift-native-host), and Identify a launcher's
// host's.
func FamilyOfArgs(args []string) string {
	for _, a := range args {
		if strings.HasPrefix(a, "chrome-extension://") {
			return Chromium
		}
	}
	return Firefox
}

// FlatpakProxy is the program that starts a host for a Flatpak Firefox
// (157 and later): xdg-native-messaging-proxy, a Launcher when the person
// opts in (config.toml's flatpak_browsers).
const FlatpakProxy = "xdg-native-messaging-proxy"

// Host is a native host as the kernel describes it.
type Host struct {
	PID        int
	Browser    string // the family of the browser that started it
	BrowserPID int
	BrowserExe string // the browser's executable, for messages
}

// Checker tells hosts from other processes.
type Checker struct {
	// HostExe is the path of the antidrift-native-host the daemon
	// believes (symlinks are resolved at each Identify; "" believes none).
	HostExe string
	// Proc is where the proc filesystem is mounted ("/proc" when "").
	Proc string
	// UID is the user the daemon runs as: a browser executable that user
	// could have written is not believed, unless it is root.
	UID int
	// Launchers are the names of programs that start a host on a
	// browser's behalf (xdg-native-messaging-proxy, for Flatpak browsers),
	// believed as a browser is when listed here: the family is then what
	// the host's own arguments say (FamilyOfArgs). None by default: such a
	// program starts a host for any client that asks it over the bus, so
	// believing it believes every program of the user (docs/evidence.md).
	Launchers []string
}

// Beside is the Checker for the host installed beside the running
// executable (the daemon's), for the user it runs as.
func Beside() (Checker, error) {
	self, err := os.Executable()
	if err != nil {
		return Checker{}, fmt.Errorf("finding the daemon's own executable: %w", err)
	}
	return Checker{HostExe: filepath.Join(filepath.Dir(self), Name), UID: os.Getuid()}, nil
}

// ErrNotAHost is what every refusal of Identify is (errors.Is).
var ErrNotAHost = errors.New("not antidrift's native host started by a browser")

// refusal says why a process is not a host, in a person's words.
type refusal struct{ why string }

func (r *refusal) Error() string        { return r.why }
func (r *refusal) Is(target error) bool { return target == ErrNotAHost }

func refuse(format string, args ...any) error {
	return &refusal{why: fmt.Sprintf(format, args...)}
}

// Identify says whether process pid is antidrift's native host started by
// a browser, and which; the error (errors.Is ErrNotAHost) says in a
// person's words why not.
func (c Checker) Identify(pid int) (Host, error) {
	proc := c.Proc
	if proc == "" {
		proc = "/proc"
	}
	if pid <= 0 {
		return Host{}, refuse("the bus does not know its process")
	}
	want, err := filepath.EvalSymlinks(c.HostExe)
	if c.HostExe == "" || err != nil {
		return Host{}, refuse("this antidriftd finds no %s beside it (%s), so it believes no tab reports", Name, c.HostExe)
	}
	exe, err := executable(proc, pid)
	if err != nil {
		return Host{}, refuse("its process %d cannot be read (%v)", pid, err)
	}
	if exe != want && !sameFile(filepath.Join(proc, strconv.Itoa(pid), "exe"), want) {
		return Host{}, refuse("its process %d runs %s, not %s", pid, exe, want)
	}
	ppid, err := parent(proc, pid)
	if err != nil {
		return Host{}, refuse("the parent of its process %d cannot be read (%v)", pid, err)
	}
	pexe, err := executable(proc, ppid)
	if err != nil {
		return Host{}, refuse("the process that started it (%d) cannot be read (%v)", ppid, err)
	}
	family, ok := BrowserExecutables[filepath.Base(pexe)]
	if !ok && slices.Contains(c.Launchers, filepath.Base(pexe)) {
		args, err := arguments(proc, pid)
		if err != nil {
			return Host{}, refuse("the arguments of its process %d cannot be read (%v)", pid, err)
		}
		family, ok = FamilyOfArgs(args), true
	}
	if !ok {
		return Host{}, refuse("it was started by %s (process %d), which is not a browser's own program (%s)", pexe, ppid, knownNames())
	}
	if c.UID != 0 {
		var st syscall.Stat_t
		if err := syscall.Stat(filepath.Join(proc, strconv.Itoa(ppid), "exe"), &st); err != nil {
			return Host{}, refuse("the browser that started it, %s, cannot be examined (%v)", pexe, err)
		}
		if int(st.Uid) == c.UID || st.Mode&0o022 != 0 {
			return Host{}, refuse("the browser that started it, %s, is a file your user could have written (any program of yours could have put it there); antidrift believes a browser installed for the system", pexe)
		}
	}
	return Host{PID: pid, Browser: family, BrowserPID: ppid, BrowserExe: pexe}, nil
}

// sameFile says whether a and b are one file (a process in another mount
// namespace shows its executable under another path).
func sameFile(a, b string) bool {
	sa, err := os.Stat(a)
	if err != nil {
		return false
	}
	sb, err := os.Stat(b)
	return err == nil && os.SameFile(sa, sb)
}

// executable is the path process pid runs, without the kernel's
// " (deleted)" mark of a file replaced since it started.
func executable(proc string, pid int) (string, error) {
	exe, err := os.Readlink(filepath.Join(proc, strconv.Itoa(pid), "exe"))
	if err != nil {
		return "", err
	}
	return strings.TrimSuffix(exe, " (deleted)"), nil
}

// arguments are process pid's arguments after its program's name.
func arguments(proc string, pid int) ([]string, error) {
	b, err := os.ReadFile(filepath.Join(proc, strconv.Itoa(pid), "cmdline"))
	if err != nil {
		return nil, err
	}
	args := strings.Split(strings.TrimRight(string(b), "\x00"), "\x00")
	if len(args) == 0 {
		return nil, nil
	}
	return args[1:], nil
}

// parent is the parent process of pid, from /proc/<pid>/stat (the fourth
// field, after the command name in parentheses, which may hold anything).
func parent(proc string, pid int) (int, error) {
	b, err := os.ReadFile(filepath.Join(proc, strconv.Itoa(pid), "stat"))
	if err != nil {
		return 0, err
	}
	i := strings.LastIndexByte(string(b), ')')
	if i < 0 {
		return 0, fmt.Errorf("%s/%d/stat: no command name", proc, pid)
	}
	f := strings.Fields(string(b[i+1:]))
	if len(f) < 2 {
		return 0, fmt.Errorf("%s/%d/stat: too short", proc, pid)
	}
	ppid, err := strconv.Atoi(f[1])
	if err != nil || ppid <= 0 {
		return 0, fmt.Errorf("%s/%d/stat: no parent", proc, pid)
	}
	return ppid, nil
}

func knownNames() string {
	names := make([]string, 0, len(BrowserExecutables))
	for n := range BrowserExecutables {
		names = append(names, n)
	}
	slices.Sort(names)
	return strings.Join(names, ", ")
}
