package bench

import (
	"bufio"
	"context"
	"fmt"
	"math/rand/v2"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/godbus/dbus/v5"
	"github.com/jezek/xgb"
	"github.com/jezek/xgb/xproto"

	"github.com/antidrift/antidrift/internal/testsupport/testenv"
)

// BenchmarkFocusChange measures how long a change of the active window (or
// of its title) takes to reach a D-Bus client of the real antidriftd, side
// by side with two peers watching the very same changes:
//
//   - xprop -spy: the event-driven floor, an X client woken by the same
//     PropertyNotify the daemon's sensor gets, with no D-Bus in between;
//   - a 1 Hz poller of _NET_ACTIVE_WINDOW (and the active window's title),
//     the design of ActivityWatch's window watcher. It is measured for real
//     on the last -poller-samples changes, each held until the poller saw
//     it, and analytically on every change (the wait for its next tick).
//
// t0 is taken just before the benchmark's own X connection sends the change
// (a _NET_ACTIVE_WINDOW client message to openbox, as a pager sends, or a
// ChangeProperty of _NET_WM_NAME on the active window); each observer
// timestamps the moment it has the new value in hand. One op is the whole
// batch of samples; the figures are the reported metrics.
func BenchmarkFocusChange(b *testing.B) {
	testenv.Need(b, "dbus-daemon", "Xvfb", "openbox", "xterm", "xdotool", "xprop")
	k := startDesk(b, false)

	b.Run("switch/state=locked", func(b *testing.B) { k.measure(b, modeSwitch) })
	b.Run("title/state=locked", func(b *testing.B) { k.measure(b, modeTitle) })
	k.startSession(b)
	b.Run("switch/state=active", func(b *testing.B) { k.measure(b, modeSwitch) })
	b.Run("title/state=active", func(b *testing.B) { k.measure(b, modeTitle) })
	b.Run("dbus-signal-hop", func(b *testing.B) { signalHop(b, k.bus.Address) })
	b.Run("rawlog", func(b *testing.B) { k.rawLog(b) })
	b.Run("rss", func(b *testing.B) {
		after := rssMB(b, k.pid)
		for b.Loop() {
		}
		b.ReportMetric(k.rssStart, "start_MB")
		b.ReportMetric(after, "after_MB")
		b.ReportMetric(float64(k.events), "events_seen")
	})
}

type mode int

const (
	modeSwitch mode = iota // activate the other window
	modeTitle              // retitle the active window
)

// stamped is something an observer saw, and when.
type stamped struct {
	at  time.Time
	val string
}

// desk is the desktop under test: a private bus, Xvfb + openbox with two
// xterms, antidriftd watching it, and the observers.
type desk struct {
	bus      *testenv.Bus
	x        *testenv.Display
	pid      int    // the daemon's: ours when it runs in-process
	stateDir string // the daemon's
	output   func() string
	win      [2]uint32
	class    [2]string
	rssStart float64
	events   int // focus changes made

	xc                             *xgb.Conn
	root                           xproto.Window
	netActive, netWMName, utf8Type xproto.Atom

	dbusConn  *dbus.Conn
	daemon    chan stamped // "class\x00title" of each PropertiesChanged carrying either
	xpropWin  chan stamped // xprop -spy -root _NET_ACTIVE_WINDOW: the window id
	xpropTtl  chan stamped // xprop -spy -id <win 0> _NET_WM_NAME: the title
	poller    *poller
	title     string // the current title of window 0
	sessionID string // the session the active-state runs account to
	noPoller  bool   // skip the slow samples held for the real poller
}

func startDesk(b *testing.B, inProcess bool) *desk {
	b.Helper()
	k := &desk{bus: testenv.StartBus(b), x: testenv.StartX(b), class: [2]string{"BenchA", "BenchB"}}
	k.win[0] = k.x.XTerm(b, k.class[0], "bench window A")
	k.win[1] = k.x.XTerm(b, k.class[1], "bench window B")
	k.x.Activate(b, k.win[0])
	k.title = "bench window A"

	var err error
	if k.xc, err = xgb.NewConnDisplay(k.x.Name); err != nil {
		b.Fatal(err)
	}
	b.Cleanup(k.xc.Close)
	k.root = xproto.Setup(k.xc).DefaultScreen(k.xc).Root
	k.netActive = intern(b, k.xc, "_NET_ACTIVE_WINDOW")
	k.netWMName = intern(b, k.xc, "_NET_WM_NAME")
	k.utf8Type = intern(b, k.xc, "UTF8_STRING")

	k.dbusConn = k.subscribe(b)
	k.stateDir = filepath.Join(b.TempDir(), "state")
	if inProcess {
		startInProcess(b, k.bus.Address, k.x.Name, k.stateDir)
		k.pid, k.output = os.Getpid(), func() string { return "(in-process)" }
	} else {
		d := testenv.StartDaemon(b, k.bus, k.stateDir, "DISPLAY="+k.x.Name)
		k.pid, k.output = d.PID(), d.Output
	}
	k.expectDaemon(b, time.Time{}, k.class[0], "", 30*time.Second)
	k.rssStart = rssMB(b, k.pid)

	k.xpropWin = spy(b, k.x.Name, `# (0x[0-9a-f]+)`, "xprop", "-spy", "-root", "_NET_ACTIVE_WINDOW")
	k.xpropTtl = spy(b, k.x.Name, `= "(.*)"$`, "xprop", "-spy", "-id", fmt.Sprintf("%#x", k.win[0]), "_NET_WM_NAME")
	k.poller = startPoller(b, k.x.Name)
	return k
}

func intern(b *testing.B, c *xgb.Conn, name string) xproto.Atom {
	r, err := xproto.InternAtom(c, false, uint16(len(name)), name).Reply()
	if err != nil {
		b.Fatal(err)
	}
	return r.Atom
}

// subscribe connects a godbus client to the bus and stamps every
// PropertiesChanged of the daemon's object as it arrives.
func (k *desk) subscribe(b *testing.B) *dbus.Conn {
	conn, ch := subscribeDaemon(b, k.bus.Address)
	k.daemon = ch
	return conn
}

// subscribeDaemon connects a godbus client to the bus at address and
// stamps every PropertiesChanged of the daemon's object that carries
// CurrentClass or CurrentTitle as it arrives, as "class\x00title" (\x01 for
// the one not in the signal).
func subscribeDaemon(b *testing.B, address string) (*dbus.Conn, chan stamped) {
	conn, err := dbus.Connect(address)
	if err != nil {
		b.Fatal(err)
	}
	b.Cleanup(func() { conn.Close() })
	if err := conn.AddMatchSignal(dbus.WithMatchObjectPath("/org/antidrift/Session1"),
		dbus.WithMatchInterface("org.freedesktop.DBus.Properties"), dbus.WithMatchMember("PropertiesChanged")); err != nil {
		b.Fatal(err)
	}
	out := make(chan stamped, 1<<16)
	sigs := make(chan *dbus.Signal, 1<<16)
	conn.Signal(sigs)
	go func() {
		for s := range sigs {
			at := time.Now()
			if len(s.Body) < 2 {
				continue
			}
			changed, _ := s.Body[1].(map[string]dbus.Variant)
			class, hasClass := changed["CurrentClass"]
			title, hasTitle := changed["CurrentTitle"]
			if !hasClass && !hasTitle {
				continue
			}
			var c, t string
			if hasClass {
				c, _ = class.Value().(string)
			} else {
				c = "\x01" // unchanged
			}
			if hasTitle {
				t, _ = title.Value().(string)
			} else {
				t = "\x01"
			}
			out <- stamped{at, c + "\x00" + t}
		}
	}()
	return conn, out
}

// spy runs an xprop -spy and stamps every line it prints, keeping the first
// submatch of re.
func spy(b *testing.B, display, re string, name string, args ...string) chan stamped {
	cmd := exec.Command(name, args...)
	cmd.Env = append(os.Environ(), "DISPLAY="+display)
	return spyOn(b, cmd, re, true)
}

// spyOn starts cmd, an observer that prints a line per change (xprop -spy,
// swaymsg -m), and stamps each line, keeping the first submatch of re;
// lines re does not match are dropped. With readyLine, the first line it
// prints says it is listening (xprop prints the current value) and spyOn
// waits for it; without, the caller makes sure it listens.
func spyOn(b *testing.B, cmd *exec.Cmd, re string, readyLine bool) chan stamped {
	rx := regexp.MustCompile(re)
	name, args := cmd.Args[0], cmd.Args[1:]
	cmd.SysProcAttr = &syscall.SysProcAttr{Setpgid: true, Pdeathsig: syscall.SIGKILL}
	out, err := cmd.StdoutPipe()
	if err != nil {
		b.Fatal(err)
	}
	if err := cmd.Start(); err != nil {
		b.Fatal(err)
	}
	b.Cleanup(func() { cmd.Process.Kill(); cmd.Wait() })
	ch := make(chan stamped, 1<<16)
	ready := make(chan struct{})
	go func() {
		sc := bufio.NewScanner(out)
		first := readyLine
		for sc.Scan() {
			at := time.Now()
			if first { // xprop prints the current value once it is listening
				close(ready)
				first = false
				continue
			}
			if m := rx.FindStringSubmatch(sc.Text()); m != nil {
				ch <- stamped{at, m[1]}
			}
		}
	}()
	if !readyLine {
		return ch
	}
	select {
	case <-ready:
	case <-time.After(10 * time.Second):
		b.Fatalf("%s %v: got nothing printed within 10 s, want a ready line", name, args)
	}
	return ch
}

// poller is a 1 Hz poller of the active window and its title, with its own
// X connection: what ActivityWatch's aw-watcher-window does.
type poller struct {
	start  time.Time // tick k is at start + k s
	period time.Duration
	seen   chan stamped // "id\x00title" of each poll
}

func startPoller(b *testing.B, display string) *poller {
	c, err := xgb.NewConnDisplay(display)
	if err != nil {
		b.Fatal(err)
	}
	netActive, netWMName := intern(b, c, "_NET_ACTIVE_WINDOW"), intern(b, c, "_NET_WM_NAME")
	root := xproto.Setup(c).DefaultScreen(c).Root
	ctx, cancel := context.WithCancel(context.Background())
	done := make(chan struct{})
	b.Cleanup(func() { cancel(); <-done; c.Close() })
	p := &poller{period: time.Second, seen: make(chan stamped, 1<<12), start: time.Now()}
	t := time.NewTicker(p.period)
	go func() {
		defer close(done)
		defer t.Stop()
		for {
			select {
			case <-ctx.Done():
				return
			case <-t.C:
			}
			r, err := xproto.GetProperty(c, false, root, netActive, xproto.GetPropertyTypeAny, 0, 1).Reply()
			if err != nil || r == nil || len(r.Value) < 4 {
				continue
			}
			id := xgb.Get32(r.Value)
			title := ""
			if tr, err := xproto.GetProperty(c, false, xproto.Window(id), netWMName, xproto.GetPropertyTypeAny, 0, 1024).Reply(); err == nil && tr != nil {
				title = string(tr.Value)
			}
			// Every poll, changed or not: a sample asks for the first poll
			// after its change that shows it.
			select {
			case p.seen <- stamped{time.Now(), fmt.Sprintf("%#x\x00%s", id, title)}:
			case <-ctx.Done():
				return
			}
		}
	}()
	return p
}

// nextTick is when a 1 Hz poller that started at p.start first polls after t.
func (p *poller) nextTick(t time.Time) time.Time {
	n := t.Sub(p.start)/p.period + 1
	return p.start.Add(n * p.period)
}

// expectDaemon waits for a PropertiesChanged stamped at or after t0 saying
// the current window is class (and, if title is not empty, has that title).
func (k *desk) expectDaemon(b *testing.B, t0 time.Time, class, title string, timeout time.Duration) time.Time {
	b.Helper()
	return awaitDaemon(b, k.daemon, k.output, t0, class, title, timeout)
}

// awaitDaemon is expectDaemon on the stamps of subscribeDaemon; output is
// the daemon's log, for the failure message.
func awaitDaemon(b *testing.B, ch chan stamped, output func() string, t0 time.Time, class, title string, timeout time.Duration) time.Time {
	b.Helper()
	deadline := time.After(timeout)
	for {
		select {
		case s := <-ch:
			if s.at.Before(t0) {
				continue
			}
			c, t, _ := strings.Cut(s.val, "\x00")
			if title == "" && c == class || title != "" && t == title {
				return s.at
			}
		case <-deadline:
			b.Fatalf("antidriftd's announcements: got no window %s %q, want it\n%s", class, title, output())
		}
	}
}

func expect(b *testing.B, what string, ch chan stamped, t0 time.Time, want string, timeout time.Duration) time.Time {
	b.Helper()
	deadline := time.After(timeout)
	for {
		select {
		case s := <-ch:
			if !s.at.Before(t0) && s.val == want {
				return s.at
			}
		case <-deadline:
			b.Fatalf("%s never saw %q", what, want)
		}
	}
}

// change makes sample i's change and returns t0 and what each observer
// should see.
func (k *desk) change(i int, m mode) (t0 time.Time, class, title, xpropVal string, xprop chan stamped) {
	if m == modeSwitch {
		target := (i + 1) % 2 // window 0 is active when a run starts
		ev := xproto.ClientMessageEvent{
			Format: 32,
			Window: xproto.Window(k.win[target]),
			Type:   k.netActive,
			// source 2 = a pager, which openbox obeys at once; time 0 = now.
			Data: xproto.ClientMessageDataUnionData32New([]uint32{2, 0, 0, 0, 0}),
		}
		t0 = time.Now()
		xproto.SendEvent(k.xc, false, k.root,
			xproto.EventMaskSubstructureRedirect|xproto.EventMaskSubstructureNotify, string(ev.Bytes()))
		k.events++
		return t0, k.class[target], "", fmt.Sprintf("%#x", k.win[target]), k.xpropWin
	}
	title = fmt.Sprintf("bench title %d-%d", k.events, i)
	t0 = time.Now()
	xproto.ChangeProperty(k.xc, xproto.PropModeReplace, xproto.Window(k.win[0]), k.netWMName, k.utf8Type,
		8, uint32(len(title)), []byte(title))
	k.events++
	k.title = title
	return t0, k.class[0], title, title, k.xpropTtl
}

// measure runs -focus-samples changes of kind m: the fast ones back to back
// (the next change once both the daemon and xprop saw the last), then the
// last -poller-samples at a random phase, each held until the poller saw it.
func (k *desk) measure(b *testing.B, m mode) {
	// Start from window 0 active, and let everyone see it.
	k.x.Activate(b, k.win[0])
	time.Sleep(200 * time.Millisecond)
	drain(k.daemon, k.xpropWin, k.xpropTtl, k.poller.seen)
	n, slow := *focusSamples, min(*pollerSamples, *focusSamples)
	if k.noPoller {
		slow = 0
	}
	if n%2 == 1 {
		n++ // end on window 0
	}
	var daemon, xprop, over, analytic, pollerD, daemonSlow, xpropSlow dist
	var cpu time.Duration
	for b.Loop() {
		daemon, xprop, over, analytic, pollerD, daemonSlow, xpropSlow = nil, nil, nil, nil, nil, nil, nil
		cpu0 := cpuTime(b, k.pid)
		for i := range n {
			isSlow := i >= n-slow
			if isSlow {
				time.Sleep(time.Duration(rand.Int64N(int64(time.Second))))
			}
			t0, class, title, want, xch := k.change(i, m)
			td := k.expectDaemon(b, t0, class, title, 10*time.Second)
			tx := expect(b, "xprop", xch, t0, want, 10*time.Second)
			daemon, xprop, over = append(daemon, td.Sub(t0)), append(xprop, tx.Sub(t0)), append(over, td.Sub(tx))
			analytic = append(analytic, k.poller.nextTick(tx).Sub(t0))
			if isSlow {
				wantPoll := fmt.Sprintf("%#x\x00", k.win[0]) + title
				if m == modeSwitch {
					wantPoll = fmt.Sprintf("%#x\x00", k.win[(i+1)%2])
				}
				tp := k.expectPoller(b, t0, wantPoll, m == modeSwitch)
				pollerD = append(pollerD, tp.Sub(t0))
				daemonSlow, xpropSlow = append(daemonSlow, td.Sub(t0)), append(xpropSlow, tx.Sub(t0))
			}
		}
		cpu = cpuTime(b, k.pid) - cpu0
	}
	reportChanges(b, len(daemon), cpu)
	reportDist(b, "antidriftd", daemon)
	reportDist(b, "xprop", xprop)
	b.ReportMetric(ratio(daemon.pct(50), xprop.pct(50)), "antidriftd/xprop_p50")
	b.ReportMetric(ms(over.pct(50)), "antidriftd-xprop_p50_ms")
	b.ReportMetric(ms(analytic.pct(50)), "poll1Hz_model_p50_ms")
	b.ReportMetric(ms(pollerD.pct(50)), "poll1Hz_real_p50_ms")
	// The poller's changes come after an idle gap of up to a second, as
	// real ones do; the back-to-back ones above find every process awake.
	b.ReportMetric(ms(daemonSlow.pct(50)), "antidriftd_after_idle_p50_ms")
	b.ReportMetric(ms(xpropSlow.pct(50)), "xprop_after_idle_p50_ms")
	b.ReportMetric(float64(len(pollerD)), "poll1Hz_real_samples")
	b.ReportMetric(ratio(pollerD.pct(50), daemonSlow.pct(50)), "poll1Hz/antidriftd_p50")
}

// reportChanges reports how many changes a run made and the daemon's CPU
// time per change (cpu over the run).
func reportChanges(b *testing.B, n int, cpu time.Duration) {
	b.ReportMetric(float64(n), "samples")
	b.ReportMetric(float64(cpu.Microseconds())/float64(max(n, 1)), "antidriftd_cpu_us/change")
}

// reportDist reports d's p50, p99 and max as <name>_p50_ms, _p99_ms and
// _max_ms.
func reportDist(b *testing.B, name string, d dist) {
	b.ReportMetric(ms(d.pct(50)), name+"_p50_ms")
	b.ReportMetric(ms(d.pct(99)), name+"_p99_ms")
	b.ReportMetric(ms(d.pct(100)), name+"_max_ms")
}

// expectPoller waits for the poller to report want (a prefix match for a
// switch, where the title is whatever xterm has).
func (k *desk) expectPoller(b *testing.B, t0 time.Time, want string, prefix bool) time.Time {
	b.Helper()
	deadline := time.After(5 * time.Second)
	for {
		select {
		case s := <-k.poller.seen:
			if s.at.Before(t0) {
				continue
			}
			if s.val == want || prefix && strings.HasPrefix(s.val, want) {
				return s.at
			}
		case <-deadline:
			b.Fatalf("the 1 Hz poller never saw %q", want)
		}
	}
}

func drain(chs ...chan stamped) {
	for _, ch := range chs {
		for len(ch) > 0 {
			<-ch
		}
	}
}

func (k *desk) startSession(b *testing.B) {
	obj := k.dbusConn.Object("org.antidrift", "/org/antidrift/Session1")
	var id string
	if err := obj.Call("org.antidrift.Session1.Start", 0, "benchmark", "figures written",
		uint64(4*3600), "observe", k.class[:]).Store(&id); err != nil {
		b.Fatal(err)
	}
	k.sessionID = id
}

// rawLog reports the size of the real daemon's raw log per line: every
// focus event it accounted during the active-state sub-benchmarks.
func (k *desk) rawLog(b *testing.B) {
	if k.sessionID == "" {
		b.Skip("no session ran")
	}
	path := filepath.Join(k.stateDir, "sessions", k.sessionID+".jsonl")
	var size, lines int
	for b.Loop() {
		data, err := os.ReadFile(path)
		if err != nil {
			b.Fatal(err)
		}
		size, lines = len(data), strings.Count(string(data), "\n")
	}
	b.ReportMetric(float64(size)/float64(max(lines, 1)), "B/event")
	b.ReportMetric(float64(lines), "events")
}

// signalHop is the floor of the daemon's last leg: one godbus connection
// emits a PropertiesChanged-shaped signal, the bus relays it, another
// godbus connection receives it. -focus-samples of them, one at a time.
func signalHop(b *testing.B, address string) {
	emitter, err := dbus.Connect(address)
	if err != nil {
		b.Fatal(err)
	}
	defer emitter.Close()
	receiver, err := dbus.Connect(address)
	if err != nil {
		b.Fatal(err)
	}
	defer receiver.Close()
	if err := receiver.AddMatchSignal(dbus.WithMatchObjectPath("/org/antidrift/BenchHop"),
		dbus.WithMatchInterface("org.freedesktop.DBus.Properties")); err != nil {
		b.Fatal(err)
	}
	sigs := make(chan *dbus.Signal, 1<<12)
	receiver.Signal(sigs)
	var hops dist
	for b.Loop() {
		hops = nil
		for i := range *focusSamples {
			title := fmt.Sprintf("bench title %d", i)
			changed := map[string]dbus.Variant{"CurrentTitle": dbus.MakeVariant(title), "CurrentClass": dbus.MakeVariant("BenchA")}
			t0 := time.Now()
			if err := emitter.Emit("/org/antidrift/BenchHop", "org.freedesktop.DBus.Properties.PropertiesChanged",
				"org.antidrift.Session1", changed, []string{}); err != nil {
				b.Fatal(err)
			}
			for got := false; !got; {
				select {
				case s := <-sigs:
					m, _ := s.Body[1].(map[string]dbus.Variant)
					got = m["CurrentTitle"].Value() == title
				case <-time.After(10 * time.Second):
					b.Fatal("the signal never arrived")
				}
			}
			hops = append(hops, time.Since(t0))
		}
	}
	b.ReportMetric(float64(len(hops)), "samples")
	b.ReportMetric(ms(hops.pct(50)), "p50_ms")
	b.ReportMetric(ms(hops.pct(99)), "p99_ms")
}
