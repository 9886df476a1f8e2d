package main

// Reliability suites (issue #6): the daemon killed at random moments, its
// files torn or filled with garbage, its disk full or read-only, its X
// server gone. Every randomized test logs its seed; ANTIDRIFT_SEED replays
// it, ANTIDRIFT_SOAK=1 (make soak) runs ten times the rounds.

import (
	"bytes"
	"context"
	"crypto/sha256"
	"encoding/hex"
	"encoding/json"
	"errors"
	"fmt"
	"math/rand/v2"
	"os"
	"path/filepath"
	"slices"
	"sort"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/godbus/dbus/v5"

	"github.com/antidrift/antidrift/internal/testsupport/testenv"
	"github.com/antidrift/antidrift/service"
)

const (
	busName     = "org.antidrift"
	objectPath  = dbus.ObjectPath("/org/antidrift/Session1")
	sessionIfc  = "org.antidrift.Session1"
	callTimeout = 10 * time.Second
)

// ── A godbus client of the daemon ───────────────────────────────────────

// client calls the daemon in-process: thousands of calls cost what one
// busctl process does. It addresses the well-known name, so it follows the
// daemon across restarts.
type client struct {
	conn *dbus.Conn
	obj  dbus.BusObject
}

func dialDaemon(t testing.TB, d *testenv.Daemon) *client {
	t.Helper()
	conn := d.Bus.Dial(t)
	return &client{conn: conn, obj: conn.Object(busName, objectPath)}
}

// do calls member (interface.method) with a timeout, so a wedged daemon
// fails the test rather than hanging it.
func (c *client) do(member string, args ...any) *dbus.Call {
	ctx, cancel := context.WithTimeout(context.Background(), callTimeout)
	defer cancel()
	return c.obj.CallWithContext(ctx, member, 0, args...)
}

// call calls a method of org.antidrift.Session1.
func (c *client) call(method string, args ...any) *dbus.Call {
	return c.do(sessionIfc+"."+method, args...)
}

// must calls method and fails the test unless it succeeds; out receives
// the reply.
func (c *client) must(t testing.TB, method string, args []any, out ...any) {
	t.Helper()
	call := c.call(method, args...)
	if call.Err != nil {
		t.Fatalf("%s%v: %v", method, args, call.Err)
	}
	if len(out) > 0 {
		if err := call.Store(out...); err != nil {
			t.Fatalf("%s reply: %v", method, err)
		}
	}
}

// start starts a session and returns its id.
func (c *client) start(t testing.TB, timebox uint64, level string, allowed ...string) string {
	t.Helper()
	if allowed == nil {
		allowed = []string{}
	}
	var id string
	c.must(t, "Start", []any{"reliability", "it holds", timebox, level, allowed}, &id)
	return id
}

// end calls End and returns the hash it gave.
func (c *client) end(t testing.TB) string {
	t.Helper()
	var hash string
	c.must(t, "End", nil, &hash)
	return hash
}

type auditReport struct {
	OK      bool
	Entries uint32
	Problem string
}

func (c *client) verifyAudit(t testing.TB) auditReport {
	t.Helper()
	var r auditReport
	c.must(t, "VerifyAudit", nil, &r.OK, &r.Entries, &r.Problem)
	return r
}

// view is every property, read with one GetAll.
type view struct {
	State, SessionID, NextAction, SuccessCondition string
	TimeboxSeconds                                 uint64
	StartedAt, Deadline                            int64
	Outcome, Enforcement                           string
	AllowedClasses                                 []string
	Drift, DriftReason                             string
	Enforced                                       bool
	MinimizeCount                                  uint32
	CurrentClass, CurrentTitle                     string
	EvidenceAvailable                              bool
	EvidenceReason                                 string
	SwitchCount                                    uint32
	Buckets                                        []bucketProp
	BreakGlassAt                                   int64
	AuditHead                                      string
	AuditPending                                   uint32
	Problems                                       []string
	Version                                        string
}

type bucketProp struct {
	Class, Title string
	Seconds      uint64
}

func (c *client) view(t testing.TB) view {
	t.Helper()
	v, err := c.tryView()
	if err != nil {
		t.Fatalf("reading the properties: %v", err)
	}
	return v
}

func (c *client) tryView() (view, error) {
	var m map[string]dbus.Variant
	if err := c.do("org.freedesktop.DBus.Properties.GetAll", sessionIfc).Store(&m); err != nil {
		return view{}, err
	}
	return parseView(m)
}

func parseView(m map[string]dbus.Variant) (view, error) {
	var v view
	for _, f := range []struct {
		name string
		dst  any
	}{
		{"State", &v.State}, {"SessionId", &v.SessionID}, {"NextAction", &v.NextAction},
		{"SuccessCondition", &v.SuccessCondition}, {"TimeboxSeconds", &v.TimeboxSeconds},
		{"StartedAt", &v.StartedAt}, {"Deadline", &v.Deadline}, {"Outcome", &v.Outcome},
		{"Enforcement", &v.Enforcement}, {"AllowedClasses", &v.AllowedClasses}, {"Drift", &v.Drift},
		{"DriftReason", &v.DriftReason}, {"Enforced", &v.Enforced}, {"MinimizeCount", &v.MinimizeCount},
		{"CurrentClass", &v.CurrentClass}, {"CurrentTitle", &v.CurrentTitle},
		{"EvidenceAvailable", &v.EvidenceAvailable}, {"EvidenceReason", &v.EvidenceReason},
		{"SwitchCount", &v.SwitchCount}, {"Buckets", &v.Buckets}, {"BreakGlassAt", &v.BreakGlassAt},
		{"AuditHead", &v.AuditHead}, {"AuditPending", &v.AuditPending}, {"Problems", &v.Problems},
		{"Version", &v.Version},
	} {
		val, ok := m[f.name]
		if !ok {
			return v, fmt.Errorf("GetAll: got no property %s, want every property of the view", f.name)
		}
		if err := dbus.Store([]any{val.Value()}, f.dst); err != nil {
			return v, fmt.Errorf("property %s (%s): %v", f.name, val.Signature(), err)
		}
	}
	return v, nil
}

// errName is the D-Bus error name of a failed call, "" for other errors.
func errName(err error) string {
	var e dbus.Error
	if errors.As(err, &e) {
		return e.Name
	}
	var p *dbus.Error
	if errors.As(err, &p) && p != nil {
		return p.Name
	}
	return ""
}

// waitFor waits, as testenv.WaitFor does, until cond holds, for a
// condition over several values: on timeout it fails with the last detail
// cond gave, what it saw instead.
func waitFor(t testing.TB, timeout time.Duration, what string, cond func() (bool, string)) {
	t.Helper()
	testenv.WaitFor(t, timeout, what, func() detailed { ok, detail := cond(); return detailed{ok, detail} },
		func(d detailed) bool { return d.ok })
}

// detailed is one answer of a waitFor condition; it prints as its detail.
type detailed struct {
	ok     bool
	detail string
}

func (d detailed) String() string { return d.detail }

// ── The audit chain, checked by docs/audit.md's rule ──────────────────────

type auditEntry struct {
	Seq        uint64 `json:"seq"`
	PrevHash   string `json:"prev_hash"`
	SessionID  string `json:"session_id"`
	Outcome    string `json:"outcome"`
	BreakGlass bool   `json:"break_glass"`
	Hash       string `json:"hash"`
}

var genesis = strings.Repeat("0", 64)

// lineHash is docs/audit.md's hash rule: SHA-256 of prev_hash followed by the
// line with its hash value emptied. ok is false when the line has no
// "hash":" to empty.
func lineHash(prev string, line []byte) (string, bool) {
	i := bytes.LastIndex(line, []byte(`"hash":"`))
	if i < 0 {
		return "", false
	}
	body := append(append([]byte(prev), line[:i]...), `"hash":""}`...)
	sum := sha256.Sum256(body)
	return hex.EncodeToString(sum[:]), true
}

// chainOf walks audit.jsonl's bytes as docs/audit.md's ten lines of Python do,
// independently of persist. entries are the lines that verify, in order;
// bad is the 1-based number of the first line that does not (0: none) and
// why says what is wrong with it.
func chainOf(data []byte) (entries []auditEntry, bad int, why string) {
	prev := genesis
	lines := bytes.SplitAfter(data, []byte("\n"))
	for n, raw := range lines {
		if len(raw) == 0 {
			break // after the last newline
		}
		no := n + 1
		if !bytes.HasSuffix(raw, []byte("\n")) {
			return entries, no, "unfinished (no newline)"
		}
		line := raw[:len(raw)-1]
		var e auditEntry
		if err := json.Unmarshal(line, &e); err != nil {
			return entries, no, "not JSON: " + err.Error()
		}
		if e.Seq != uint64(no) || e.PrevHash != prev {
			return entries, no, fmt.Sprintf("chain broken: seq %d prev_hash %.8s…, want seq %d prev_hash %.8s…", e.Seq, e.PrevHash, no, prev)
		}
		if h, ok := lineHash(prev, line); !ok || h != e.Hash {
			return entries, no, "altered: the hash does not match"
		}
		entries = append(entries, e)
		prev = e.Hash
	}
	return entries, 0, ""
}

// checkChain asserts that audit.jsonl verifies both over the bus and by
// the test's own reading of the hash rule, and that the two agree on the
// count. It returns session id → hash.
func checkChain(t testing.TB, c *client, dir string) map[string]string {
	t.Helper()
	data, err := os.ReadFile(filepath.Join(dir, "audit.jsonl"))
	if err != nil && !errors.Is(err, os.ErrNotExist) {
		t.Fatal(err)
	}
	entries, bad, why := chainOf(data)
	if bad != 0 {
		t.Fatalf("audit.jsonl by docs/audit.md's rule: got line %d not verifying (%s), want every line to\n%s", bad, why, data)
	}
	r := c.verifyAudit(t)
	if !r.OK || int(r.Entries) != len(entries) {
		t.Fatalf("VerifyAudit: got %+v, want ok with the %d good entries the test's own walk found", r, len(entries))
	}
	sealed := map[string]string{}
	for _, e := range entries {
		if _, dup := sealed[e.SessionID]; dup {
			t.Fatalf("audit.jsonl: got session %s sealed twice, want once", e.SessionID)
		}
		sealed[e.SessionID] = e.Hash
	}
	return sealed
}

// ── Buckets, recomputed from the raw log ───────────────────────────────

type bucketKey struct{ class, title string }

// rawEvent is one line of sessions/<id>.jsonl as docs/files.md describes it.
type rawEvent struct {
	At        *int64 `json:"at_unix_millis"`
	Class     string `json:"class"`
	Title     string `json:"title"`
	Available bool   `json:"available"`
	OffTask   bool   `json:"off_task"`
	Mark      string `json:"mark"`
	Reason    string `json:"reason"`
	// JumpMillis: a "clock" mark's jump of the wall clock (docs/files.md).
	JumpMillis int64 `json:"jump_millis"`
}

// replayBuckets recomputes a session's buckets from its raw log by the
// docs/audit.md's rules, independently of the daemon's code: time between two
// events accrues to the earlier one's bucket (class + scrubbed title, or
// "(evidence unavailable)"), a pause mark stops accounting until the next
// focus event, and away/back marks send the time in between to "(away)" or
// "(suspended)". A line that is not an event (unfinished, not JSON, no
// at_unix_millis) is skipped; a clock mark counts the time before it up to
// where the boot clock was (at - jump_millis). It also returns how many
// lines it skipped.
// The open segment (since the last event of a running session) is counted
// up to nowMillis, as the live Buckets property counts it up to its read.
func replayBuckets(t testing.TB, data []byte, nowMillis int64) (map[bucketKey]time.Duration, int) {
	t.Helper()
	out := map[bucketKey]time.Duration{}
	var (
		running, away   bool
		cur, awayKey    bucketKey
		lastAt          int64
		skipped         int
		unavailable     = bucketKey{"", service.UnavailableTitle}
		awayK, suspendK = bucketKey{"", "(away)"}, bucketKey{"", "(suspended)"}
	)
	flush := func(at int64) {
		if !running {
			return
		}
		if d := at - lastAt; d > 0 {
			k := cur
			if away {
				k = awayKey
			}
			out[k] += time.Duration(d) * time.Millisecond
		}
		lastAt = at
	}
	lines := bytes.SplitAfter(data, []byte("\n"))
	for _, raw := range lines {
		if len(raw) == 0 {
			continue
		}
		var e rawEvent
		// An unfinished last line counts only if it is a whole event that
		// lost its newline (docs/files.md: a torn line is skipped).
		whole := bytes.HasSuffix(raw, []byte("\n")) || bytes.HasSuffix(raw, []byte("}"))
		if !whole || json.Unmarshal(raw, &e) != nil || e.At == nil {
			if len(bytes.TrimSpace(raw)) > 0 {
				skipped++
			}
			continue
		}
		at := *e.At
		switch e.Mark {
		case service.MarkPause:
			flush(at)
			running, away = false, false
		case service.MarkVerdict:
			flush(at)
		case service.MarkMinimized:
		case service.MarkClock:
			flush(at - e.JumpMillis)
			lastAt = at
		case "away":
			flush(at)
			away, awayKey = true, awayK
			if e.Reason == "suspended" {
				awayKey = suspendK
			}
		case "back":
			flush(at)
			away = false
		case "":
			flush(at)
			cur = unavailable
			if e.Available {
				cur = bucketKey{e.Class, service.FoldTitle(e.Title)}
			}
			running, lastAt = true, at
		default:
			t.Fatalf("the raw log: got a mark %q, want one replayBuckets (reliability_test.go) knows; teach it", e.Mark)
		}
	}
	flush(nowMillis)
	return out, skipped
}

func roundSeconds(d time.Duration) uint64 {
	if d <= 0 {
		return 0
	}
	return uint64(d.Round(time.Second) / time.Second)
}

// bucketsDiffer compares the Buckets property with a replay, within the
// rounding of whole seconds; "" when they agree.
func bucketsDiffer(prop []bucketProp, replay map[bucketKey]time.Duration) string {
	got := map[bucketKey]uint64{}
	for _, b := range prop {
		got[bucketKey{b.Class, b.Title}] = b.Seconds
	}
	want := map[bucketKey]uint64{}
	for k, d := range replay {
		want[k] = roundSeconds(d)
	}
	if len(want) > service.TopBuckets {
		// The property carries the top 20 by name (then remainders); compare those.
		keys := make([]bucketKey, 0, len(want))
		for k := range want {
			keys = append(keys, k)
		}
		sort.Slice(keys, func(i, j int) bool { return replay[keys[i]] > replay[keys[j]] })
		for _, k := range keys[service.TopBuckets:] {
			delete(want, k)
		}
	}
	var diffs []string
	for k, w := range want {
		g, ok := got[k]
		if !ok || g+1 < w || w+1 < g {
			diffs = append(diffs, fmt.Sprintf("%q/%q: property %d s (present %v), raw log %d s", k.class, k.title, g, ok, w))
		}
	}
	for k, g := range got {
		if _, listed := replay[k]; k.title == service.OtherTitlesTitle || (k.class == "" && (listed || k.title == service.OtherTitle)) {
			continue // a class's remainder, or a reserved bucket listed past the top 20
		}
		if _, ok := want[k]; !ok {
			diffs = append(diffs, fmt.Sprintf("%q/%q: property %d s, not in the raw log", k.class, k.title, g))
		}
	}
	sort.Strings(diffs)
	return strings.Join(diffs, "; ")
}

// checkBuckets waits until the Buckets property of the live session
// equals a replay of its raw log (a focus event may still be landing),
// and checks that the buckets add up to no more than the wall-clock time
// since the session started.
func checkBuckets(t testing.TB, c *client, dir string) {
	t.Helper()
	waitFor(t, wait, "Buckets to match a replay of the raw log", func() (bool, string) {
		v := c.view(t)
		if v.State != "active" && v.State != "review" {
			return true, ""
		}
		data, err := os.ReadFile(filepath.Join(dir, "sessions", v.SessionID+".jsonl"))
		if err != nil {
			return false, err.Error()
		}
		replay, _ := replayBuckets(t, data, time.Now().UnixMilli())
		var total uint64
		for _, b := range v.Buckets {
			total += b.Seconds
		}
		if wall := time.Now().Unix() - v.StartedAt + 2; int64(total) > wall {
			return false, fmt.Sprintf("the buckets add up to %d s, but the session started only %d s ago: %v", total, wall, v.Buckets)
		}
		if diff := bucketsDiffer(v.Buckets, replay); diff != "" {
			return false, diff
		}
		return true, ""
	})
}

// ── Crash anywhere ─────────────────────────────────────────────────────

// crashModel is what the test knows of the daemon: the state the last
// acknowledged call left, and the call that was in flight when the daemon
// died (which may or may not have taken effect).
type crashModel struct {
	state    string // locked, active, review
	id       string
	deadline int64 // 0 when not read before the crash
	short    bool  // a short timebox: the session is left to expire
	inflight string
	ended    map[string]string // every End that returned: session id → hash
}

// crashRig is one daemon (and maybe a desktop) under SIGKILL.
type crashRig struct {
	t      *testing.T
	rng    *rand.Rand
	d      *testenv.Daemon
	c      *client
	x      *testenv.Display
	wins   []uint32
	killed chan struct{}
	m      crashModel
}

func TestCrashAnywhere(t *testing.T) {
	testenv.Need(t, "dbus-daemon", "dbus-send")
	seed := testenv.Seed(t)
	rounds := testenv.Scale(20)
	withX := max(rounds/4, 1)
	t.Run("x11", func(t *testing.T) {
		testenv.Need(t, "Xvfb", "openbox", "xterm", "xdotool", "xprop")
		crashRounds(t, seed, withX, true)
	})
	t.Run("nox", func(t *testing.T) { crashRounds(t, seed+1, rounds-withX, false) })
}

func crashRounds(t *testing.T, seed uint64, rounds int, withX bool) {
	r := &crashRig{t: t, rng: rand.New(rand.NewPCG(seed, seed>>1^0x9e3779b97f4a7c15))}
	r.m.state, r.m.ended = "locked", map[string]string{}
	bus := testenv.StartBus(t)
	var env []string
	maxDelay := 300 * time.Millisecond
	if withX {
		r.x = testenv.StartX(t)
		r.wins = []uint32{r.x.XTerm(t, "Editor", "main.go - editor"), r.x.XTerm(t, "Distraction", "video 12:30 / 45:00")}
		r.x.Activate(t, r.wins[0])
		env = append(env, "DISPLAY="+r.x.Name)
		maxDelay = 1500 * time.Millisecond
	}
	r.d = testenv.StartDaemon(t, bus, filepath.Join(t.TempDir(), "state"), env...)
	r.c = dialDaemon(t, r.d)
	during := map[string]int{}
	for round := range rounds {
		delay := time.Duration(r.rng.Int64N(int64(maxDelay)))
		r.killAfter(delay)
		r.m.inflight = ""
		for r.m.inflight == "" {
			r.step()
		}
		<-r.killed
		testenv.WaitUntil(t, wait, "the killed daemon to be gone (not alive)", func() bool { return !r.d.Alive() })
		before := r.m.state
		during[r.m.inflight]++
		r.d.Start(t)
		r.checkRecovered()
		t.Logf("round %d: killed after %v during %s (was %s), recovered %s %s", round, delay.Round(time.Millisecond), r.m.inflight, before, r.m.state, r.m.id)
	}
	// Every End that ever returned a hash is in the chain, with that hash.
	sealed := checkChain(t, r.c, r.d.StateDir)
	for id, h := range r.m.ended {
		if sealed[id] != h {
			t.Errorf("session %s in audit.jsonl: got hash %q, want End's %s", id, sealed[id], h)
		}
	}
	t.Logf("%d sessions sealed over %d rounds; killed during: %v", len(sealed), rounds, during)
}

// killAfter SIGKILLs the daemon after delay, from a timer: a moment chosen
// by the seed, not by the test's progress.
func (r *crashRig) killAfter(delay time.Duration) {
	pid, killed := r.d.PID(), make(chan struct{})
	r.killed = killed
	time.AfterFunc(delay, func() {
		syscall.Kill(pid, syscall.SIGKILL)
		close(killed)
	})
}

// failed records that call failed. It must be because the daemon was
// killed: any other failure fails the test.
func (r *crashRig) failed(call string, err error) {
	r.t.Helper()
	if strings.HasPrefix(errName(err), "org.antidrift.") {
		r.t.Fatalf("%s: got refused by the daemon (%v), want it done or cut off by the kill", call, err)
	}
	select {
	case <-r.killed:
	case <-time.After(5 * time.Second):
		r.t.Fatalf("%s while the daemon was not being killed: got %v, want success\n%s", call, err, r.d.Output())
	}
	r.m.inflight = call
}

// step takes the next step of the scripted sessions from the state the
// model is in. A failed call ends the round.
func (r *crashRig) step() {
	m, c := &r.m, r.c
	switch m.state {
	case "locked":
		m.short = r.rng.IntN(60) == 0
		timebox := uint64(3600)
		if m.short {
			timebox = 1
		}
		level := []string{"observe", "warn", "block", "locked"}[r.rng.IntN(4)]
		var id string
		if err := c.call("Start", "crash anywhere", "state survives", timebox, level, []string{"Editor"}).Store(&id); err != nil {
			r.failed("Start", err)
			return
		}
		m.state, m.id, m.deadline = "active", id, 0
		v, err := c.tryView()
		if err != nil {
			r.failed("GetAll", err)
			return
		}
		m.deadline = v.Deadline
	case "active":
		if r.x != nil && r.rng.IntN(3) != 0 {
			w := r.wins[r.rng.IntN(len(r.wins))]
			if r.rng.IntN(4) == 0 {
				r.x.SetTitle(r.t, w, fmt.Sprintf("title %d at %d:%02d", r.rng.IntN(5), r.rng.IntN(24), r.rng.IntN(60)))
			}
			r.x.Activate(r.t, w)
			return
		}
		if m.short {
			for {
				v, err := c.tryView()
				if err != nil {
					r.failed("waiting for expiry", err)
					return
				}
				if v.State == "review" {
					m.state = "review"
					return
				}
				time.Sleep(20 * time.Millisecond)
			}
		}
		if err := c.call("Complete").Err; err != nil {
			r.failed("Complete", err)
			return
		}
		m.state = "review"
	case "review":
		var hash string
		if err := c.call("End").Store(&hash); err != nil {
			r.failed("End", err)
			return
		}
		if hash == "" {
			r.t.Fatalf("End's hash on a healthy disk: got none, want one\n%s", r.d.Output())
		}
		m.ended[m.id] = hash
		m.state, m.id, m.deadline = "locked", "", 0
	}
}

// checkRecovered holds the restarted daemon to what the model allows, then
// adopts what it found.
func (r *crashRig) checkRecovered() {
	t, m := r.t, &r.m
	t.Helper()
	sealed := checkChain(t, r.c, r.d.StateDir)
	for id, h := range m.ended {
		if sealed[id] != h {
			t.Fatalf("session %s in audit.jsonl: got hash %q, want End's %s", id, sealed[id], h)
		}
	}
	v := r.c.view(t)
	if v.AuditPending != 0 || len(v.Problems) != 0 {
		t.Fatalf("after a crash on a healthy disk: got AuditPending %d, Problems %q, want 0 and none", v.AuditPending, v.Problems)
	}
	now := time.Now().Unix()
	switch m.state {
	case "locked":
		// Only an in-flight Start can have made a session we never heard of.
		if v.State != "locked" && !(m.inflight == "Start" && (v.State == "active" || v.State == "review") && m.ended[v.SessionID] == "") {
			t.Fatalf("after the restart from locked (in flight: %s): got %s %s, want locked (or a session of the Start in flight)", m.inflight, v.State, v.SessionID)
		}
	case "active":
		switch {
		case v.SessionID != m.id:
			t.Fatalf("after the restart of active session %s (in flight: %s): got %s %q, want that session", m.id, m.inflight, v.State, v.SessionID)
		case m.deadline != 0 && v.Deadline != m.deadline:
			t.Fatalf("session %s's deadline after the restart: got %d, want %d", m.id, v.Deadline, m.deadline)
		case v.State == "active":
		case v.State == "review" && v.Outcome == "completed" && m.inflight == "Complete":
		case v.State == "review" && v.Outcome == "expired" && now >= v.Deadline:
		default:
			t.Fatalf("after the restart of active session %s (deadline %d, in flight: %s): got %s/%s at %d, want active, or review completed or expired as the model allows", m.id, m.deadline, m.inflight, v.State, v.Outcome, now)
		}
	case "review":
		switch {
		case v.State == "review" && v.SessionID == m.id:
		case v.State == "locked" && m.inflight == "End" && sealed[m.id] != "":
			m.ended[m.id] = sealed[m.id] // End took effect; its reply was lost
		default:
			t.Fatalf("after the restart of session %s in review (in flight: %s): got %s %q, sealed %v; want it in review, or locked and sealed by the End in flight", m.id, m.inflight, v.State, v.SessionID, sealed[m.id] != "")
		}
	}
	// A session the model had not heard of (the Start in flight took
	// effect) brings its own deadline.
	if m.deadline == 0 || v.State == "locked" || v.SessionID != m.id {
		m.deadline = v.Deadline
	}
	m.state, m.id = v.State, v.SessionID
	if v.State == "active" && v.TimeboxSeconds < 60 {
		m.short = true
	}
	checkBuckets(t, r.c, r.d.StateDir)
}

// ── Torn and damaged files ─────────────────────────────────────────────

// fixture is a state directory as a real daemon left it: sealed sessions,
// an active one whose raw log holds focus events, stopped cleanly.
type fixture struct {
	dir      string
	activeID string
	sealed   int
}

func makeFixture(t *testing.T, bus *testenv.Bus) fixture {
	t.Helper()
	f := fixture{dir: filepath.Join(t.TempDir(), "fixture"), sealed: 3}
	d := testenv.StartDaemon(t, bus, f.dir)
	c := dialDaemon(t, d)
	for range f.sealed {
		c.start(t, 3600, "warn", "Editor")
		c.must(t, "Complete", nil)
		c.end(t)
	}
	f.activeID = c.start(t, 3600, "block", "Editor")
	d.Stop(t)
	// Focus events as the X sensor writes them, after the "daemon stopped"
	// line: a raw log with windows in it, titles and all.
	raw := filepath.Join(f.dir, "sessions", f.activeID+".jsonl")
	data, err := os.ReadFile(raw)
	if err != nil {
		t.Fatal(err)
	}
	events, _ := replayEvents(data)
	at := events[len(events)-1].At
	var add []byte
	for i, w := range []struct{ class, title string }{
		{"Editor", "main.go - editor"}, {"Distraction", "video 1:02 / 45:00"}, {"Editor", "main.go - editor"},
		{"", ""}, {"Editor", "notes.txt"}, {"Distraction", "video 3:04 / 45:00"},
	} {
		e := map[string]any{"at_unix_millis": at + int64(i+1)*37, "class": w.class, "title": w.title, "available": w.class != "", "reason": ""}
		if w.class == "" {
			e["reason"] = "no window has focus"
		}
		line, _ := json.Marshal(e)
		add = append(append(add, line...), '\n')
	}
	f2, err := os.OpenFile(raw, os.O_WRONLY|os.O_APPEND, 0)
	if err != nil {
		t.Fatal(err)
	}
	defer f2.Close()
	if _, err := f2.Write(add); err != nil {
		t.Fatal(err)
	}
	return f
}

// replayEvents parses the complete event lines of a raw log.
func replayEvents(data []byte) (events []struct{ At int64 }, skipped int) {
	for _, raw := range bytes.SplitAfter(data, []byte("\n")) {
		var e rawEvent
		if bytes.HasSuffix(raw, []byte("\n")) && json.Unmarshal(raw, &e) == nil && e.At != nil {
			events = append(events, struct{ At int64 }{*e.At})
		} else if len(raw) > 0 {
			skipped++
		}
	}
	return events, skipped
}

// damage is one way of hurting one file.
type damage struct {
	name string
	file string // relative to the state dir; "RAW" is the active session's raw log
	hurt func(rng *rand.Rand, data []byte) []byte
}

func truncateAt(rng *rand.Rand, data []byte) []byte {
	return data[:rng.IntN(len(data))]
}

func garbage(rng *rand.Rand, n int) []byte {
	b := make([]byte, n)
	for i := range b {
		b[i] = byte(rng.UintN(256))
	}
	return b
}

// replaceLine returns data with its line n (0-based) replaced by with.
func replaceLine(data []byte, n int, with []byte) []byte {
	lines := bytes.SplitAfter(data, []byte("\n"))
	var out []byte
	for i, l := range lines {
		if i == n {
			out = append(out, with...)
			continue
		}
		out = append(out, l...)
	}
	return out
}

func damages() []damage {
	return []damage{
		{"state/truncated", "state.json", truncateAt},
		{"state/empty", "state.json", func(*rand.Rand, []byte) []byte { return nil }},
		{"state/garbage", "state.json", func(rng *rand.Rand, d []byte) []byte { return garbage(rng, len(d)) }},
		{"audit/truncated", "audit.jsonl", truncateAt},
		{"audit/torn-garbage-tail", "audit.jsonl", func(rng *rand.Rand, d []byte) []byte {
			return append(slices.Clone(d), bytes.ReplaceAll(garbage(rng, 1+rng.IntN(200)), []byte("\n"), []byte("x"))...)
		}},
		{"audit/garbage-middle-line", "audit.jsonl", func(rng *rand.Rand, d []byte) []byte {
			return replaceLine(d, 1, []byte("\x00garbage where a summary was\n"))
		}},
		{"audit/garbage-overwrite", "audit.jsonl", func(rng *rand.Rand, d []byte) []byte {
			d = slices.Clone(d)
			at := rng.IntN(len(d) - 8)
			copy(d[at:], garbage(rng, min(8+rng.IntN(64), len(d)-at)))
			return d
		}},
		{"raw/truncated", "RAW", truncateAt},
		// A whole last line that lost only its newline: the next append
		// ends it, so it must count before that append as after.
		{"raw/last-newline-lost", "RAW", func(_ *rand.Rand, d []byte) []byte { return d[:len(d)-1] }},
		{"raw/garbage-middle", "RAW", func(rng *rand.Rand, d []byte) []byte {
			return replaceLine(d, 2, append(bytes.ReplaceAll(garbage(rng, 40), []byte("\n"), []byte("x")), '\n'))
		}},
		// A line of valid JSON that is not an event (another program's, a
		// future format's, a bit flip that kept the braces): it has no time.
		{"raw/json-not-an-event", "RAW", func(rng *rand.Rand, d []byte) []byte {
			return replaceLine(d, 3, []byte("{}\n"))
		}},
	}
}

func TestDamagedFilesAreSetAsideNeverDeleted(t *testing.T) {
	testenv.Need(t, "dbus-daemon", "dbus-send")
	seed := testenv.Seed(t)
	rng := rand.New(rand.NewPCG(seed, 7))
	bus := testenv.StartBus(t)
	fx := makeFixture(t, bus)
	for rep := range testenv.Scale(1) {
		for _, dm := range damages() {
			t.Run(fmt.Sprintf("%s/%d", dm.name, rep), func(t *testing.T) {
				dir := filepath.Join(t.TempDir(), "state")
				if err := testenv.CopyTree(fx.dir, dir, 0o700, 0o600); err != nil {
					t.Fatal(err)
				}
				file := dm.file
				if file == "RAW" {
					file = filepath.Join("sessions", fx.activeID+".jsonl")
				}
				path := filepath.Join(dir, file)
				orig, err := os.ReadFile(path)
				if err != nil {
					t.Fatal(err)
				}
				damaged := dm.hurt(rng, orig)
				if err := os.WriteFile(path, damaged, 0o600); err != nil {
					t.Fatal(err)
				}
				checkDamage(t, bus, dir, file, damaged, fx)
			})
		}
	}
}

// checkDamage starts a daemon on dir whose file holds damaged bytes.
func checkDamage(t *testing.T, bus *testenv.Bus, dir, file string, damaged []byte, fx fixture) {
	d := testenv.StartDaemon(t, bus, dir)
	defer d.Stop(t)
	c := dialDaemon(t, d)
	v := c.view(t)
	path := filepath.Join(dir, file)

	cut := false // audit.jsonl verifies by itself but ends before its recorded head

	// No byte is lost: the damaged bytes are found again, in place (maybe
	// followed by new lines) or set aside whole, or split between the two.
	aside, _ := filepath.Glob(path + ".*-*")
	kept, _ := os.ReadFile(path)
	switch {
	case len(aside) > 1:
		t.Fatalf("%s set aside: got %v, want at most once", file, aside)
	case len(aside) == 1:
		side, err := os.ReadFile(aside[0])
		if err != nil {
			t.Fatal(err)
		}
		head := len(damaged) - len(side)
		if !bytes.Equal(side, damaged) && (head < 0 || !bytes.Equal(side, damaged[head:]) || !bytes.HasPrefix(kept, damaged[:head])) {
			t.Fatalf("%s: got the damaged bytes lost, want them in %s (%d bytes) + %s (%d bytes)\ndamaged: %q\nkept: %q\naside: %q",
				file, file, len(kept), filepath.Base(aside[0]), len(side), damaged, kept, side)
		}
		base := filepath.Base(aside[0])
		why := strings.TrimPrefix(base, filepath.Base(file)+".")
		if !strings.HasPrefix(why, "damaged-") && !strings.HasPrefix(why, "torn-") {
			t.Errorf("the name set aside: got %s, want it to say damaged or torn", base)
		}
		if !strings.Contains(strings.Join(v.Problems, "\n"), base) {
			t.Errorf("Problems with %s set aside as %s: got %q, want it named", file, base, v.Problems)
		}
	case file != "state.json" && !bytes.HasPrefix(kept, damaged):
		t.Fatalf("%s: got it changed in place, want the damaged bytes still its prefix\ndamaged: %q\nnow: %q", file, damaged, kept)
	}

	switch {
	case file == "state.json":
		var snap service.Snapshot
		usable := json.Unmarshal(damaged, &snap) == nil && snap.Version >= 1 && snap.Version <= service.SnapshotVersion && slices.Contains(service.States, snap.State)
		if usable != (len(aside) == 0) {
			t.Fatalf("state.json (usable: %v): got set aside %v (Problems %q), want it set aside exactly when unusable", usable, aside, v.Problems)
		}
		if !usable && (v.State != "locked" || v.SessionID != "") {
			t.Fatalf("after a damaged state.json: got %s %q, want locked", v.State, v.SessionID)
		}
	case file == "audit.jsonl":
		entries, bad, why := chainOf(kept)
		// A chain that verifies by itself but ends before the head recorded
		// at the last seal was cut at a line boundary: broken too.
		orig, _ := os.ReadFile(filepath.Join(fx.dir, "audit.jsonl"))
		sealed, _, _ := chainOf(orig)
		cut = bad == 0 && len(entries) < len(sealed)
		r := c.verifyAudit(t)
		if r.OK != (bad == 0 && !cut) || int(r.Entries) != len(entries) {
			t.Fatalf("VerifyAudit: got %+v, want what docs/audit.md's rule finds: %d good entries, then line %d: %s (%d were sealed)", r, len(entries), bad, why, len(sealed))
		}
		if cut && (!strings.Contains(r.Problem, fmt.Sprintf("but seq %d", len(sealed))) || !strings.Contains(strings.Join(v.Problems, "\n"), "audit.jsonl")) {
			t.Errorf("audit.jsonl cut to %d of %d entries: got VerifyAudit %q, Problems %q, want both to say so (but seq %d)", len(entries), len(sealed), r.Problem, v.Problems, len(sealed))
		}
		if bad != 0 {
			if !strings.Contains(r.Problem, fmt.Sprintf("line %d", bad)) {
				t.Errorf("VerifyAudit's problem: got %q, want it to name line %d", r.Problem, bad)
			}
			// A chain that no longer verifies is damage the person must hear
			// of without asking: Problems says so from the start.
			if !strings.Contains(strings.Join(v.Problems, "\n"), "audit.jsonl") {
				t.Errorf("Problems with audit.jsonl not verifying from line %d (%s): got %q, want audit.jsonl named", bad, why, v.Problems)
			}
		}
	default: // the raw log
		if v.State != "active" || v.SessionID != fx.activeID {
			t.Fatalf("after a damaged raw log: got %s %q, want active %q (it must not cost the session)", v.State, v.SessionID, fx.activeID)
		}
		checkBuckets(t, c, dir)
	}

	// Life goes on: a session can still be sealed, and it links to the
	// last line that was in the chain.
	if v.State == "active" {
		c.must(t, "Complete", nil)
	}
	if v.State != "locked" {
		c.end(t)
	}
	before, _ := os.ReadFile(filepath.Join(dir, "audit.jsonl"))
	c.start(t, 60, "")
	c.must(t, "Complete", nil)
	hash := c.end(t)
	after, _ := os.ReadFile(filepath.Join(dir, "audit.jsonl"))
	if !bytes.HasPrefix(after, before) {
		t.Fatalf("audit.jsonl after a seal: got it rewritten, want it appended to")
	}
	newLine := bytes.TrimSuffix(after[len(before):], []byte("\n"))
	var e auditEntry
	if err := json.Unmarshal(newLine, &e); err != nil || e.Hash != hash {
		t.Fatalf("the new audit line: got %q (%v), want it to carry End's hash %s", newLine, err, hash)
	}
	prevHash := genesis
	for _, l := range bytes.Split(bytes.TrimSuffix(before, []byte("\n")), []byte("\n")) {
		var p auditEntry
		if json.Unmarshal(l, &p) == nil && p.Hash != "" {
			prevHash = p.Hash
		}
	}
	if h, _ := lineHash(e.PrevHash, newLine); e.PrevHash != prevHash || h != hash {
		t.Fatalf("the new line: got prev_hash %.12s… and a hash recomputing to %.12s…, want prev_hash %.12s… (the last line's) and End's %.12s…", e.PrevHash, h, prevHash, hash)
	}
	switch _, bad, _ := chainOf(before); {
	case cut:
		if r := c.verifyAudit(t); r.OK {
			t.Errorf("VerifyAudit after a seal after the cut: got %+v, want not ok (a seal does not mend a cut)", r)
		}
	case bad == 0:
		checkChain(t, c, dir)
	}
}

// ── Full and read-only disks ───────────────────────────────────────────

// sealsLater checks that summaries left pending are all sealed now.
func sealsLater(t *testing.T, c *client, dir string, ids ...string) {
	t.Helper()
	v := c.view(t)
	if v.AuditPending != 0 {
		t.Fatalf("AuditPending after space came back: got %d (Problems %q), want 0", v.AuditPending, v.Problems)
	}
	for _, p := range v.Problems {
		if strings.Contains(p, "audit.jsonl") || strings.Contains(p, "state.json") {
			t.Errorf("Problems after the storage failure: got %q, want no storage problem", p)
		}
	}
	sealed := checkChain(t, c, dir)
	for _, id := range ids {
		if sealed[id] == "" {
			t.Errorf("audit.jsonl: got no session %s (ended while the disk failed), want it sealed", id)
		}
	}
}

// endWhileFailing runs a whole session on a failing disk: every transition
// completes, End returns "" and the summary is pending.
func endWhileFailing(t *testing.T, c *client, pending uint32) string {
	t.Helper()
	id := c.start(t, 3600, "warn", "Editor")
	if v := c.view(t); v.State != "active" || v.SessionID != id {
		t.Fatalf("after Start on a failing disk: got %s %q, want active %q", v.State, v.SessionID, id)
	}
	c.must(t, "Complete", nil)
	if hash := c.end(t); hash != "" {
		t.Fatalf("End's hash on a failing disk: got %s, want none", hash)
	}
	v := c.view(t)
	if v.State != "locked" || v.AuditPending != pending {
		t.Fatalf("after End on a failing disk: got %s, AuditPending %d, want locked, %d", v.State, v.AuditPending, pending)
	}
	if !strings.Contains(strings.Join(v.Problems, "\n"), "could not be sealed") {
		t.Fatalf("Problems on a failing disk: got %q, want one saying the summary could not be sealed", v.Problems)
	}
	return id
}

// leaveNoSlack seals a session sized so that the last page of audit.jsonl
// has no room for another line. A file system allocates whole pages, so a
// "full" disk still takes an append that fits the last page's slack; the
// test wants the next seal to need a page the disk cannot give.
func leaveNoSlack(t *testing.T, c *client, dir string) {
	t.Helper()
	const page, margin = 4096, 60
	path := filepath.Join(dir, "audit.jsonl")
	// Both texts take up to MaxTextLen each, so a page fills in a few
	// sessions; a line that comes out longer than foreseen (more digits,
	// another bucket) spills onto the next page, which then fills too.
	for range 24 {
		data, err := os.ReadFile(path)
		if err != nil {
			t.Fatal(err)
		}
		slack := (page - len(data)%page) % page
		lines := bytes.Split(bytes.TrimSuffix(data, []byte("\n")), []byte("\n"))
		var last struct {
			NextAction       string `json:"next_action"`
			SuccessCondition string `json:"success_condition"`
		}
		if err := json.Unmarshal(lines[len(lines)-1], &last); err != nil {
			t.Fatal(err)
		}
		// The length of a line with one-character texts.
		fixed := len(lines[len(lines)-1]) + 1 - len(last.NextAction) - len(last.SuccessCondition) + 2
		if slack < fixed+margin {
			return // no line fits any more
		}
		n := min(slack-fixed-margin/2, 2*service.MaxTextLen-2)
		action, cond := 1+min(n, service.MaxTextLen-1), 1+max(n-(service.MaxTextLen-1), 0)
		c.must(t, "Start", []any{strings.Repeat("n", action), strings.Repeat("h", cond), uint64(3600), "warn", []string{}})
		c.must(t, "Complete", nil)
		c.end(t)
	}
	t.Fatal("the last page of audit.jsonl: got it not filled, want it full")
}

// spaceComesBack removes the ballast and runs a session: its End must
// seal (and seals what is pending before it).
func spaceComesBack(t *testing.T, c *client, ballast string) {
	t.Helper()
	if err := os.Remove(ballast); err != nil {
		t.Fatal(err)
	}
	c.start(t, 3600, "warn")
	c.must(t, "Complete", nil)
	if c.end(t) == "" {
		t.Fatal("End's hash once space came back: got none, want one")
	}
}

// The tmpfs is sized so that the daemon's own files (a page per session's
// raw log, the spare) never take the last free page: at 64k, the sessions
// leaveNoSlack runs could, depending on how long their lines came out, so
// the ballast held nothing and removing it freed nothing, and the "space
// came back" restart ran on a disk that was still full. The ballast's size
// is checked where it matters.
func TestFullDiskKeepsSummariesPending(t *testing.T) {
	testenv.Need(t, "dbus-daemon", "dbus-send")
	mnt := testenv.Tmpfs(t, "128k")
	d := testenv.StartDaemon(t, testenv.StartBus(t), mnt.Dir)
	c := dialDaemon(t, d)
	sealedBefore := c.start(t, 3600, "warn")
	c.must(t, "Complete", nil)
	c.end(t)

	ballast := filepath.Join(mnt.Dir, "ballast")
	leaveNoSlack(t, c, mnt.Dir)
	t.Logf("ballast: %d bytes", testenv.Fill(t, ballast))
	a := endWhileFailing(t, c, 1)
	b := endWhileFailing(t, c, 2)

	// Space comes back; the next End seals everything pending, in order.
	spaceComesBack(t, c, ballast)
	sealsLater(t, c, mnt.Dir, sealedBefore, a, b)
	data, _ := os.ReadFile(filepath.Join(mnt.Dir, "audit.jsonl"))
	if entries, _, _ := chainOf(data); len(entries) < 4 || entries[len(entries)-3].SessionID != a || entries[len(entries)-2].SessionID != b {
		t.Fatalf("the chain: got\n%s\nwant the four sessions in the order they ended", data)
	}

	// And a restart seals them too: the disk fills, a session ends pending,
	// space comes back, the daemon is stopped and started again.
	leaveNoSlack(t, c, mnt.Dir)
	if n := testenv.Fill(t, ballast); n < 2*4096 {
		t.Fatalf("the ballast: got %d bytes, want at least %d (else the disk was full before it, and removing it cannot give space back)", n, 2*4096)
	}
	x := endWhileFailing(t, c, 1)
	if err := os.Remove(ballast); err != nil {
		t.Fatal(err)
	}
	d.Stop(t)
	stopped := d.Output() // what the stopping daemon said about saving and sealing
	d.Start(t)
	if v := c.view(t); v.State != "locked" {
		t.Errorf("after the restart (session %s ended before it): got %s %q, want locked", x, v.State, v.SessionID)
	}
	sealsLater(t, c, mnt.Dir, x)
	if t.Failed() {
		t.Logf("the daemon before the restart:\n%s", stopped)
	}
}

// A disk that stays full through a stop and the next start: the summary
// of the session that ended meanwhile cannot go into state.json, so it goes
// into the spare; the stopping daemon logs it, the next start adopts it and
// says so in Problems, and seals it once there is room.
func TestFullDiskThroughAStopKeepsTheSummary(t *testing.T) {
	testenv.Need(t, "dbus-daemon", "dbus-send")
	mnt := testenv.Tmpfs(t, "128k")
	d := testenv.StartDaemon(t, testenv.StartBus(t), mnt.Dir)
	c := dialDaemon(t, d)
	sealSessions(t, c, 1) // state.json saved once: the spare's pages are taken

	ballast := filepath.Join(mnt.Dir, "ballast")
	leaveNoSlack(t, c, mnt.Dir)
	testenv.Fill(t, ballast)
	x := endWhileFailing(t, c, 1)
	d.Stop(t)
	if out := d.Output(); !strings.Contains(out, "pending.spare") || !strings.Contains(out, x) {
		t.Errorf("the stopping daemon's log: got\n%s\nwant it to say session %s went to pending.spare", out, x)
	}
	d.Start(t) // the disk is still full
	v := c.view(t)
	if v.State != "locked" || v.AuditPending != 1 {
		t.Fatalf("after a restart on a full disk: got %s, AuditPending %d (Problems %q), want locked, 1", v.State, v.AuditPending, v.Problems)
	}
	if p := strings.Join(v.Problems, "\n"); !strings.Contains(p, x) || !strings.Contains(p, "pending.spare") {
		t.Errorf("Problems after a restart on a full disk: got %q, want the recovered session %s and pending.spare named", v.Problems, x)
	}

	spaceComesBack(t, c, ballast)
	if sealed := checkChain(t, c, mnt.Dir); sealed[x] == "" {
		t.Errorf("audit.jsonl: got no session %s (ended on a disk full through the stop), want it sealed", x)
	}
	if v := c.view(t); v.AuditPending != 0 {
		t.Errorf("AuditPending once space came back: got %d, want 0", v.AuditPending)
	}
}

func TestReadOnlyStateDir(t *testing.T) {
	testenv.Need(t, "dbus-daemon", "dbus-send")
	mnt := testenv.Tmpfs(t, "1m")
	d := testenv.StartDaemon(t, testenv.StartBus(t), mnt.Dir)
	c := dialDaemon(t, d)
	c.start(t, 3600, "warn")
	c.must(t, "Complete", nil)
	c.end(t)

	// Read-only under a running daemon (idle: no raw log is open).
	mnt.ReadOnly(t)
	a := endWhileFailing(t, c, 1)
	mnt.ReadWrite(t)
	c.start(t, 3600, "warn")
	c.must(t, "Complete", nil)
	if c.end(t) == "" {
		t.Fatal("End's hash once the disk was writable again: got none, want one")
	}
	sealsLater(t, c, mnt.Dir, a)

	// A daemon started on a read-only state directory (a full home
	// remounted read-only by the kernel after an error) still serves.
	d.Stop(t)
	mnt.ReadOnly(t)
	d.Start(t)
	if v := c.view(t); len(v.Problems) == 0 {
		t.Errorf("Problems started on a read-only state dir: got none, want a problem said")
	}
	b := endWhileFailing(t, c, 1)
	mnt.ReadWrite(t)
	c.start(t, 3600, "warn")
	c.must(t, "Complete", nil)
	c.end(t)
	sealsLater(t, c, mnt.Dir, a, b)
}

// ── Peers going away ───────────────────────────────────────────────────

// The X server dies and comes back under a running session: the daemon
// stays up, says evidence is unavailable and why, accounts the gap to
// "(evidence unavailable)", and follows the new server. (The notification
// server coming and going is TestNotificationServerComingAndGoing.)
func TestXServerGoingAwayAndComingBack(t *testing.T) {
	k := startDesktop(t, false, "")
	c := dialDaemon(t, k.d)
	pid := k.d.PID()
	id := c.start(t, 3600, "block", "Editor")
	k.x.Activate(t, k.distraction)
	waitProp(t, k.d, "CurrentClass", "Distraction")

	k.x.Kill()
	waitFor(t, wait, "evidence to be unavailable, with the reason", func() (bool, string) {
		v := c.view(t)
		return !v.EvidenceAvailable && strings.Contains(v.EvidenceReason, "X server") && v.Drift == "unknown",
			fmt.Sprintf("available %v, reason %q, drift %s", v.EvidenceAvailable, v.EvidenceReason, v.Drift)
	})
	if !k.d.Alive() || k.bus.OwnerPID(t, busName) != pid {
		t.Fatalf("the daemon after the X server died: got it gone or replaced, want pid %d alive and owning the name\n%s", pid, k.d.Output())
	}

	k.x.Restart(t)
	w := k.x.XTerm(t, "Editor", "after the restart")
	k.x.Activate(t, w)
	waitFor(t, wait, "evidence to come back from the new X server", func() (bool, string) {
		v := c.view(t)
		return v.EvidenceAvailable && v.CurrentClass == "Editor" && v.CurrentTitle == "after the restart",
			fmt.Sprintf("available %v, class %q, title %q, reason %q", v.EvidenceAvailable, v.CurrentClass, v.CurrentTitle, v.EvidenceReason)
	})
	v := c.view(t)
	if v.SessionID != id || v.State != "active" || v.Drift != "on_task" {
		t.Fatalf("after the X server came back: got %s %q drift %s, want active %q on_task", v.State, v.SessionID, v.Drift, id)
	}
	var gap bool
	for _, b := range v.Buckets {
		gap = gap || b.Title == service.UnavailableTitle
	}
	if !gap {
		t.Errorf("Buckets: got %v, want the time without an X server in an (evidence unavailable) bucket", v.Buckets)
	}
	checkBuckets(t, c, k.d.StateDir)
	if k.bus.OwnerPID(t, busName) != pid {
		t.Fatalf("org.antidrift's owner: got another daemon, want pid %d", pid)
	}
}
