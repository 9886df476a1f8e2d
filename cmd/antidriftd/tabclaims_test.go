package main

import (
	"bufio"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/antidrift/antidrift/internal/testsupport/testenv"
)

const (
	prURL   = "https://github.com/antidrift/antidrift/pull/3?token=SECRET"
	prSite  = "github.com/antidrift/antidrift/pull/3"
	prTitle = "Tabs, not windows #3"
	ffTail  = " - Mozilla Firefox"
)

// tabWorld is a desktop (X, openbox, an editor and a browser window: an
// xterm of class firefox-esr titled as Firefox titles its windows) and a
// daemon in a session at block that allows the pull request by url: (and
// the editor), the
// browser's extension's real native host (started by a stand-in browser,
// over its stdio protocol) reporting the pull request in front.
type tabWorld struct {
	*desktop
	s       *testenv.Session
	browser uint32
	host    *testenv.NativeHost
	id      string
}

func startTabWorld(t *testing.T) *tabWorld {
	t.Helper()
	testenv.NeedBrowserStandIn(t)
	k := startDesktop(t, false, "drift_grace = \"0s\"\ndistractions = [\"url:*.youtube.com\"]\n")
	w := &tabWorld{desktop: k, s: k.d.Session(t)}
	w.browser = k.x.XTerm(t, "firefox-esr", prTitle+ffTail)
	k.x.Activate(t, w.browser)
	waitProp(t, k.d, "CurrentClass", "firefox-esr")
	w.host = testenv.StartNativeHost(t, k.bus.Env(), "firefox-esr")
	w.host.Tab(t, prURL, prTitle)
	waitProp(t, k.d, "CurrentSite", prSite)
	w.id = startSession(t, w.s, "review the PR", "approved", 600, "block", "url:github.com/antidrift/*", "Editor")
	waitProp(t, k.d, "Drift", "on_task")
	return w
}

// stillOnTheWork checks that the browser window is still judged by the
// work tab the real extension reported: its site, on task, nothing
// minimized, the window not iconified.
func (w *tabWorld) stillOnTheWork(t *testing.T, after string) {
	t.Helper()
	time.Sleep(200 * time.Millisecond) // what a wrong belief would need to show; the checks below do not depend on it
	site, drift := w.s.String(t, "CurrentSite"), w.s.String(t, "Drift")
	minimized := testenv.Prop[uint32](t, w.s, "MinimizeCount")
	if site != prSite || drift != "on_task" || minimized != 0 {
		t.Fatalf("after %s: got site %q, drift %s (%s), minimized %d; want %q, on_task, none minimized",
			after, site, drift, w.s.String(t, "DriftReason"), minimized, prSite)
	}
	if state := w.x.WMState(t, w.browser); state != "Normal" {
		t.Fatalf("after %s: the browser window's WM_STATE: got %s, want Normal", after, state)
	}
}

// forge calls Evidence1's method with args as gdbus, another bus client.
func (w *tabWorld) forge(t *testing.T, method string, args ...string) error {
	t.Helper()
	_, err := w.bus.Run(t, "gdbus", append([]string{"call", "--session", "--dest", "org.antidrift", "--object-path", "/org/antidrift/Session1",
		"--method", "org.antidrift.Evidence1." + method}, args...)...)
	return err
}

// refusedHost has the real host, started by the stand-in program
// launcher, report a distraction titled as the work tab: antidrift refuses
// it, the host says so, and the work is still judged as it was.
func (w *tabWorld) refusedHost(t *testing.T, launcher string) {
	t.Helper()
	h := testenv.StartNativeHost(t, w.bus.Env(), launcher)
	h.Tab(t, "https://www.youtube.com/watch?v=1", prTitle)
	testenv.WaitFor(t, wait, "the host to say antidrift refused its report", h.Stderr, func(s string) bool {
		return strings.Contains(s, "did not take the tab report") && strings.Contains(s, "not a browser's own program")
	})
	h.Close()
	w.stillOnTheWork(t, "a report through a host "+launcher+" started")
}

// rawLogLines counts the lines of the session's raw log.
func (w *tabWorld) rawLogLines(t *testing.T) int {
	t.Helper()
	f, err := os.Open(filepath.Join(w.d.StateDir, "sessions", w.id+".jsonl"))
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	n := 0
	for sc := bufio.NewScanner(f); sc.Scan(); {
		n++
	}
	return n
}

// Who may report a tab, and for which window (docs/evidence.md): each case
// starts from the real extension's host reporting the work tab in front,
// then tries to make antidrift believe something else about it.
func TestTabReportsAreBelievedOnlyFromTheBrowsersOwnHost(t *testing.T) {
	testenv.Need(t, "gdbus")
	for _, c := range []struct {
		name string
		run  func(t *testing.T, w *tabWorld)
	}{
		{"a second host of the same browser starts and exits", func(t *testing.T, w *tabWorld) {
			// Another Firefox's host (LibreWolf, or a second Firefox): it
			// reports a page, says its browser is gone, and exits.
			other := testenv.StartNativeHost(t, w.bus.Env(), "librewolf")
			other.Tab(t, "https://www.youtube.com/watch?v=1", "Cat videos - YouTube")
			other.Close()
			w.stillOnTheWork(t, "a second host's ForgetTabs and exit")
		}},
		{"a second profile of the same family keeps its own claims", func(t *testing.T, w *tabWorld) {
			second := testenv.StartNativeHost(t, w.bus.Env(), "firefox-esr")
			cats := w.x.XTerm(t, "firefox-esr", "Cat videos - YouTube"+ffTail)
			second.Tab(t, "https://www.youtube.com/watch?v=1", "Cat videos - YouTube")
			w.x.Activate(t, cats)
			waitProp(t, w.d, "CurrentSite", "www.youtube.com/watch")
			waitProp(t, w.d, "Drift", "drifting")
			if m := second.Next(t, wait, "the block of the second profile's tab"); m["type"] != "block" || m["site"] != "www.youtube.com/watch" {
				t.Fatalf("the second profile's host relayed: got %v, want a block of www.youtube.com/watch", m)
			}
			second.Tab(t, "antidrift:blocked", "antidrift: back to work")
			w.x.SetTitle(t, cats, "antidrift: back to work"+ffTail)
			waitProp(t, w.d, "CurrentSite", "antidrift:")
			w.x.Activate(t, w.browser)
			w.stillOnTheWork(t, "switching back to the first profile's window")
			second.Close()
			w.stillOnTheWork(t, "the second profile closing")
		}},
		{"a report forged by another bus client is refused", func(t *testing.T, w *tabWorld) {
			err := w.forge(t, "ReportTab", "firefox", "1", "https", "www.youtube.com", "/watch", prTitle, "false")
			if err == nil || !strings.Contains(err.Error(), "org.freedesktop.DBus.Error.AccessDenied") || !strings.Contains(err.Error(), "only from antidrift-native-host started by a browser") {
				t.Fatalf("gdbus ReportTab: got %v, want AccessDenied saying a tab report is believed only from antidrift-native-host started by a browser", err)
			}
			w.stillOnTheWork(t, "a forged ReportTab")
			if err := w.forge(t, "ForgetTabs", "firefox"); err == nil || !strings.Contains(err.Error(), "AccessDenied") {
				t.Fatalf("gdbus ForgetTabs: got %v, want AccessDenied", err)
			}
			w.stillOnTheWork(t, "a forged ForgetTabs")
		}},
		{"the host run by a program that is not a browser is refused", func(t *testing.T, w *tabWorld) {
			w.refusedHost(t, "not-a-browser")
		}},
		{"a host xdg-native-messaging-proxy started is refused unless flatpak_browsers is on", func(t *testing.T, w *tabWorld) {
			// The proxy starts a host for any program that asks it; the
			// person opts in to believing it (TestFlatpakFirefoxReachesTheHostThroughTheProxy).
			w.refusedHost(t, "xdg-native-messaging-proxy")
		}},
		{"a report forged while the editor is in front, then the switch back", func(t *testing.T, w *tabWorld) {
			w.x.Activate(t, w.editor)
			waitProp(t, w.d, "CurrentClass", "Editor")
			if err := w.forge(t, "ReportTab", "firefox", "1", "https", "www.youtube.com", "/watch", prTitle, "false"); err == nil {
				t.Fatal("gdbus ReportTab while the editor is in front: got success, want AccessDenied")
			}
			fake := testenv.StartNativeHost(t, w.bus.Env(), "not-a-browser")
			fake.Tab(t, "https://www.youtube.com/watch?v=1", prTitle)
			fake.Close()
			w.x.Activate(t, w.browser)
			waitProp(t, w.d, "CurrentClass", "firefox-esr")
			w.stillOnTheWork(t, "switching back to the browser")
		}},
		{"a flood of reports is rate-bounded and never holds back the window", func(t *testing.T, w *tabWorld) {
			before := w.rawLogLines(t)
			start := time.Now()
			// Two pages of the same title, both fitting the window in
			// front: every report taken would be a line of the raw log.
			const n = 4000
			for i := range n {
				if i%2 == 0 {
					w.host.Tab(t, "https://github.com/antidrift/antidrift/pull/3/files", prTitle)
				} else {
					w.host.Tab(t, prURL, prTitle)
				}
				if i == n/2 {
					w.x.Activate(t, w.editor) // the window's own evidence, mid-flood
				}
			}
			waitProp(t, w.d, "CurrentClass", "Editor")
			w.x.Activate(t, w.browser)
			// The host passes the flood on as fast as the daemon answers;
			// a last page says when it is through (the newest wins).
			w.host.Tab(t, "https://github.com/antidrift/antidrift/pull/3/commits", prTitle)
			waitProp(t, w.d, "CurrentSite", "github.com/antidrift/antidrift/pull/3/commits")
			elapsed := time.Since(start)
			lines := w.rawLogLines(t) - before
			// The bound: a burst of 4, then one report every 250 ms, and
			// the two focus changes (each a line, and the no-focus moment
			// the window manager passes through between) and the last page.
			bound := 4 + int(elapsed/(250*time.Millisecond)) + 1 + 6 + 1
			t.Logf("%d reports in %v: %d raw log lines (bound %d)", n, elapsed, lines, bound)
			if lines > bound {
				t.Fatalf("a flood of %d reports over %v: got %d raw log lines, want at most %d", n, elapsed, lines, bound)
			}
			w.host.Tab(t, prURL, prTitle)
			waitProp(t, w.d, "CurrentSite", prSite)
			w.stillOnTheWork(t, "the flood")
		}},
	} {
		t.Run(c.name, func(t *testing.T) {
			w := startTabWorld(t)
			c.run(t, w)
		})
	}
}
