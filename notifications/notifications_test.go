package notifications

import (
	"context"
	"errors"
	"fmt"
	"log/slog"
	"os"
	"path/filepath"
	"regexp"
	"slices"
	"strconv"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/godbus/dbus/v5"

	"github.com/antidrift/antidrift/internal/testsupport/testenv"
	"github.com/antidrift/antidrift/service"
)

// driftNote is the drift nudge as the core sends it.
func driftNote(summary string) service.Notification {
	return service.Notification{
		Summary:  summary,
		Body:     "This does not look like your task.",
		Category: "antidrift.drift",
		Urgency:  1,
		Actions: []service.Action{
			{Key: "refocus", Label: "Back to work"},
			{Key: "allow", Label: "Allow Distraction"},
		},
		NoActionsHint: "Run `antidrift refocus` or `antidrift allow`.",
	}
}

type action struct {
	id  uint32
	key string
}

// client is the code under test on its own connection to bus, with the
// actions it reports.
type client struct {
	n       *Client
	conn    *dbus.Conn
	actions chan action
}

func newClient(t *testing.T, bus *testenv.Bus) *client {
	t.Helper()
	conn, err := dbus.Connect(bus.Address)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { conn.Close() })
	c := &client{conn: conn, actions: make(chan action, 16)}
	log := slog.New(slog.NewTextHandler(logWriter{t}, &slog.HandlerOptions{Level: slog.LevelDebug}))
	c.n, err = New(conn, log, func(id uint32, key string) { c.actions <- action{id, key} })
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() {
		if err := c.n.Shutdown(); err != nil {
			t.Errorf("Shutdown: %v", err)
		}
	})
	return c
}

// notify calls Notify with a timeout and fails the test on error.
func (c *client) notify(t *testing.T, note service.Notification) uint32 {
	t.Helper()
	id, err := c.n.Notify(timeout(t, 10*time.Second), note)
	if err != nil {
		t.Fatalf("Notify: %v", err)
	}
	if id == 0 {
		t.Fatal("Notify returned id 0")
	}
	return id
}

// nextAction waits for onAction.
func (c *client) nextAction(t *testing.T) action {
	t.Helper()
	select {
	case a := <-c.actions:
		return a
	case <-time.After(30 * time.Second):
		t.Fatal("onAction was not called within 30s")
		return action{}
	}
}

func timeout(t *testing.T, d time.Duration) context.Context {
	ctx, cancel := context.WithTimeout(context.Background(), d)
	t.Cleanup(cancel)
	return ctx
}

// logWriter sends the code's log lines to the test log.
type logWriter struct{ t *testing.T }

func (w logWriter) Write(p []byte) (int, error) {
	w.t.Log(strings.TrimRight(string(p), "\n"))
	return len(p), nil
}

// notificationsTraffic makes dbus-monitor show every call to and signal
// from a notification server.
var notificationsTraffic = []string{
	"type='method_call',interface='org.freedesktop.Notifications'",
	"type='signal',interface='org.freedesktop.Notifications'",
}

// monitorArgs returns the argument lines of one dbus-monitor message block,
// trimmed, without the header.
func monitorArgs(block string) []string {
	var args []string
	for _, line := range strings.Split(block, "\n")[1:] {
		if line = strings.TrimSpace(line); line != "" {
			args = append(args, line)
		}
	}
	return args
}

// monitorHeader starts each message in dbus-monitor's output.
var monitorHeader = regexp.MustCompile(`(?m)^(method call|method return|signal|error) time=`)

// calls returns the calls of method member that sender made, as they
// appear in dbus-monitor output out.
func calls(out, sender, member string) []string {
	var calls []string
	starts := monitorHeader.FindAllStringIndex(out, -1)
	for i, st := range starts {
		end := len(out)
		if i+1 < len(starts) {
			end = starts[i+1][0]
		}
		m := out[st[0]:end]
		header, _, _ := strings.Cut(m, "\n")
		if strings.HasPrefix(header, "method call") && strings.Contains(header, " sender="+sender+" ") &&
			strings.HasSuffix(header, "; member="+member) {
			calls = append(calls, m)
		}
	}
	return calls
}

// ourCalls returns the calls of member that c has made so far.
func (c *client) ourCalls(mon *testenv.Monitor, member string) []string {
	return calls(mon.Output(), c.conn.Names()[0], member)
}

// waitCall waits until the monitor has seen the n-th (from 1) call of
// member by c, and returns it once dbus-monitor has written all of it.
func (c *client) waitCall(t *testing.T, mon *testenv.Monitor, member string, n int) string {
	t.Helper()
	var found, prev string
	testenv.WaitFor(t, 10*time.Second, fmt.Sprintf("%s call #%d on the bus, written whole", member, n), func() callsSeen {
		out := mon.Output()
		stable := out == prev && strings.HasSuffix(out, "\n")
		prev = out
		cs := calls(out, c.conn.Names()[0], member)
		if len(cs) < n {
			return callsSeen{member: member, n: len(cs)}
		}
		found = cs[n-1]
		// A block followed by another one is complete; the last one is once
		// the output has stopped growing.
		return callsSeen{member: member, n: len(cs), whole: !strings.HasSuffix(out, found) || stable}
	}, func(c callsSeen) bool { return c.n >= n && c.whole })
	return found
}

// callsSeen is how many calls of member dbus-monitor has shown, and
// whether the one waited for is written whole.
type callsSeen struct {
	member string
	n      int
	whole  bool
}

func (c callsSeen) String() string {
	return fmt.Sprintf("%d %s calls, the one waited for written whole: %v", c.n, c.member, c.whole)
}

// checkNotifyCall checks the arguments of a Notify call seen on the bus.
func checkNotifyCall(t *testing.T, call string, replaces uint32, summary, body string, actions ...string) {
	t.Helper()
	args := monitorArgs(call)
	want := []string{
		`string "antidrift"`,
		fmt.Sprintf("uint32 %d", replaces),
		`string ""`,
		strconv.Quote(summary),
		strconv.Quote(body),
		"array [",
	}
	want[3], want[4] = "string "+want[3], "string "+want[4]
	for _, a := range actions {
		want = append(want, "string "+strconv.Quote(a))
	}
	want = append(want, "]")
	if len(args) < len(want) || !slices.Equal(args[:len(want)], want) {
		t.Errorf("Notify arguments start\n%s\nwant\n%s\nwhole call:\n%s", strings.Join(args, "\n"), strings.Join(want, "\n"), call)
	}
	if len(args) == 0 || args[len(args)-1] != "int32 0" {
		t.Errorf("Notify's expire_timeout: got the call\n%s\nwant int32 0 last (never expire)", call)
	}
	flat := strings.Join(strings.Fields(strings.Join(args, " ")), " ")
	for _, hint := range []string{
		`string "desktop-entry" variant string "antidrift"`,
		`string "category" variant string "antidrift.drift"`,
		`string "urgency" variant byte 1`,
	} {
		if !strings.Contains(flat, `dict entry( `+hint+` )`) {
			t.Errorf("Notify hints: got\n%s\nwant %s among them", call, hint)
		}
	}
}

// displayed is what dunstctl says dunst has on screen.
func displayed(t *testing.T, bus *testenv.Bus) int {
	t.Helper()
	out, err := bus.Run(t, "dunstctl", "count", "displayed")
	if err != nil {
		t.Fatal(err)
	}
	n, err := strconv.Atoi(strings.TrimSpace(out))
	if err != nil {
		t.Fatalf("dunstctl count displayed: got %q, want a number", out)
	}
	return n
}

func waitDisplayed(t *testing.T, bus *testenv.Bus, want int) {
	t.Helper()
	testenv.WaitForValue(t, 10*time.Second, "the notifications dunst displays", want, func() int { return displayed(t, bus) })
}

func TestNotificationsWithDunst(t *testing.T) {
	d := testenv.StartX(t)
	bus := testenv.StartBus(t)
	mon := testenv.StartMonitor(t, bus, notificationsTraffic...)
	dunst := testenv.StartDunst(t, bus, d)
	c := newClient(t, bus)

	first := driftNote("Drifting")
	id := c.notify(t, first)
	checkNotifyCall(t, c.waitCall(t, mon, "Notify", 1), 0, "Drifting", first.Body,
		"refocus", "Back to work", "allow", "Allow Distraction")
	waitDisplayed(t, bus, 1)

	// Replacing keeps the id and the person sees one notification, the new one.
	second := driftNote("Still drifting")
	second.ReplacesID = id
	if got := c.notify(t, second); got != id {
		t.Fatalf("Notify replacing %d: got id %d, want %d", id, got, id)
	}
	checkNotifyCall(t, c.waitCall(t, mon, "Notify", 2), id, "Still drifting", second.Body,
		"refocus", "Back to work", "allow", "Allow Distraction")
	waitDisplayed(t, bus, 1)

	// Choosing "Back to work" in dunst's menu reaches onAction.
	dunst.ChooseNext("Back to work")
	dunst.OpenMenu(t)
	if a := c.nextAction(t); a != (action{id, "refocus"}) {
		t.Fatalf("onAction got %+v, want id %d refocus; menus:\n%s", a, id, dunst.Menus())
	}
	menus := dunst.Menus()
	if !strings.Contains(menus, fmt.Sprintf("#Back to work (Still drifting) [%d,refocus]", id)) ||
		strings.Contains(menus, "(Drifting)") {
		t.Errorf("dunst's menu: got\n%s\nwant just the replacement", menus)
	}

	// The notification is still up after the action (dunst 1.9 sends
	// ActionInvoked without closing it); the core closes it, and Close takes
	// it off the screen.
	waitDisplayed(t, bus, 1)
	if err := c.n.Close(timeout(t, 10*time.Second), id); err != nil {
		t.Fatalf("Close: %v", err)
	}
	closeCall := c.waitCall(t, mon, "CloseNotification", 1)
	if args := monitorArgs(closeCall); !slices.Equal(args, []string{fmt.Sprintf("uint32 %d", id)}) {
		t.Errorf("CloseNotification arguments %q, want the id %d", args, id)
	}
	waitDisplayed(t, bus, 0)
}

func TestNotificationsWithoutServer(t *testing.T) {
	bus := testenv.StartBus(t)
	c := newClient(t, bus)

	// ErrNoServer, not the context's deadline: the bus said so at once.
	_, err := c.n.Notify(timeout(t, 2*time.Second), driftNote("Drifting"))
	if !errors.Is(err, ErrNoServer) {
		t.Fatalf("Notify without a server: %v, want ErrNoServer", err)
	}
	if err := c.n.Close(timeout(t, 2*time.Second), 7); !errors.Is(err, ErrNoServer) {
		t.Fatalf("Close without a server: %v, want ErrNoServer", err)
	}
}

// A notification server the bus can start but that never comes up must not
// hold Notify past its deadline.
func TestNotifyDoesNotWaitPastCtxForActivation(t *testing.T) {
	bus := testenv.StartBus(t)
	service := "[D-BUS Service]\nName=org.freedesktop.Notifications\nExec=/bin/sleep 600\n"
	if err := os.WriteFile(filepath.Join(bus.ServiceDir, "hang.service"), []byte(service), 0o644); err != nil {
		t.Fatal(err)
	}
	c := newClient(t, bus)
	// The context's deadline, not the bus's own (dbus-daemon would wait 25 s
	// for the service and then answer with an error of its own).
	_, err := c.n.Notify(timeout(t, time.Second), driftNote("Drifting"))
	if !errors.Is(err, context.DeadlineExceeded) {
		t.Fatalf("Notify while the server is starting: %v, want the context's deadline", err)
	}
}

// On a desktop whose notification daemon is started on demand, the first
// nudge starts it.
func TestNotifyStartsAnActivatableServer(t *testing.T) {
	exe, err := os.Executable()
	if err != nil {
		t.Fatal(err)
	}
	bus := testenv.StartBus(t, helperEnv+"=serve")
	service := fmt.Sprintf("[D-BUS Service]\nName=org.freedesktop.Notifications\nExec=%s -test.run=^TestHelperNotificationServer$\n", exe)
	if err := os.WriteFile(filepath.Join(bus.ServiceDir, "fake.service"), []byte(service), 0o644); err != nil {
		t.Fatal(err)
	}
	mon := testenv.StartMonitor(t, bus, notificationsTraffic...)
	c := newClient(t, bus)
	c.notify(t, driftNote("Drifting"))
	if bus.OwnerPID(t, testenv.NotificationsName) == 0 {
		t.Fatal("no notification server after Notify")
	}
	call := c.waitCall(t, mon, "Notify", 1)
	if args := monitorArgs(call); len(args) < 3 || args[1] != "uint32 0" {
		t.Fatalf("Notify call: got\n%s\nwant replaces_id uint32 0", call)
	}
}

const helperEnv = "ANTIDRIFT_NOTIFICATIONS_HELPER"

// TestHelperNotificationServer is not a test: it is the notification server
// TestNotifyStartsAnActivatableServer has the bus start.
func TestHelperNotificationServer(t *testing.T) {
	if os.Getenv(helperEnv) != "serve" {
		t.Skip("only runs when started by a test's bus")
	}
	conn, err := dbus.ConnectSessionBus()
	if err != nil {
		t.Fatal(err)
	}
	f := &fakeServer{caps: []string{"actions", "body"}, conn: conn}
	if err := f.serve(); err != nil {
		t.Fatal(err)
	}
	<-conn.Context().Done()
}

func TestNotificationsAcrossDunstRestart(t *testing.T) {
	d := testenv.StartX(t)
	bus := testenv.StartBus(t)
	mon := testenv.StartMonitor(t, bus, notificationsTraffic...)
	dunst := testenv.StartDunst(t, bus, d)
	c := newClient(t, bus)

	old := c.notify(t, driftNote("Drifting"))
	waitDisplayed(t, bus, 1)

	dunst.Kill()
	// Failing, and not by running out the context: the absence is known at once.
	if _, err := c.n.Notify(timeout(t, 2*time.Second), driftNote("Drifting")); err == nil || errors.Is(err, context.DeadlineExceeded) {
		t.Fatalf("Notify with dunst gone: %v", err)
	}
	if err := c.n.Close(timeout(t, 2*time.Second), old); err == nil || errors.Is(err, context.DeadlineExceeded) {
		t.Fatalf("Close with dunst gone: %v", err)
	}

	dunst.Restart(t)
	// The new dunst numbers from the start again, so another program's
	// notification gets the id the old dunst gave ours. The core still holds
	// that stale id and asks to replace it; the other program's notification
	// must survive.
	out, err := bus.Run(t, "notify-send", "--print-id", "--app-name=chat", "Someone else's message")
	if err != nil {
		t.Fatal(err)
	}
	if other := strings.TrimSpace(out); other != fmt.Sprint(old) {
		t.Fatalf("the new dunst's id for the other notification: got %s, want %d like the old one gave ours (the test relies on that)", other, old)
	}
	waitDisplayed(t, bus, 1)
	sent := len(c.ourCalls(mon, "Notify"))
	next := driftNote("Drifting")
	next.ReplacesID = old
	id := c.notify(t, next)
	checkNotifyCall(t, c.waitCall(t, mon, "Notify", sent+1), 0, "Drifting", next.Body,
		"refocus", "Back to work", "allow", "Allow Distraction")
	waitDisplayed(t, bus, 2)

	// Closing the stale id must not close the other program's notification.
	if err := c.n.Close(timeout(t, 10*time.Second), old); err != nil {
		t.Fatalf("Close of the old server's id: %v", err)
	}

	// Actions on the new server's notification arrive.
	dunst.ChooseNext("Back to work")
	dunst.OpenMenu(t)
	if a := c.nextAction(t); a != (action{id, "refocus"}) {
		t.Fatalf("onAction got %+v, want id %d refocus; menus:\n%s", a, id, dunst.Menus())
	}

	if err := c.n.Close(timeout(t, 10*time.Second), id); err != nil {
		t.Fatalf("Close: %v", err)
	}
	c.waitCall(t, mon, "CloseNotification", 1)
	for _, call := range c.ourCalls(mon, "CloseNotification") {
		if args := monitorArgs(call); !slices.Equal(args, []string{fmt.Sprintf("uint32 %d", id)}) {
			t.Errorf("closed %q on the new server, want only our id %d", args, id)
		}
	}
	waitDisplayed(t, bus, 1)
}

func TestNotificationsWithoutActionsCapability(t *testing.T) {
	bus := testenv.StartBus(t)
	plain := startFakeServer(t, bus, "body")
	c := newClient(t, bus)

	note := driftNote("Drifting")
	id := c.notify(t, note)
	got := plain.last(t)
	if want := note.Body + "\n" + note.NoActionsHint; got.Body != want {
		t.Errorf("body %q, want %q", got.Body, want)
	}
	if len(got.Actions) != 0 {
		t.Errorf("actions sent to a server without the actions capability: got %q, want none", got.Actions)
	}
	if got.App != "antidrift" || got.Summary != "Drifting" || got.Timeout != 0 {
		t.Errorf("Notify: got app %q, summary %q, timeout %d, want \"antidrift\", \"Drifting\", 0", got.App, got.Summary, got.Timeout)
	}
	for key, want := range map[string]any{"desktop-entry": "antidrift", "category": "antidrift.drift", "urgency": byte(1)} {
		if v, ok := got.Hints[key]; !ok || v.Value() != want {
			t.Errorf("hint %s = %v, want %v (%T)", key, v, want, want)
		}
	}

	// A note without a body gets just the hint; the answer is remembered.
	bare := driftNote("Drifting")
	bare.Body, bare.ReplacesID = "", id
	c.notify(t, bare)
	if got := plain.last(t); got.Body != bare.NoActionsHint || got.Replaces != id {
		t.Errorf("body %q replaces %d, want %q replacing %d", got.Body, got.Replaces, bare.NoActionsHint, id)
	}
	if n := plain.capsCalls(); n != 1 {
		t.Errorf("GetCapabilities calls for one server: got %d, want 1", n)
	}

	// Another server, which can show actions, takes over: it is asked anew.
	plain.stop(t)
	rich := startFakeServer(t, bus, "actions", "body")
	c.notify(t, note)
	got = rich.last(t)
	if want := []string{"refocus", "Back to work", "allow", "Allow Distraction"}; !slices.Equal(got.Actions, want) || got.Body != note.Body {
		t.Errorf("new server got actions %q body %q, want %q and the plain body", got.Actions, got.Body, want)
	}
}

// Only the notification server can report that the person chose an action:
// any other peer can send us an ActionInvoked signal, well-formed or not.
func TestActionsOnlyFromTheServer(t *testing.T) {
	bus := testenv.StartBus(t)
	mon := testenv.StartMonitor(t, bus, notificationsTraffic...)
	server := startFakeServer(t, bus, "actions", "body")
	c := newClient(t, bus)
	id := c.notify(t, driftNote("Drifting"))
	me := c.conn.Names()[0]

	forged := []struct {
		dest string // "" to broadcast
		args []string
	}{
		{me, []string{"uint32:" + fmt.Sprint(id), "string:allow"}},
		{"", []string{"uint32:" + fmt.Sprint(id), "string:allow"}},
		{me, []string{"string:not an id"}},
	}
	for _, f := range forged {
		args := []string{"--session", "--type=signal"}
		if f.dest != "" {
			args = append(args, "--dest="+f.dest)
		}
		args = append(args, "/org/freedesktop/Notifications", "org.freedesktop.Notifications.ActionInvoked")
		if _, err := bus.Run(t, "dbus-send", append(args, f.args...)...); err != nil {
			t.Fatal(err)
		}
	}
	// Once the bus has passed them all on, the server's own signal follows.
	testenv.WaitForValue(t, 10*time.Second, "the ActionInvoked signals the bus passed on (the forged ones)", len(forged), func() int {
		return strings.Count(mon.Output(), "member=ActionInvoked")
	})
	if err := server.conn.Emit(notificationsPath, actionInvoked, id, "refocus"); err != nil {
		t.Fatal(err)
	}
	if a := c.nextAction(t); a != (action{id, "refocus"}) {
		t.Fatalf("first action reported: %+v, want the server's (%d, refocus)", a, id)
	}
	select {
	case a := <-c.actions:
		t.Fatalf("a second action: got %+v, want none", a)
	default:
	}

	// The subscription outlives the server: a new one's broadcasts arrive.
	// (dunst sends its signals straight to the client that sent Notify,
	// which needs no subscription; this server broadcasts them.)
	server.stop(t)
	next := startFakeServer(t, bus, "actions", "body")
	id = c.notify(t, driftNote("Drifting"))
	if err := next.conn.Emit(notificationsPath, actionInvoked, id, "allow"); err != nil {
		t.Fatal(err)
	}
	if a := c.nextAction(t); a != (action{id, "allow"}) {
		t.Fatalf("action from the new server: %+v, want (%d, allow)", a, id)
	}
}

// fakeServer is a minimal org.freedesktop.Notifications on a bus
// connection of its own: a real D-Bus peer, so the code under test goes
// through the bus exactly as with a real server.
type fakeServer struct {
	conn *dbus.Conn
	caps []string

	mu     sync.Mutex
	asked  int
	notes  []fakeNote
	lastID uint32
}

type fakeNote struct {
	App      string
	Replaces uint32
	Icon     string
	Summary  string
	Body     string
	Actions  []string
	Hints    map[string]dbus.Variant
	Timeout  int32
}

func startFakeServer(t *testing.T, bus *testenv.Bus, caps ...string) *fakeServer {
	t.Helper()
	conn, err := dbus.Connect(bus.Address)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { conn.Close() })
	f := &fakeServer{conn: conn, caps: caps}
	if err := f.serve(); err != nil {
		t.Fatal(err)
	}
	return f
}

func (f *fakeServer) serve() error {
	if err := f.conn.Export(fakeMethods{f}, notificationsPath, notificationsIface); err != nil {
		return err
	}
	reply, err := f.conn.RequestName(notificationsName, dbus.NameFlagDoNotQueue)
	if err != nil {
		return err
	}
	if reply != dbus.RequestNameReplyPrimaryOwner {
		return fmt.Errorf("RequestName(%s): got %v, want %v (primary owner)", notificationsName, reply, dbus.RequestNameReplyPrimaryOwner)
	}
	return nil
}

// stop takes the server off the bus.
func (f *fakeServer) stop(t *testing.T) {
	t.Helper()
	if _, err := f.conn.ReleaseName(notificationsName); err != nil {
		t.Fatal(err)
	}
	f.conn.Close()
}

func (f *fakeServer) last(t *testing.T) fakeNote {
	t.Helper()
	f.mu.Lock()
	defer f.mu.Unlock()
	if len(f.notes) == 0 {
		t.Fatal("the server got no Notify call")
	}
	return f.notes[len(f.notes)-1]
}

func (f *fakeServer) capsCalls() int {
	f.mu.Lock()
	defer f.mu.Unlock()
	return f.asked
}

// fakeMethods are the exported D-Bus methods (kept apart so that helpers
// of fakeServer are not exported on the bus).
type fakeMethods struct{ f *fakeServer }

func (m fakeMethods) GetCapabilities() ([]string, *dbus.Error) {
	m.f.mu.Lock()
	defer m.f.mu.Unlock()
	m.f.asked++
	return m.f.caps, nil
}

func (m fakeMethods) Notify(app string, replaces uint32, icon, summary, body string, actions []string,
	hints map[string]dbus.Variant, timeout int32) (uint32, *dbus.Error) {
	m.f.mu.Lock()
	defer m.f.mu.Unlock()
	m.f.notes = append(m.f.notes, fakeNote{app, replaces, icon, summary, body, actions, hints, timeout})
	if replaces != 0 {
		return replaces, nil
	}
	m.f.lastID++
	return m.f.lastID, nil
}

func (m fakeMethods) CloseNotification(id uint32) *dbus.Error { return nil }

func (m fakeMethods) GetServerInformation() (string, string, string, string, *dbus.Error) {
	return "fake", "antidrift tests", "1", "1.2", nil
}

// A nudge shows the drifting app's icon as its image (the image-path hint:
// an icon name as it is, an absolute path as a file: URI, as the
// specification asks); an Icon= that is neither is not sent.
func TestNudgeShowsTheAppsIcon(t *testing.T) {
	bus := testenv.StartBus(t)
	server := startFakeServer(t, bus, "actions", "body")
	c := newClient(t, bus)
	for image, want := range map[string]string{
		"org.mozilla.firefox":      "org.mozilla.firefox",
		"/opt/idea/bin/idea 2.svg": "file:///opt/idea/bin/idea%202.svg",
		"":                         "",
		"icons/x.png":              "",
		"/opt/../etc/x.png":        "",
		"firefox\x00":              "",
		"file:///etc/passwd":       "",
	} {
		note := driftNote("Drifting: Firefox")
		note.Image = image
		c.notify(t, note)
		v, ok := server.last(t).Hints["image-path"]
		if got, _ := v.Value().(string); (want == "" && ok) || got != want {
			t.Errorf("Image %q: got image-path %q (sent %v), want %q", image, got, ok, want)
		}
	}
}
