package testenv

import (
	"bytes"
	"encoding/binary"
	"encoding/json"
	"fmt"
	"hash/fnv"
	"io"
	"net/url"
	"os"
	"os/exec"
	"path/filepath"
	"sync"
	"testing"
	"time"
)

// NativeHost is antidrift-native-host as a browser runs it: the real
// binary, started as the child of a stand-in for the browser's own program
// (internal/testsupport/browserstandin, built under the browser's
// executable name, e.g. firefox-esr), so that the daemon, which believes
// tab reports only from a host a browser started (internal/nativehost),
// believes it; the test talks the native messaging protocol on its stdin
// and stdout, as the extension does.
type NativeHost struct {
	Cmd *exec.Cmd // the stand-in browser; the host is its child
	in  io.WriteCloser
	// Relayed receives what the host writes to the extension, one message
	// each.
	Relayed chan map[string]any

	mu     sync.Mutex
	stderr bytes.Buffer
	closed bool
}

// Browser programs StartNativeHost can stand in for, and the arguments each
// starts the host with.
var nativeHostArgs = map[string][]string{
	"firefox-esr": {"/home/me/.mozilla/native-messaging-hosts/org.antidrift.native_host.json", "browser@antidrift.github.io"},
	"firefox":     {"/home/me/.mozilla/native-messaging-hosts/org.antidrift.native_host.json", "browser@antidrift.github.io"},
	"librewolf":   {"/home/me/.librewolf/native-messaging-hosts/org.antidrift.native_host.json", "browser@antidrift.github.io"},
	"chromium":    {"chrome-extension://fopagejekiabnkobjkkggigkgddpcehh/"},
	"chrome":      {"chrome-extension://fopagejekiabnkobjkkggigkgddpcehh/"},
	// Not a browser: a program of the user's that runs the host itself.
	"not-a-browser": {"/home/me/.mozilla/native-messaging-hosts/org.antidrift.native_host.json", "browser@antidrift.github.io"},
	// Not a browser either: the program that starts a host for a Flatpak
	// Firefox, believed only when the person opts in (flatpak_browsers).
	"xdg-native-messaging-proxy": {"/home/me/.mozilla/native-messaging-hosts/org.antidrift.native_host.json", "browser@antidrift.github.io"},
}

// NeedBrowserStandIn skips a test that needs a stand-in browser the daemon
// believes: the daemon believes a browser program only when the user it
// runs as could not have written it, unless that user is root, so only
// root can build one.
func NeedBrowserStandIn(t testing.TB) {
	t.Helper()
	if os.Geteuid() != 0 {
		msg := fmt.Sprintf("a stand-in browser the daemon believes must be a file the user cannot write, so it needs root; running as uid %d", os.Geteuid())
		if os.Getenv(RequireEnv) == "require" {
			t.Fatalf("%s=require but %s", RequireEnv, msg)
		}
		t.Skipf("%s (set %s=require to fail instead of skipping)", msg, RequireEnv)
	}
}

// StartNativeHost starts antidrift-native-host as the browser program
// browser (a key of nativeHostArgs: "firefox-esr", "chromium", …) starts
// it, with env (the bus's: DBUS_SESSION_BUS_ADDRESS). Closing it (Close,
// or the test's end) closes its stdin: the browser closed the port.
func StartNativeHost(t testing.TB, env []string, browser string) *NativeHost {
	t.Helper()
	return startNativeHost(t, browser, func(argv []string) *exec.Cmd {
		cmd := exec.Command(argv[0], argv[1:]...)
		cmd.Env = env
		return cmd
	})
}

// startNativeHost starts the stand-in browser and its host with the
// command command makes of the stand-in's argv.
func startNativeHost(t testing.TB, browser string, command func(argv []string) *exec.Cmd) *NativeHost {
	t.Helper()
	NeedBrowserStandIn(t)
	args, ok := nativeHostArgs[browser]
	if !ok {
		t.Fatalf("StartNativeHost: no stand-in for browser %q", browser)
	}
	standIn := build(t, "./internal/testsupport/browserstandin", filepath.Join("browsers", browser, browser))
	cmd := command(append([]string{standIn, Binary(t, "antidrift-native-host")}, args...))
	in, err := cmd.StdinPipe()
	if err != nil {
		t.Fatal(err)
	}
	out, err := cmd.StdoutPipe()
	if err != nil {
		t.Fatal(err)
	}
	h := &NativeHost{Cmd: cmd, in: in, Relayed: make(chan map[string]any, 64)}
	cmd.Stderr = &lockedWriter{mu: &h.mu, w: &h.stderr}
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	go func() {
		for {
			var head [4]byte
			if _, err := io.ReadFull(out, head[:]); err != nil {
				return
			}
			body := make([]byte, binary.NativeEndian.Uint32(head[:]))
			if _, err := io.ReadFull(out, body); err != nil {
				return
			}
			var m map[string]any
			if json.Unmarshal(body, &m) == nil {
				select {
				case h.Relayed <- m:
				default: // nobody reads: dropped, as a test that does not look does not care
				}
			}
		}
	}()
	t.Cleanup(func() { h.Close() })
	return h
}

type lockedWriter struct {
	mu *sync.Mutex
	w  io.Writer
}

func (l *lockedWriter) Write(b []byte) (int, error) {
	l.mu.Lock()
	defer l.mu.Unlock()
	return l.w.Write(b)
}

// Send writes one message to the host, as the extension's postMessage.
func (h *NativeHost) Send(t testing.TB, msg map[string]any) {
	t.Helper()
	b, err := json.Marshal(msg)
	if err != nil {
		t.Fatal(err)
	}
	frame := binary.NativeEndian.AppendUint32(nil, uint32(len(b)))
	if _, err := h.in.Write(append(frame, b...)); err != nil {
		t.Fatalf("writing to the native host: %v\n%s", err, h.Stderr())
	}
}

// Tab reports the active tab of the browser's focused window, as the
// extension does (TabMessage).
func (h *NativeHost) Tab(t testing.TB, rawURL, title string) {
	t.Helper()
	h.Send(t, TabMessage(t, rawURL, title))
}

// TabMessage is the extension's message for a tab showing rawURL: its id
// (TabID) and the address split as the browser's parser splits it. Go's
// parser stands in for the browser's on the plain addresses tests use
// (the hard ones are testdata/site-vectors.json's); an "antidrift:" page
// is the extension's own.
func TabMessage(t testing.TB, rawURL, title string) map[string]any {
	t.Helper()
	u, err := url.Parse(rawURL)
	if err != nil || u.Scheme == "" {
		t.Fatalf("TabMessage: %q is not an address (%v)", rawURL, err)
	}
	m := map[string]any{"type": "tab", "tab_id": TabID(rawURL), "scheme": u.Scheme, "host": "", "path": "", "title": title}
	if u.Scheme == "http" || u.Scheme == "https" {
		m["host"], m["path"] = u.Hostname(), u.EscapedPath()
	}
	return m
}

// TabID is the id a stand-in browser gives the tab showing rawURL: one
// per address.
func TabID(rawURL string) int64 {
	f := fnv.New32a()
	f.Write([]byte(rawURL))
	return int64(f.Sum32()&0xffff) + 1
}

// Private reports that the browser's focused window is private, as the
// extension does by default.
func (h *NativeHost) Private(t testing.TB) {
	t.Helper()
	h.Send(t, map[string]any{"type": "tab", "private": true})
}

// Next is the next message the host relayed to the extension.
func (h *NativeHost) Next(t testing.TB, wait time.Duration, what string) map[string]any {
	t.Helper()
	select {
	case m := <-h.Relayed:
		return m
	case <-time.After(wait):
		t.Fatalf("the native host relayed: got nothing within %v, want %s\n%s", wait, what, h.Stderr())
		return nil
	}
}

// Stderr is what the host (and its stand-in browser) wrote to the
// browser's console.
func (h *NativeHost) Stderr() string {
	h.mu.Lock()
	defer h.mu.Unlock()
	return h.stderr.String()
}

// Close closes the host's stdin (the browser closed the port) and waits
// for it to exit.
func (h *NativeHost) Close() {
	h.mu.Lock()
	closed := h.closed
	h.closed = true
	h.mu.Unlock()
	if closed {
		return
	}
	h.in.Close()
	done := make(chan struct{})
	go func() { h.Cmd.Wait(); close(done) }()
	select {
	case <-done:
	case <-time.After(10 * time.Second):
		h.Cmd.Process.Kill()
		<-done
	}
}
