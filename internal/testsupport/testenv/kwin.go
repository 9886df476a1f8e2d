package testenv

import (
	"context"
	"crypto/rand"
	_ "embed"
	"encoding/hex"
	"encoding/json"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"sync"
	"syscall"
	"testing"

	"github.com/godbus/dbus/v5"
)

// KWin is KWin 6 (kwin_wayland --virtual; 6.3 from Debian 13, 6.7 from
// testing) running headless in a suite's rootfs on a private bus, as the compositor of a Plasma session is: it owns
// org.kde.KWin on that bus and its Wayland socket is under RuntimeDir, which
// the host sees at the same path.
type KWin struct {
	Bus        *Bus
	Socket     string // WAYLAND_DISPLAY
	RuntimeDir string // XDG_RUNTIME_DIR, shared with its clients (and the daemon under test)

	rootfs *Rootfs
	home   string
	proc   *Process

	// queries: a connection of the test's own that query scripts answer.
	conn    *dbus.Conn
	mu      sync.Mutex
	answers map[string]chan string
}

//go:embed testdata/kwin-query.js
var kwinQueryScript string

// NeedKWinRootfs is the rootfs of rel (one of KWinReleases or
// PlasmaReleases), checked to ship rel's version; StartKWin takes it.
func NeedKWinRootfs(t testing.TB, rel Release) *Rootfs {
	t.Helper()
	r := NeedSuiteRootfs(t, rel.Suite)
	CheckRelease(t, r, rel)
	return r
}

// StartKWin starts KWin on b and waits until it owns org.kde.KWin. The bus
// socket must be under /tmp, which the rootfs shares, for KWin to reach it.
func StartKWin(t testing.TB, r *Rootfs, b *Bus) *KWin {
	t.Helper()
	if !strings.HasPrefix(b.Address, "unix:path=/tmp/") {
		t.Fatalf("the private bus %s is not under /tmp, so KWin in the rootfs cannot reach it (is TMPDIR set?)", b.Address)
	}
	k := &KWin{Bus: b, rootfs: r, RuntimeDir: r.TempDir(t), home: r.TempDir(t), answers: map[string]chan string{}}
	// Wayland and Qt want the runtime directory private.
	if err := os.Chmod(k.RuntimeDir, 0o700); err != nil {
		t.Fatal(err)
	}
	k.Socket = "wayland-antidrift-" + filepath.Base(k.RuntimeDir)
	k.conn = b.Dial(t)
	err := k.conn.ExportMethodTable(map[string]any{"Answer": k.answer}, "/", "org.antidrift.test.KWinQuery")
	if err != nil {
		t.Fatal(err)
	}
	k.Start(t)
	return k
}

func (k *KWin) env() []string {
	return []string{"DBUS_SESSION_BUS_ADDRESS=" + k.Bus.Address, "XDG_RUNTIME_DIR=" + k.RuntimeDir, "HOME=" + k.home}
}

// Start starts KWin (again, after Kill) and waits until it owns its name.
func (k *KWin) Start(t testing.TB) {
	t.Helper()
	k.proc = k.rootfs.Start(t, k.home, 0, append(k.env(), "QT_QPA_PLATFORM=offscreen", "LANG=C.UTF-8"),
		"kwin_wayland", "--virtual", "--no-lockscreen", "--no-global-shortcuts", "--no-kactivities",
		"--width", "1280", "--height", "800", "--socket", k.Socket)
	k.Bus.waitForOwner(t, "KWin", "org.kde.KWin", k.proc.p)
}

// Kill ends KWin (SIGKILL, as a crash would) and waits until its name is
// gone from the bus. Its windows die with it.
func (k *KWin) Kill(t testing.TB) {
	t.Helper()
	syscall.Kill(k.proc.PID(), syscall.SIGKILL)
	k.proc.Stop()
	WaitUntil(t, readyTimeout, "org.kde.KWin to leave the bus", func() bool { return k.Bus.OwnerPID(t, "org.kde.KWin") == 0 })
}

// Output is what KWin logged so far (print() in scripts goes there too).
func (k *KWin) Output() string { return k.proc.Output() }

// Window opens a GTK 4 window with appID and title and waits until KWin
// lists it. It gets focus, as a new window does.
func (k *KWin) Window(t testing.TB, appID, title string) *Window {
	t.Helper()
	w := startWindow(t, k.rootfs, 0, append(k.env(), "WAYLAND_DISPLAY="+k.Socket), appID, title)
	WaitUntil(t, readyTimeout, "KWin to list the "+appID+" window", func() bool {
		w.exited(t)
		for _, info := range k.Windows(t) {
			if info.AppID == appID && info.Title == title {
				w.ID = info.ID
				return true
			}
		}
		return false
	})
	return w
}

// WindowInfo is what KWin says about one window.
type WindowInfo struct {
	ID        string `json:"id"`
	AppID     string `json:"app_id"`
	Title     string `json:"title"`
	Minimized bool   `json:"minimized"`
	Active    bool   `json:"active"`
}

// Windows asks KWin for its windows through a one-shot script.
func (k *KWin) Windows(t testing.TB) []WindowInfo {
	t.Helper()
	return k.query(t, "")
}

// Info is what KWin says about w now.
func (k *KWin) Info(t testing.TB, w *Window) WindowInfo {
	t.Helper()
	for _, info := range k.Windows(t) {
		if info.ID == w.ID {
			return info
		}
	}
	t.Fatalf("KWin no longer lists the %s window %s", w.AppID, w.ID)
	return WindowInfo{}
}

// Activate gives w focus as a person clicking it would (un-minimizing it).
func (k *KWin) Activate(t testing.TB, w *Window) {
	t.Helper()
	k.query(t, w.ID)
	WaitUntil(t, readyTimeout, "the "+w.AppID+" window to be active", func() bool { return k.Info(t, w).Active })
}

// query runs testdata/kwin-query.js (activating window activate first,
// unless it is "") and returns its answer.
func (k *KWin) query(t testing.TB, activate string) []WindowInfo {
	t.Helper()
	var b [8]byte
	rand.Read(b[:])
	token := hex.EncodeToString(b[:])
	ch := make(chan string, 1)
	k.mu.Lock()
	k.answers[token] = ch
	k.mu.Unlock()
	defer func() {
		k.mu.Lock()
		delete(k.answers, token)
		k.mu.Unlock()
	}()
	text := strings.NewReplacer("@ACTIVATE@", activate, "@REPLY_TO@", k.conn.Names()[0], "@TOKEN@", token).Replace(kwinQueryScript)
	path := filepath.Join(k.RuntimeDir, "query-"+token+".js")
	if err := os.WriteFile(path, []byte(text), 0o600); err != nil {
		t.Fatal(err)
	}
	defer os.Remove(path)
	name := "antidrift-test-query-" + token
	ctx, cancel := context.WithTimeout(context.Background(), readyTimeout)
	defer cancel()
	scripting := k.conn.Object("org.kde.KWin", "/Scripting")
	var id int32
	if err := scripting.CallWithContext(ctx, "org.kde.kwin.Scripting.loadScript", 0, path, name).Store(&id); err != nil || id < 0 {
		t.Fatalf("loading a query script into KWin: id %d, %v\n%s", id, err, k.Output())
	}
	defer scripting.CallWithContext(ctx, "org.kde.kwin.Scripting.unloadScript", 0, name)
	if err := scripting.CallWithContext(ctx, "org.kde.kwin.Scripting.start", 0).Err; err != nil {
		t.Fatalf("starting a query script in KWin: %v", err)
	}
	select {
	case answer := <-ch:
		var out []WindowInfo
		if err := json.Unmarshal([]byte(answer), &out); err != nil {
			t.Fatalf("KWin's query answer %q: %v", answer, err)
		}
		return out
	case <-ctx.Done():
		t.Fatalf("KWin did not answer a query script within %v\n%s", readyTimeout, k.Output())
		return nil
	}
}

func (k *KWin) answer(token, body string) *dbus.Error {
	k.mu.Lock()
	ch := k.answers[token]
	k.mu.Unlock()
	if ch == nil {
		return dbus.NewError("org.antidrift.test.Error.UnknownToken", []any{token})
	}
	select {
	case ch <- body:
	default:
	}
	return nil
}

// String names KWin for failure messages.
func (k *KWin) String() string { return fmt.Sprintf("KWin on %s (%s)", k.Socket, k.Bus.Address) }
