package main

import (
	"bufio"
	"encoding/json"
	"fmt"
	"io"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/antidrift/antidrift/internal/testsupport/testenv"
)

// devtools is Chromium's DevTools protocol over --remote-debugging-pipe
// (NUL-terminated JSON on the browser's fds 3 and 4): the test's hands on
// KWin, which lets no ordinary client type (no virtual keyboard).
type devtools struct {
	mu      sync.Mutex
	w       io.Writer
	next    int
	replies map[int]chan json.RawMessage
}

func newDevtools(w io.Writer, r io.Reader) *devtools {
	d := &devtools{w: w, replies: map[int]chan json.RawMessage{}}
	go func() {
		br := bufio.NewReader(r)
		for {
			msg, err := br.ReadBytes(0)
			if err != nil {
				return
			}
			var m struct {
				ID     int             `json:"id"`
				Result json.RawMessage `json:"result"`
				Error  json.RawMessage `json:"error"`
			}
			if json.Unmarshal(msg[:len(msg)-1], &m) != nil || m.ID == 0 {
				continue // an event
			}
			d.mu.Lock()
			ch := d.replies[m.ID]
			delete(d.replies, m.ID)
			d.mu.Unlock()
			if ch != nil {
				if m.Error != nil {
					ch <- m.Error
				} else {
					ch <- m.Result
				}
			}
		}
	}()
	return d
}

// call sends method with params (in session, when not "") and returns the result.
func (d *devtools) call(t *testing.T, session, method string, params any) json.RawMessage {
	t.Helper()
	d.mu.Lock()
	d.next++
	id := d.next
	ch := make(chan json.RawMessage, 1)
	d.replies[id] = ch
	msg := map[string]any{"id": id, "method": method, "params": params}
	if session != "" {
		msg["sessionId"] = session
	}
	b, _ := json.Marshal(msg)
	_, err := d.w.Write(append(b, 0))
	d.mu.Unlock()
	if err != nil {
		t.Fatalf("devtools %s: %v", method, err)
	}
	select {
	case r := <-ch:
		return r
	case <-time.After(wait):
		t.Fatalf("devtools %s: got no answer within %v, want one", method, wait)
		return nil
	}
}

type devtoolsTarget struct {
	ID   string `json:"targetId"`
	Type string `json:"type"`
	URL  string `json:"url"`
}

func (d *devtools) targets(t *testing.T) []devtoolsTarget {
	t.Helper()
	var r struct {
		Targets []devtoolsTarget `json:"targetInfos"`
	}
	json.Unmarshal(d.call(t, "", "Target.getTargets", map[string]any{}), &r)
	return r.Targets
}

// page is the page target whose URL starts with prefix.
func (d *devtools) page(t *testing.T, prefix string) devtoolsTarget {
	t.Helper()
	var found devtoolsTarget
	testenv.WaitFor(t, wait, "a tab showing "+prefix, func() []devtoolsTarget { return d.targets(t) }, func(targets []devtoolsTarget) bool {
		for _, tg := range targets {
			if tg.Type == "page" && strings.HasPrefix(tg.URL, prefix) {
				found = tg
				return true
			}
		}
		return false
	})
	return found
}

// Chromium on KWin (Plasma's compositor, whose script is antidrift's eyes
// there): the consent button pressed, tabs brought to the front, and the
// same judgement as on sway — a url: rule judges two tabs of one window
// apart, and at block the drifting tab shows the extension's page while
// the window stays and is not minimized.
func TestChromiumTabsOnKWin(t *testing.T) {
	testenv.Need(t, "chromium")
	p := startPlasmaDesktop(t, testenv.Stable(testenv.KWinReleases), false, browserConfig)
	port := pages(t)
	work, distraction := pageURLs(port)

	home := t.TempDir()
	profile := filepath.Join(home, ".config", "chromium")
	manifest, _ := os.ReadFile("../../dist/native-messaging/chromium.json.in")
	os.MkdirAll(filepath.Join(profile, "NativeMessagingHosts"), 0o700)
	os.WriteFile(filepath.Join(profile, "NativeMessagingHosts", "org.antidrift.native_host.json"),
		[]byte(strings.ReplaceAll(string(manifest), "@BINDIR@/antidrift-native-host", testenv.Binary(t, "antidrift-native-host"))), 0o600)
	ext, _ := filepath.Abs("../../dist/webextension")
	toChrome, ours, err := os.Pipe()
	if err != nil {
		t.Fatal(err)
	}
	theirs, fromChrome, err := os.Pipe()
	if err != nil {
		t.Fatal(err)
	}
	cmd := exec.Command("chromium", "--ozone-platform=wayland", "--no-sandbox", "--disable-gpu", "--no-first-run",
		"--no-default-browser-check", "--disable-background-networking", "--disable-sync", "--disable-component-update",
		"--user-data-dir="+profile, "--load-extension="+ext, "--remote-debugging-pipe",
		fmt.Sprintf("--host-resolver-rules=MAP * 127.0.0.1:%d", port), "--disable-features=HttpsUpgrades,HttpsFirstBalancedModeAutoEnable",
		"--new-window", work, distraction)
	cmd.Env = append(os.Environ(), "HOME="+home, "DBUS_SESSION_BUS_ADDRESS="+p.bus.Address,
		"WAYLAND_DISPLAY="+p.kwin.Socket, "XDG_RUNTIME_DIR="+p.kwin.RuntimeDir)
	cmd.ExtraFiles = []*os.File{toChrome, fromChrome} // fds 3 and 4
	logf, _ := os.Create(filepath.Join(home, "chromium.log"))
	cmd.Stdout, cmd.Stderr = logf, logf
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	toChrome.Close()
	fromChrome.Close()
	t.Cleanup(func() {
		cmd.Process.Kill()
		cmd.Wait()
		if t.Failed() {
			b, _ := os.ReadFile(logf.Name())
			t.Logf("chromium's output:\n%s", b[max(0, len(b)-4000):])
		}
	})
	dt := newDevtools(ours, theirs)

	s := p.d.Session(t)
	waitProp(t, p.d, "CurrentClass", "chromium")
	consent := dt.page(t, "chrome-extension://fopagejekiabnkobjkkggigkgddpcehh/consent.html")
	if got := s.String(t, "SiteReason"); !strings.Contains(got, "no antidrift extension connected") {
		t.Fatalf("SiteReason before consent: got %q, want it to say no antidrift extension connected", got)
	}
	var att struct {
		Session string `json:"sessionId"`
	}
	json.Unmarshal(dt.call(t, "", "Target.attachToTarget", map[string]any{"targetId": consent.ID, "flatten": true}), &att)
	// Press the button (again, while the page is still loading).
	pressed := time.Time{}
	testenv.WaitFor(t, wait, "the extension to report once the person agreed (SiteReason without no antidrift extension connected)", func() string {
		if time.Since(pressed) > 2*time.Second {
			dt.call(t, att.Session, "Runtime.evaluate", map[string]any{"expression": `document.getElementById("agree")?.click()`, "userGesture": true})
			pressed = time.Now()
		}
		return s.String(t, "SiteReason")
	}, func(reason string) bool { return !strings.Contains(reason, "no antidrift extension connected") })

	workTab, distractionTab := dt.page(t, "http://github.test"), dt.page(t, "http://www.youtube.test")
	front := func(tg devtoolsTarget) { dt.call(t, "", "Target.activateTarget", map[string]any{"targetId": tg.ID}) }
	front(workTab)
	waitProp(t, p.d, "CurrentSite", "github.test/antidrift/antidrift/pull/3")
	front(distractionTab)
	waitProp(t, p.d, "CurrentSite", "www.youtube.test/watch")
	front(workTab)
	waitProp(t, p.d, "CurrentSite", "github.test/antidrift/antidrift/pull/3")

	startSession(t, s, "review the PR", "approved", 600, "block", "url:github.test/antidrift/*")
	waitProp(t, p.d, "Drift", "on_task")
	front(distractionTab)
	waitProp(t, p.d, "CurrentSite", "antidrift:")
	// The page is in front before Chromium has read its <title> (under
	// load, the window is titled by the page's address for a moment).
	browser := testenv.WaitFor(t, 10*time.Second, "the browser window titled by the block page", func() *testenv.WindowInfo {
		for _, w := range p.kwin.Windows(t) {
			if w.AppID == "chromium" {
				return &w
			}
		}
		return nil
	}, func(w *testenv.WindowInfo) bool {
		return w != nil && strings.HasPrefix(w.Title, "antidrift: back to work")
	})
	if browser.Minimized || !browser.Active {
		t.Fatalf("the browser window after the block: got %+v, want it active, not minimized, titled antidrift: back to work", browser)
	}
	front(workTab)
	waitProp(t, p.d, "CurrentSite", "github.test/antidrift/antidrift/pull/3")
	s.Call(t, "Complete", nil)
	front(distractionTab)
	waitProp(t, p.d, "CurrentSite", "www.youtube.test/watch")
}
