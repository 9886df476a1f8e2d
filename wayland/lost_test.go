package wayland

import (
	"errors"
	"math/rand/v2"
	"net"
	"path/filepath"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/antidrift/antidrift/internal/testsupport/testenv"
	"github.com/antidrift/antidrift/service"
)

// When sway dies the sensor says so and the guard refuses to act; when sway
// is back on the same socket the evidence comes back, with handles that
// cannot be confused with the old connection's.
func TestSwayLostAndBack(t *testing.T) {
	testenv.EachRelease(t, testenv.SwayReleases, testSwayLostAndBack)
}

func testSwayLostAndBack(t *testing.T, rel testenv.Release) {
	sw := testenv.StartSwayRelease(t, rel)
	w, g := withGuard(t, sw)
	sw.Foot(t, "Editor", "notes.txt")
	before := w.waitClass(t, "Editor", "notes.txt")

	sw.Kill()
	lost := w.waitFor(t, "unavailable after sway died", func(win service.Window) bool { return !win.Available })
	if !strings.Contains(lost.Reason, "lost the Wayland compositor") {
		t.Errorf("reason while sway is gone: got %q, want it to say it lost the Wayland compositor", lost.Reason)
	}
	if g.Available() {
		t.Error("the guard says it is available while sway is gone")
	}
	if err := g.MinimizeWindow(guardCtx(t), before.ID); err == nil || errors.Is(err, service.ErrNotActive) {
		t.Errorf("MinimizeWindow while sway is gone = %v, want a connection error", err)
	}

	sw.Restart(t)
	sw.Foot(t, "Editor", "notes.txt")
	after := w.waitClass(t, "Editor", "notes.txt")
	if after.ID == before.ID {
		t.Errorf("the new connection's handle: got %q, want one other than the old %q", after.ID, before.ID)
	}
	testenv.WaitUntil(t, waitTimeout, "the guard to be available again", g.Available)
}

// A "compositor" that sends garbage never crashes the sensor: it says the
// evidence is unavailable and keeps reconnecting.
func TestGarbageFromTheCompositor(t *testing.T) {
	rng := rand.New(rand.NewPCG(1, 2))
	path, accepted := listen(t, func(c net.Conn) {
		// A header whose size cannot be, then noise; the connection
		// stays open, so only the garbage can end it.
		b := []byte{1, 0, 0, 0, 0, 0, 5, 0}
		for range 4096 {
			b = append(b, byte(rng.Uint32()))
		}
		c.Write(b)
	})

	w := runSensor(t, NewSensor(path, testenv.Logger()))
	bad := w.waitFor(t, "unavailable evidence", func(win service.Window) bool { return win.Reason != "" })
	if bad.Available || !strings.Contains(bad.Reason, "malformed") {
		t.Errorf("after garbage: got %+v, want unavailable, malformed", bad)
	}
	testenv.WaitFor(t, waitTimeout, "a second connection (connections accepted to be at least 2)", accepted, func(n int) bool { return n >= 2 })
}

// A compositor that accepts the connection and never answers is reported as
// such, while the sensor keeps waiting for it.
func TestSilentCompositor(t *testing.T) {
	path, _ := listen(t, func(net.Conn) {})
	s := NewSensor(path, testenv.Logger())
	s.slowDial = 50 * time.Millisecond
	w := runSensor(t, s)
	got := w.waitFor(t, "a report", func(win service.Window) bool { return win.Reason != "" })
	if want := "the Wayland compositor at " + path + " does not answer; still waiting"; got.Available || got.Reason != want {
		t.Errorf("silent compositor: got %+v, want unavailable, %q", got, want)
	}
}

// Without WAYLAND_DISPLAY the sensor says so once, and the idle watcher
// never reports; both return when asked to.
func TestNoDisplay(t *testing.T) {
	w := runSensor(t, NewSensor("", testenv.Logger()))
	got := w.waitFor(t, "a report", func(win service.Window) bool { return win.Reason != "" })
	if !strings.Contains(got.Reason, "WAYLAND_DISPLAY is not set") {
		t.Errorf("no display: got %+v, want it to say WAYLAND_DISPLAY is not set", got)
	}
	states := make(chan bool, 1)
	runIdle(t, NewIdleWatcher("", time.Minute, testenv.Logger()), states)
	select {
	case idle := <-states:
		t.Errorf("the idle watcher without a display: got a report %v, want none", idle)
	case <-time.After(100 * time.Millisecond):
	}
}

// listen is a socket standing in for a compositor: serve gets each
// connection in turn, which stays open until the test ends. accepted
// counts the connections so far.
func listen(t *testing.T, serve func(net.Conn)) (path string, accepted func() int) {
	path = filepath.Join(t.TempDir(), "wayland-fake")
	ln, err := net.Listen("unix", path)
	if err != nil {
		t.Fatal(err)
	}
	var (
		mu    sync.Mutex
		conns []net.Conn
	)
	t.Cleanup(func() {
		ln.Close()
		mu.Lock()
		defer mu.Unlock()
		for _, c := range conns {
			c.Close()
		}
	})
	go func() {
		for {
			c, err := ln.Accept()
			if err != nil {
				return
			}
			mu.Lock()
			conns = append(conns, c)
			mu.Unlock()
			serve(c)
		}
	}()
	return path, func() int {
		mu.Lock()
		defer mu.Unlock()
		return len(conns)
	}
}
