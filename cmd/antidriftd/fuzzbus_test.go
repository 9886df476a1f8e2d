package main

// The D-Bus surface under random input: a fuzzer of calls and arguments,
// the permission table swept cell by cell over the bus, and a random
// search for a way out of a locked session.

import (
	"context"
	"encoding/xml"
	"fmt"
	"math"
	"math/rand/v2"
	"os"
	"path/filepath"
	"reflect"
	"slices"
	"sort"
	"strings"
	"testing"
	"time"
	"unicode/utf8"

	"github.com/godbus/dbus/v5"
	"github.com/godbus/dbus/v5/introspect"

	"github.com/antidrift/antidrift/dist"
	"github.com/antidrift/antidrift/internal/testsupport/testenv"
)

// fastDaemon is a daemon whose state lives on a RAM disk (thousands of
// transitions, each fsynced) with the given config.
func fastDaemon(t *testing.T, configTOML string) (*testenv.Daemon, *client) {
	t.Helper()
	testenv.Need(t, "dbus-daemon", "dbus-send")
	home := t.TempDir()
	if err := os.MkdirAll(filepath.Join(home, "antidrift"), 0o700); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(filepath.Join(home, "antidrift", "config.toml"), []byte(configTOML), 0o600); err != nil {
		t.Fatal(err)
	}
	d := testenv.StartDaemon(t, testenv.StartBus(t), filepath.Join(testenv.FastDir(t), "state"), "XDG_CONFIG_HOME="+home)
	return d, dialDaemon(t, d)
}

// ── The properties, mirrored from PropertiesChanged ────────────────────

// mirror follows the properties through PropertiesChanged, so a test can
// check every state the daemon publishes — including those a timer makes
// between two calls — without a round trip per check. The daemon emits
// the signal before it replies, the bus keeps the order, and godbus puts a
// signal in a channel with room for it before it handles the next message,
// so when a call returns, its changes are in the channel.
type mirror struct {
	c     *client
	ch    chan *dbus.Signal
	props map[string]dbus.Variant
}

func watch(t *testing.T, c *client) *mirror {
	t.Helper()
	err := c.conn.AddMatchSignal(dbus.WithMatchObjectPath(objectPath),
		dbus.WithMatchInterface("org.freedesktop.DBus.Properties"), dbus.WithMatchMember("PropertiesChanged"))
	if err != nil {
		t.Fatal(err)
	}
	m := &mirror{c: c, ch: make(chan *dbus.Signal, 1<<14)}
	c.conn.Signal(m.ch)
	t.Cleanup(func() { c.conn.RemoveSignal(m.ch) })
	m.resync(t)
	return m
}

// resync starts over from GetAll (after a restart: a new daemon announces
// changes against its own first state).
func (m *mirror) resync(t *testing.T) {
	t.Helper()
	m.drain(t, nil)
	if err := m.c.do("org.freedesktop.DBus.Properties.GetAll", sessionIfc).Store(&m.props); err != nil {
		t.Fatalf("GetAll: %v", err)
	}
}

// drain applies every PropertiesChanged received so far, calling check
// with each state in turn.
func (m *mirror) drain(t *testing.T, check func(view)) {
	t.Helper()
	for {
		select {
		case sig := <-m.ch:
			if len(sig.Body) < 2 || sig.Path != objectPath || sig.Name != "org.freedesktop.DBus.Properties.PropertiesChanged" {
				continue
			}
			changed, ok := sig.Body[1].(map[string]dbus.Variant)
			if !ok {
				t.Fatalf("PropertiesChanged body: got %v, want the changed properties (a{sv}) second", sig.Body)
			}
			if m.props == nil {
				continue // before the first GetAll
			}
			for k, v := range changed {
				m.props[k] = v
			}
			if check != nil {
				v, err := parseView(m.props)
				if err != nil {
					t.Fatal(err)
				}
				check(v)
			}
		default:
			return
		}
	}
}

// view is the mirrored state.
func (m *mirror) view(t *testing.T) view {
	t.Helper()
	v, err := parseView(m.props)
	if err != nil {
		t.Fatal(err)
	}
	return v
}

// agrees waits until the mirror equals GetAll: the signals told every
// change. (A timer may change the state between the two; then the signal
// is on its way.)
func (m *mirror) agrees(t *testing.T, check func(view)) {
	t.Helper()
	waitFor(t, wait, "PropertiesChanged to have told what GetAll reads", func() (bool, string) {
		m.drain(t, check)
		var all map[string]dbus.Variant
		if err := m.c.do("org.freedesktop.DBus.Properties.GetAll", sessionIfc).Store(&all); err != nil {
			t.Fatalf("GetAll: %v", err)
		}
		var diffs []string
		for k, v := range all {
			if unannounced(t)[k] {
				continue // it changes without a signal, as its annotation says
			}
			if mv, ok := m.props[k]; !ok || !reflect.DeepEqual(mv.Value(), v.Value()) {
				diffs = append(diffs, fmt.Sprintf("%s: told %v, reads %v", k, mv, v))
			}
		}
		return len(diffs) == 0, strings.Join(diffs, "; ")
	})
}

// unannounced is the set of properties the interface XML annotates
// EmitsChangedSignal=false: their value may change without a
// PropertiesChanged (Buckets counts the current window up to each read).
func unannounced(t *testing.T) map[string]bool {
	t.Helper()
	var node introspect.Node
	if err := xml.Unmarshal([]byte(dist.InterfaceXML), &node); err != nil {
		t.Fatal(err)
	}
	out := map[string]bool{}
	for _, iface := range node.Interfaces {
		for _, p := range iface.Properties {
			for _, a := range p.Annotations {
				if a.Name == "org.freedesktop.DBus.Property.EmitsChangedSignal" && a.Value == "false" {
					out[p.Name] = true
				}
			}
		}
	}
	return out
}

// ── Argument generators ────────────────────────────────────────────────

type gen struct{ r *rand.Rand }

func (g gen) pick(n int) int { return g.r.IntN(n) }

// str is a string a client may send: valid UTF-8 without NUL, since the
// wire allows nothing else (godbus refuses to encode it, and the bus would
// drop a connection that sent it).
func (g gen) str() string {
	switch g.pick(24) {
	case 0:
		return ""
	case 1:
		return "   "
	case 2:
		return strings.Repeat("x", 500)
	case 3:
		return strings.Repeat("é", 501)
	case 4:
		return "a\nb"
	case 5:
		return "\t tab"
	case 6:
		return "\x1b[31mred\x1b[0m"
	case 7:
		return "next\u0085line"
	case 8:
		return "\u202eevil\u202c"
	case 9:
		return "🚀 ünïcödé 漢字"
	case 10, 11, 12:
		return []string{"observe", "warn", "block", "locked", "LOCKED", " locked", "lock", "none"}[g.pick(8)]
	case 13, 14:
		return []string{"Editor", "Terminal", "Firefox", "editor", "Distraction"}[g.pick(5)]
	case 15:
		return strings.Repeat("c", 256)
	case 16:
		return strings.Repeat("c", 257)
	case 17:
		if g.pick(32) == 0 { // a 1 MB string, now and then
			return strings.Repeat("M", 1<<20)
		}
		return strings.Repeat("k", 1+g.pick(4096))
	case 18:
		b := make([]rune, 1+g.pick(40))
		for i := range b {
			b[i] = rune(1 + g.pick(0x2FFFF))
			if !utf8.ValidRune(b[i]) {
				b[i] = '?'
			}
		}
		return string(b)
	case 19:
		return "\u00a0\u2003padded\u3000"
	default:
		return []string{"write the intro", "tests pass", "because", "family emergency", "a"}[g.pick(5)]
	}
}

func (g gen) u64() uint64 {
	return []uint64{0, 1, 2, 3, 59, 60, 3600, 86399, 86400, 86401, math.MaxUint64, math.MaxUint64 - 1, 1 << 63, math.MaxInt64, g.r.Uint64(), g.r.Uint64N(100000)}[g.pick(16)]
}

func (g gen) i64() int64 {
	return []int64{0, 1, -1, 3600, 86400, 400 * 86400, 400*86400 + 1, math.MinInt64, math.MaxInt64, g.r.Int64(), g.r.Int64N(2e9)}[g.pick(11)]
}

func (g gen) u32() uint32 {
	return []uint32{0, 1, 50, 999, 1000, 1001, math.MaxUint32, math.MaxUint32 - 1, g.r.Uint32()}[g.pick(9)]
}

func (g gen) strs() []string {
	switch g.pick(8) {
	case 0:
		return []string{}
	case 1:
		out := make([]string, 64)
		for i := range out {
			out[i] = fmt.Sprintf("class%d", i)
		}
		return out
	case 2:
		out := make([]string, 65)
		for i := range out {
			out[i] = fmt.Sprintf("class%d", i)
		}
		return out
	case 3:
		return []string{"Editor", "EDITOR", "editor"}
	default:
		out := make([]string, g.pick(4))
		for i := range out {
			out[i] = g.str()
		}
		return out
	}
}

// wrong is a value of a random type, for wrong signatures.
func (g gen) wrong() any {
	switch g.pick(14) {
	case 0:
		return int32(g.r.Int32() - math.MaxInt32/2)
	case 1:
		return int64(-1)
	case 2:
		return g.pick(2) == 0
	case 3:
		return byte(g.pick(256))
	case 4:
		return 3.5
	case 5:
		return []byte{0xff, 0xfe, 0x00, 'a'} // ay: bytes, so invalid UTF-8 is fine here
	case 6:
		return map[string]dbus.Variant{"k": dbus.MakeVariant(g.str())}
	case 7:
		return struct {
			A string
			B uint64
		}{g.str(), g.u64()}
	case 8:
		return dbus.MakeVariant(g.str())
	case 9:
		return dbus.ObjectPath("/org/antidrift/Session1")
	case 10:
		return dbus.Signature{}
	case 11:
		return int16(-7)
	case 12:
		return []uint64{1, 2, 3}
	default:
		return g.u32()
	}
}

// signature is the right argument list of each method, as generators.
var signatures = map[string][]func(gen) any{
	"Plan":            nil,
	"CancelPlan":      nil,
	"Start":           {func(g gen) any { return g.str() }, func(g gen) any { return g.str() }, func(g gen) any { return g.u64() }, func(g gen) any { return g.str() }, func(g gen) any { return g.strs() }},
	"Complete":        nil,
	"Abandon":         {func(g gen) any { return g.str() }},
	"Extend":          {func(g gen) any { return g.u64() }},
	"End":             nil,
	"Refocus":         nil,
	"Allow":           {func(g gen) any { return g.str() }},
	"SetEnforcement":  {func(g gen) any { return g.str() }},
	"BreakGlass":      {func(g gen) any { return g.str() }},
	"VerifyAudit":     nil,
	"History":         {func(g gen) any { return g.u32() }},
	"Report":          {func(g gen) any { return g.i64() }, func(g gen) any { return g.i64() }},
	"ReportDevice":    {func(g gen) any { return g.i64() }, func(g gen) any { return g.i64() }, func(g gen) any { return g.str() }},
	"ReviewProposals": nil,
	"ApplyProposal":   {func(g gen) any { return g.u32() }},
}

var propertyNames = []string{"State", "SessionId", "Deadline", "Buckets", "Problems", "AuditPending", "Version", "Nope", ""}

// randomCall is a member to call and its arguments: mostly the right
// signature with edge values, sometimes a wrong one.
func (g gen) randomCall() (member string, args []any) {
	methods := make([]string, 0, len(signatures))
	for m := range signatures {
		methods = append(methods, m)
	}
	sort.Strings(methods)
	switch k := g.pick(20); {
	case k < 2: // a Start that may well succeed, so active sessions get their share
		member = sessionIfc + ".Start"
		args = []any{"write the intro", "tests pass", []uint64{1, 2, 3, 60, 3600}[g.pick(5)],
			[]string{"", "observe", "warn", "block", "locked"}[g.pick(5)], []string{"Editor"}}
		args[g.pick(8)%5] = signatures["Start"][g.pick(5)%5](g) // and one argument at random, sometimes
		if g.pick(2) == 0 {
			args[4] = []string{"Editor"}
		}
	case k < 14:
		m := methods[g.pick(len(methods))]
		member = sessionIfc + "." + m
		for _, a := range signatures[m] {
			args = append(args, a(g))
		}
	case k < 16:
		member = "org.freedesktop.DBus.Properties." + []string{"Get", "GetAll", "Set"}[g.pick(3)]
		ifc := []string{sessionIfc, "", "org.antidrift.Nope", "org.freedesktop.DBus.Properties"}[g.pick(4)]
		switch member {
		case "org.freedesktop.DBus.Properties.Get":
			args = []any{ifc, propertyNames[g.pick(len(propertyNames))]}
		case "org.freedesktop.DBus.Properties.GetAll":
			args = []any{ifc}
		default:
			args = []any{ifc, propertyNames[g.pick(len(propertyNames))], dbus.MakeVariant(g.wrong())}
		}
	case k < 17:
		member = []string{sessionIfc + ".Selfdestruct", "org.antidrift.Nope.Plan", "org.freedesktop.DBus.Introspectable.Introspect", "org.freedesktop.DBus.Peer.Ping"}[g.pick(4)]
	default: // a wrong signature: wrong count, wrong types
		if g.pick(3) == 0 {
			member = "org.freedesktop.DBus.Properties." + []string{"Get", "GetAll", "Set"}[g.pick(3)]
		} else {
			member = sessionIfc + "." + methods[g.pick(len(methods))]
		}
		for range g.pick(7) {
			if g.pick(3) == 0 {
				args = append(args, g.str())
			} else {
				args = append(args, g.wrong())
			}
		}
	}
	return member, args
}

// describe shortens arguments for a log line.
func describe(member string, args []any) string {
	parts := make([]string, len(args))
	for i, a := range args {
		s := fmt.Sprintf("%#v", a)
		if len(s) > 60 {
			s = s[:60] + fmt.Sprintf("…(%d bytes)", len(s))
		}
		parts[i] = s
	}
	return member + "(" + strings.Join(parts, ", ") + ")"
}

// ── Invariants of the properties ───────────────────────────────────────

func invariantBroken(v view) string {
	live := v.State == "active" || v.State == "review"
	switch {
	case !slices.Contains([]string{"locked", "planning", "active", "review"}, v.State):
		return "unknown state"
	case live != (v.Deadline != 0):
		return "Deadline is set exactly when active or in review"
	case live != (v.SessionID != ""):
		return "SessionId is empty exactly when locked or planning"
	case live != (v.StartedAt != 0):
		return "StartedAt is set exactly when active or in review"
	case v.StartedAt > v.Deadline:
		return "StartedAt ≤ Deadline"
	case (v.State == "active") != (v.Drift != "none"):
		return `Drift is "none" exactly outside active`
	case v.State == "active" && !slices.Contains([]string{"unknown", "on_task", "drifting", "away", "break"}, v.Drift):
		return "Drift is one of unknown, on_task, drifting, away, break while active"
	case v.TimeboxSeconds > 86400 || (live && v.TimeboxSeconds == 0):
		return "TimeboxSeconds is 1–86400 in a session"
	case len(v.AllowedClasses) > 64:
		return "AllowedClasses has at most 64 entries"
	case len(v.Buckets) > 20:
		return "Buckets has at most 20 entries"
	case (v.State == "review") != (v.Outcome != ""):
		return "Outcome is set exactly in review"
	case v.State == "review" && !slices.Contains([]string{"completed", "abandoned", "expired"}, v.Outcome):
		return "Outcome is completed, abandoned or expired"
	case live && !slices.Contains([]string{"observe", "warn", "block", "locked"}, v.Enforcement):
		return "a session has a level"
	case v.State == "locked" && v.Enforcement != "":
		return "no level when locked"
	case v.Enforced && v.State != "active":
		return "Enforced only while active"
	case utf8.RuneCountInString(v.NextAction) > 500 || utf8.RuneCountInString(v.SuccessCondition) > 500:
		return "next action and success condition at most 500 characters"
	case !live && (v.NextAction != "" || v.SuccessCondition != "" || v.TimeboxSeconds != 0 || len(v.AllowedClasses) != 0 || v.BreakGlassAt != 0):
		return "no commitment outside a session"
	case v.AuditPending != 0 || len(v.Problems) != 0:
		return "no pending summaries or problems on a healthy disk"
	}
	return ""
}

// errorExpected says whether a failed call failed the way a live daemon
// should: with a named error of antidrift's or the standard D-Bus ones for
// wrong signatures, unknown methods, read-only properties and messages over
// the daemon's size limit — never with the daemon gone (NoReply,
// ServiceUnknown) or silent.
func errorExpected(name string) bool {
	switch name {
	case "org.antidrift.Error.NotPermitted", "org.antidrift.Error.InvalidArgument",
		"org.freedesktop.DBus.Error.InvalidArgs", "org.freedesktop.DBus.Error.UnknownMethod",
		"org.freedesktop.DBus.Error.UnknownInterface", "org.freedesktop.DBus.Error.UnknownProperty",
		"org.freedesktop.DBus.Error.PropertyReadOnly", "org.freedesktop.DBus.Error.LimitsExceeded":
		return true
	}
	return false
}

// ── The fuzzer ─────────────────────────────────────────────────────────

func TestBusFuzz(t *testing.T) {
	seed := testenv.Seed(t)
	g := gen{rand.New(rand.NewPCG(seed, 23))}
	d, c := fastDaemon(t, "break_glass_hold = \"100ms\"\ndrift_grace = \"0s\"\n")
	m := watch(t, c)
	pid := d.PID()
	n := testenv.Scale(10000)
	seen := map[string]int{}
	states := map[string]int{}
	began := time.Now()
	for i := range n {
		member, args := g.randomCall()
		check := func(v view) {
			states[v.State]++
			if broken := invariantBroken(v); broken != "" {
				t.Fatalf("after call %d %s: got %+v, want the invariant kept: %q broken", i, describe(member, args), v, broken)
			}
		}
		call := c.do(member, args...)
		if err := call.Err; err != nil {
			name := errName(err)
			if name == "" {
				// Refused before it left: godbus will not encode what the
				// wire forbids. Never expected for the values we send.
				t.Fatalf("call %d %s failed in the client: %v", i, describe(member, args), err)
			}
			if !errorExpected(name) {
				t.Fatalf("call %d %s: error %s: %v\n%s", i, describe(member, args), name, err, d.Output())
			}
			seen[name]++
		} else {
			seen["(succeeded) "+member[strings.LastIndex(member, ".")+1:]]++
		}
		m.drain(t, check)
		if i%8 == 7 {
			m.agrees(t, check)
			check(m.view(t))
		}
	}
	if !d.Alive() || d.Bus.OwnerPID(t, busName) != pid {
		t.Fatalf("after %d calls: got the daemon (pid %d) dead or no longer owning %s, want it alive and owning it\n%s", n, pid, busName, d.Output())
	}
	checkChain(t, c, d.StateDir)
	names := make([]string, 0, len(seen))
	for k := range seen {
		names = append(names, k)
	}
	sort.Strings(names)
	var b strings.Builder
	for _, k := range names {
		fmt.Fprintf(&b, "\n  %6d %s", seen[k], k)
	}
	t.Logf("%d calls in %v; states published: %v; outcomes:%s", n, time.Since(began).Round(time.Millisecond), states, b.String())

	// The one thing a client cannot send: a string that is not UTF-8, or
	// holds NUL. godbus refuses to encode it; the daemon never sees it.
	for _, bad := range []string{"\xff\xfe", "nul\x00inside"} {
		if err := c.call("Abandon", bad).Err; err == nil || errName(err) != "" {
			t.Errorf("sending %q: %v (want godbus to refuse it before the wire)", bad, err)
		}
	}
}

// Every call gets a reply. godbus stores a wrongly typed argument into a
// string parameter by conversion — y 0 or u 0 becomes "\x00" — and an
// error message that echoes such a string cannot be marshalled (D-Bus
// strings hold no NUL), so godbus drops the reply and the caller waits
// forever. The fuzzer found it; this pins it down.
func TestOddArgumentsStillGetAReply(t *testing.T) {
	d, c := fastDaemon(t, "")
	for _, k := range []struct {
		member string
		args   []any
	}{
		{"org.freedesktop.DBus.Properties.GetAll", []any{byte(0)}},
		{"org.freedesktop.DBus.Properties.Get", []any{sessionIfc, uint32(0)}},
		{"org.freedesktop.DBus.Properties.Get", []any{byte(0), "State"}},
		{"org.freedesktop.DBus.Properties.Set", []any{sessionIfc, int32(0), dbus.MakeVariant("x")}},
		{sessionIfc + ".SetEnforcement", []any{byte(0)}},
		{sessionIfc + ".Allow", []any{uint32(0)}},
		{sessionIfc + ".Abandon", []any{int32(0)}},
	} {
		ctx, cancel := context.WithTimeout(context.Background(), 2*time.Second)
		err := c.obj.CallWithContext(ctx, k.member, 0, k.args...).Err
		cancel()
		if name := errName(err); !errorExpected(name) {
			t.Errorf("%s: got %v, want a named error reply", describe(k.member, k.args), err)
		}
	}
	if !d.Alive() {
		t.Fatalf("the daemon died\n%s", d.Output())
	}
}

// ── The permission table, cell by cell over the bus ────────────────────

type cell struct {
	name    string
	state   string
	level   string
	outcome string
	broken  bool // active at locked with an elapsed break-glass hold
}

// busCalls are the methods with valid arguments, as in service's table
// test.
var busCalls = []struct {
	method string
	args   []any
}{
	{"Plan", nil}, {"CancelPlan", nil}, {"Start", []any{"next", "done", uint64(60), "", []string{}}},
	{"Complete", nil}, {"Abandon", []any{""}}, {"Extend", []any{uint64(60)}}, {"End", nil},
	{"Refocus", nil}, {"Allow", []any{"Terminal"}}, {"SetEnforcement", []any{"warn"}},
	{"SetQuiet", []any{false}}, {"BreakGlass", []any{"why"}},
	{"ReviewProposals", nil}, {"ApplyProposal", []any{uint32(1)}}, // a session with no evidence proposes nothing: InvalidArgument
	{"VerifyAudit", nil}, {"History", []any{uint32(0)}},
	{"Report", []any{int64(0), int64(3600)}}, {"ReportDevice", []any{int64(0), int64(3600), ""}},
}

// permitted is the permission table of docs/dbus-api.md, written out again.
func permitted(method string, s cell) bool {
	st, lv := s.state, s.level
	switch method {
	case "Plan":
		return st == "locked"
	case "CancelPlan":
		return st == "planning"
	case "Start":
		return st == "locked" || st == "planning"
	case "Complete", "Refocus":
		return st == "active"
	case "Abandon":
		return st == "active" && (lv != "locked" || s.broken)
	case "Extend":
		return st == "active" || (st == "review" && s.outcome == "expired")
	case "End", "ReviewProposals", "ApplyProposal":
		return st == "review"
	case "Allow":
		return st == "active" && lv != "locked"
	case "SetEnforcement": // lowers to warn
		return st == "planning" || (st == "active" && lv != "locked")
	case "BreakGlass":
		return st == "active" && lv == "locked"
	case "SetQuiet":
		return st != "review"
	case "VerifyAudit", "History", "Report", "ReportDevice":
		return true
	}
	return false
}

// leaves says whether a permitted call takes the daemon out of the cell
// (so the next permitted call needs the cell entered afresh).
func leaves(method string, s cell) bool {
	switch method {
	case "Plan", "CancelPlan", "Start", "Complete", "Abandon", "End":
		return true
	case "Extend":
		return s.state == "review"
	case "BreakGlass": // the hold starts: Abandon's answer will change
		return true
	}
	return false
}

const holdConfig = "break_glass_hold = \"50ms\"\n"
const hold = 50 * time.Millisecond

// toLocked brings the daemon back to locked from wherever it is.
func toLocked(t *testing.T, c *client) {
	t.Helper()
	for range 4 {
		switch c.view(t).State {
		case "locked":
			return
		case "planning":
			c.must(t, "CancelPlan", nil)
		case "active":
			c.must(t, "Complete", nil)
		case "review":
			c.end(t)
		}
	}
	t.Fatalf("getting back to locked: got %+v, want State locked", c.view(t))
}

// enterCell puts the daemon into s.
func enterCell(t *testing.T, c *client, s cell) {
	t.Helper()
	toLocked(t, c)
	switch s.state {
	case "locked":
		return
	case "planning":
		c.must(t, "Plan", nil)
		c.must(t, "SetEnforcement", []any{s.level})
		return
	}
	timebox := uint64(3600)
	if s.outcome == "expired" {
		timebox = 1
	}
	c.start(t, timebox, s.level, "Editor")
	if s.broken || (s.outcome == "abandoned" && s.level == "locked") {
		c.must(t, "BreakGlass", []any{"a test"})
		// The hold began before the reply came back: counted from the
		// reply, it has surely elapsed on the daemon's clock too, however
		// slowly the call went (the hold is the input here).
		time.Sleep(hold + 10*time.Millisecond)
	}
	switch s.outcome {
	case "expired":
		waitFor(t, wait, "the 1 s timebox to expire", func() (bool, string) {
			v := c.view(t)
			return v.State == "review", v.State
		})
	case "completed":
		c.must(t, "Complete", nil)
	case "abandoned":
		c.must(t, "Abandon", []any{"a test"})
	}
}

func TestPermissionTableOverTheBus(t *testing.T) {
	levels := []string{"observe", "warn", "block", "locked"}
	for _, level := range levels {
		t.Run(level, func(t *testing.T) {
			t.Parallel() // each level has its own bus and daemon; the expiries overlap
			_, c := fastDaemon(t, holdConfig)
			cells := []cell{
				{name: "planning", state: "planning", level: level},
				{name: "active", state: "active", level: level},
				{name: "review-expired", state: "review", level: level, outcome: "expired"},
				{name: "review-completed", state: "review", level: level, outcome: "completed"},
				{name: "review-abandoned", state: "review", level: level, outcome: "abandoned"},
			}
			if level == "locked" {
				cells = append(cells, cell{name: "locked", state: "locked"},
					cell{name: "active-break-glass-elapsed", state: "active", level: level, broken: true})
			}
			for _, s := range cells {
				sweepCell(t, c, s)
			}
		})
	}
}

// sweepCell calls every method in cell s: the refused ones (which must
// change nothing) and the harmless permitted ones on one entry, then each
// permitted call that leaves the cell on an entry of its own.
func sweepCell(t *testing.T, c *client, s cell) {
	t.Helper()
	enterCell(t, c, s)
	var leaving []int
	for i, bc := range busCalls {
		if permitted(bc.method, s) && leaves(bc.method, s) {
			leaving = append(leaving, i)
			continue
		}
		before := c.view(t)
		err := c.call(bc.method, bc.args...).Err
		switch {
		case permitted(bc.method, s) && bc.method == "ApplyProposal" && errName(err) == "org.antidrift.Error.InvalidArgument":
			// permitted: the session proposes nothing, so number 1 is refused as an argument
		case permitted(bc.method, s) && err != nil:
			t.Errorf("%s: %s refused, the table permits it: %v", s.name, bc.method, err)
		case !permitted(bc.method, s) && errName(err) != "org.antidrift.Error.NotPermitted":
			t.Errorf("%s: %s got %v, want org.antidrift.Error.NotPermitted", s.name, bc.method, err)
		case err != nil:
			msg := err.Error()
			for _, part := range []string{bc.method + " is not permitted", "retrying will not help", "What works now: "} {
				if !strings.Contains(msg, part) {
					t.Errorf("%s: refusal of %s: got %q, want it to hold %q", s.name, bc.method, msg, part)
				}
			}
			after := c.view(t)
			if after.State != before.State || after.SessionID != before.SessionID || after.Enforcement != before.Enforcement ||
				after.Deadline != before.Deadline || !slices.Equal(after.AllowedClasses, before.AllowedClasses) || after.Outcome != before.Outcome {
				t.Errorf("%s: the session after the refused %s: got\n%+v\nwant it unchanged:\n%+v", s.name, bc.method, after, before)
			}
		}
	}
	for n, i := range leaving {
		if n > 0 {
			enterCell(t, c, s)
		}
		bc := busCalls[i]
		if err := c.call(bc.method, bc.args...).Err; err != nil {
			t.Errorf("%s: %s refused, the table permits it: %v", s.name, bc.method, err)
		}
	}
}

// ── No way out of locked ───────────────────────────────────────────────

// A random search for a sequence of calls that leaves a locked session
// before its deadline other than by Complete or an elapsed break-glass
// hold: from an active locked session, up to 8 random calls (with random,
// partly invalid arguments), an occasional wait for the hold and an
// occasional restart, clean or by SIGKILL. Every state the daemon
// publishes is checked: the session keeps its level and allowlist, and is
// never abandoned without an elapsed hold. A sequence that left the
// session untouched hands it on to the next (a longer walk is a walk too);
// any other starts from a fresh session.
func TestLockedHasNoWayOut(t *testing.T) {
	const hold = 20 * time.Millisecond
	seed := testenv.Seed(t)
	rng := rand.New(rand.NewPCG(seed, 31))
	g := gen{rng}
	d, c := fastDaemon(t, "break_glass_hold = \"20ms\"\n")
	m := watch(t, c)
	allowed := []string{"Editor"}
	sequences := testenv.Scale(2000)
	var restarts, abandoned, completed, waits, fresh int
	began := time.Now()
	for seq := range sequences {
		m.drain(t, nil)
		if v := m.view(t); v.State != "active" || v.BreakGlassAt != 0 || v.Enforcement != "locked" || !slices.Equal(v.AllowedClasses, allowed) {
			switch v.State {
			case "active":
				c.must(t, "Complete", nil)
				c.end(t)
			case "review":
				c.end(t)
			case "planning":
				c.must(t, "CancelPlan", nil)
			}
			c.start(t, 3600, "locked", allowed...)
			m.drain(t, nil)
			fresh++
		}
		id := m.view(t).SessionID
		var brokeAt time.Time // when the BreakGlass that started the hold was sent
		var log []string
		left := false
		check := func(v view) {
			if broken := invariantBroken(v); broken != "" {
				t.Fatalf("sequence %d: got %+v, want the invariant kept: %q broken\nsteps:\n%s", seq, v, broken, strings.Join(log, "\n"))
			}
			if left {
				return // the session reached review; what follows is another story
			}
			var why string
			switch {
			case v.SessionID != id:
				// The walk stops at review, so nothing ended the session: it vanished.
				why = "the session vanished"
			case v.Enforcement != "locked":
				why = "the level dropped to " + v.Enforcement
			case !slices.Equal(v.AllowedClasses, allowed):
				why = fmt.Sprintf("the allowlist became %q", v.AllowedClasses)
			case v.State == "review" && v.Outcome == "abandoned" && (brokeAt.IsZero() || time.Now().Before(brokeAt.Add(hold))):
				why = "abandoned without an elapsed break-glass hold"
			case v.State == "review" && v.Outcome != "abandoned" && v.Outcome != "completed":
				why = "left active with outcome " + v.Outcome + " before the deadline"
			}
			if why != "" {
				t.Fatalf("sequence %d (session %s): got %s (now %+v), want a locked session held to its terms\nsteps:\n%s", seq, id, why, v, strings.Join(log, "\n"))
			}
			if v.State == "review" {
				left = true
				if v.Outcome == "abandoned" {
					abandoned++
				} else {
					completed++
				}
			}
		}
		for step := 1 + rng.IntN(8); step > 0 && !left; step-- {
			var what string
			var err error
			sent := time.Now()
			switch k := rng.IntN(2000); {
			case k == 0:
				what = "restart (SIGKILL)"
				d.Kill9(t)
				d.Start(t)
				restarts++
			case k == 1:
				what = "restart (SIGTERM)"
				d.Stop(t)
				d.Start(t)
				restarts++
			case k < 200 && !brokeAt.IsZero():
				what = "wait for the hold"
				time.Sleep(time.Until(brokeAt.Add(hold + time.Millisecond)))
				waits++
			default:
				// The reads (VerifyAudit, History, Report, ReportDevice) change nothing,
				// and the sweep and the fuzzer call them; here they would
				// only cost time (they re-read the whole chain).
				m := busCalls[rng.IntN(len(busCalls)-3)].method
				if m == "Complete" && rng.IntN(3) != 0 {
					m = "Abandon" // Complete ends the walk; let walks go deeper
				}
				var args []any
				for _, a := range signatures[m] {
					args = append(args, a(g))
				}
				if (m == "BreakGlass" || m == "Abandon") && rng.IntN(2) == 0 {
					args = []any{"a real reason"}
				}
				what = describe(m, args)
				err = c.call(m, args...).Err
				if err == nil && m == "BreakGlass" && brokeAt.IsZero() {
					brokeAt = sent
				}
				if name := errName(err); err != nil && !errorExpected(name) {
					t.Fatalf("sequence %d: %s: %v", seq, what, err)
				}
			}
			log = append(log, fmt.Sprintf("%s → %v", what, err))
			if strings.HasPrefix(what, "restart") {
				m.resync(t)
				check(m.view(t))
			}
			m.drain(t, check)
		}
		if seq%64 == 63 {
			m.agrees(t, check)
		}
	}
	// The sealed record agrees: no locked session abandoned without break-glass.
	toLocked(t, c)
	checkChain(t, c, d.StateDir)
	data, _ := os.ReadFile(filepath.Join(d.StateDir, "audit.jsonl"))
	for _, line := range strings.Split(strings.TrimSpace(string(data)), "\n") {
		if strings.Contains(line, `"enforcement":"locked"`) && strings.Contains(line, `"outcome":"abandoned"`) && !strings.Contains(line, `"break_glass":true`) {
			t.Errorf("the sealed record: got %s, want no locked session abandoned without break-glass", line)
		}
	}
	t.Logf("%d sequences (%d from a fresh session) in %v: %d completed, %d abandoned after the hold, %d waits, %d restarts",
		sequences, fresh, time.Since(began).Round(time.Millisecond), completed, abandoned, waits, restarts)
}
