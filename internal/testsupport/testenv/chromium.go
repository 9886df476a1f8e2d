package testenv

import (
	"bytes"
	"context"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"syscall"
	"testing"
	"time"
)

// Rendered is what a real headless Chromium made of a page.
type Rendered struct {
	DOM string // the DOM after rendering (--dump-dom)
	// Log is Chromium's own log of both runs (--enable-logging=stderr):
	// console messages, failed and refused loads.
	Log string
	// Offline is true when Chromium ran in a network namespace of its
	// own, where no request can leave the machine.
	Offline bool
}

// browserTimeout bounds one Chromium run; a cold start on a loaded 2-core
// machine takes seconds.
const browserTimeout = 90 * time.Second

// RenderPage opens the file page in headless Chromium twice — once to dump
// the DOM, once to take a width×height PNG screenshot into screenshot — in
// a fresh profile and, where unshare can make one, a network namespace with
// no network at all. dark asks for prefers-color-scheme: dark.
func RenderPage(t testing.TB, page, screenshot string, width, height int, dark bool) Rendered {
	t.Helper()
	Need(t, "chromium", "unshare")
	page, err := filepath.Abs(page)
	if err != nil {
		t.Fatal(err)
	}
	shot, err := filepath.Abs(screenshot)
	if err != nil {
		t.Fatal(err)
	}
	prefix := offlinePrefix()
	if prefix == nil {
		t.Logf("unshare cannot make a network namespace here; Chromium runs with the network, and only its log and the page's CSP show that nothing was requested")
	}
	args := func(mode ...string) []string {
		a := append([]string{}, prefix...)
		a = append(a, "chromium", "--headless", "--no-sandbox", "--disable-gpu", "--disable-quic", "--no-first-run",
			"--disable-background-networking", "--disable-component-update", "--disable-sync", "--hide-scrollbars",
			"--enable-logging=stderr", "--v=0", "--user-data-dir="+tempDir(t),
			fmt.Sprintf("--window-size=%d,%d", width, height))
		if dark {
			a = append(a, "--force-dark-mode", "--blink-settings=preferredColorScheme=0")
		}
		return append(append(a, mode...), "file://"+page)
	}
	var r Rendered
	r.Offline = prefix != nil
	dom, log1 := runBrowser(t, args("--dump-dom"))
	_, log2 := runBrowser(t, args("--screenshot="+shot))
	r.DOM, r.Log = dom, log1+log2
	if info, err := os.Stat(shot); err != nil || info.Size() == 0 {
		t.Fatalf("chromium wrote no screenshot to %s: %v\n%s", shot, err, r.Log)
	}
	return r
}

// offlinePrefix is the command that runs a program in a new network
// namespace (only loopback, and that down), or nil when this machine
// refuses to make one: as root a plain one, otherwise inside a user
// namespace.
func offlinePrefix() []string {
	for _, p := range [][]string{{"unshare", "--net", "--"}, {"unshare", "--map-root-user", "--net", "--"}} {
		if exec.Command(p[0], append(p[1:], "true")...).Run() == nil {
			return p
		}
	}
	return nil
}

// runBrowser runs one Chromium command to completion in its own process
// group (killed on timeout with everything it spawned) and returns its
// stdout and stderr.
func runBrowser(t testing.TB, argv []string) (stdout, stderr string) {
	t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), browserTimeout)
	defer cancel()
	cmd := exec.CommandContext(ctx, argv[0], argv[1:]...)
	// No bus: Chromium would otherwise talk to the desktop's session bus.
	cmd.Env = withEnv(os.Environ(), ownerMark(), "DBUS_SESSION_BUS_ADDRESS=disabled:", "DBUS_SYSTEM_BUS_ADDRESS=disabled:")
	cmd.SysProcAttr = &syscall.SysProcAttr{Setpgid: true, Pdeathsig: syscall.SIGKILL}
	cmd.Cancel = func() error { return syscall.Kill(-cmd.Process.Pid, syscall.SIGKILL) }
	cmd.WaitDelay = 2 * time.Second
	var out, errb bytes.Buffer
	cmd.Stdout, cmd.Stderr = &out, &errb
	err := cmd.Run()
	if cmd.Process != nil {
		syscall.Kill(-cmd.Process.Pid, syscall.SIGKILL)
	}
	if err != nil {
		t.Fatalf("%s: %v (timeout %v)\n%s", strconv.Quote(argv[len(argv)-2]), err, browserTimeout, errb.String())
	}
	return out.String(), errb.String()
}
