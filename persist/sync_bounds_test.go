package persist

import (
	"bytes"
	"encoding/json"
	"fmt"
	"math"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/antidrift/antidrift/service"
)

// goodSession is a session of ten minutes, eight of them in one window.
func goodSession(i int) service.Summary {
	from := time.Unix(1_800_000_000, 0).Add(time.Duration(i) * time.Hour)
	return service.Summary{
		SessionID: fmt.Sprintf("s-%d", i), NextAction: "write", Outcome: service.OutcomeCompleted,
		Enforcement: service.LevelWarn, StartedUnix: from.Unix(), EndedUnix: from.Add(10 * time.Minute).Unix(), TimeboxSecs: 600,
		DriftSeconds: 60, AwaySeconds: 60,
		Buckets: []service.Bucket{{Class: "Emacs", Title: "notes.org", Seconds: 480}, {Title: service.AwayTitle, Seconds: 60}},
	}
}

// machineWith is another machine that sealed sums and published them
// into a fresh sync_dir (p.syncDir).
func machineWith(t *testing.T, titles bool, sums ...service.Summary) (*Store, *Publisher) {
	t.Helper()
	st := openStore(t, newStateDir(t))
	for _, s := range sums {
		if _, err := st.AppendAudit(s); err != nil {
			t.Fatal(err)
		}
	}
	p := publisherFor(t, st, t.TempDir(), titles)
	if problem := p.PublishNow(); problem != "" {
		t.Fatalf("PublishNow: got problem %q, want none", problem)
	}
	return st, p
}

// Every number another machine's line carries is checked: a line whose
// figures cannot be — signed by the machine itself, so no forgery — is
// named (device, line, seq, the number) and left out, and the lines on
// both sides of it still count. (The two seen in the wild: drift_seconds
// 2^64−31, which wrapped a week to "drift 0s", and ended_unix 2^63−1,
// which escaped the clock-far-off warning.)
func TestEveryNumberFromAnotherMachineIsChecked(t *testing.T) {
	for _, c := range []struct {
		name   string
		break_ func(*service.Summary)
		want   string
	}{
		{"drift wraps the week", func(s *service.Summary) { s.DriftSeconds = math.MaxUint64 - 30 }, "drift_seconds 18446744073709551585"},
		{"ends at the end of time", func(s *service.Summary) { s.EndedUnix = math.MaxInt64 }, "ended_unix 9223372036854775807"},
		{"starts before 1970", func(s *service.Summary) { s.StartedUnix = -5 }, "started_unix -5"},
		{"ends before it starts", func(s *service.Summary) { s.EndedUnix = s.StartedUnix - 1 }, "before it starts"},
		{"away longer than the session", func(s *service.Summary) { s.AwaySeconds = 1 << 40 }, "away_seconds"},
		{"a bucket longer than the session", func(s *service.Summary) { s.Buckets[0].Seconds = math.MaxUint64 }, "bucket 1"},
		{"buckets that overflow their sum", func(s *service.Summary) {
			s.Buckets = []service.Bucket{{Class: "a", Seconds: 500}, {Class: "b", Seconds: 500}}
		}, "add up to more"},
		{"a timebox no core allows", func(s *service.Summary) { s.TimeboxSecs = math.MaxUint64 }, "timebox_secs"},
		{"a site longer than the session", func(s *service.Summary) {
			s.Sites = []service.SiteTime{{Host: "example.org", Seconds: math.MaxUint64}}
		}, "site 1"},
	} {
		t.Run(c.name, func(t *testing.T) {
			bad := goodSession(2)
			c.break_(&bad)
			_, p := machineWith(t, true, goodSession(1), bad, goodSession(3))
			devs, _, err := ReadShared(p.syncDir, LoadTrust(t.TempDir()))
			if err != nil || len(devs) != 1 {
				t.Fatalf("ReadShared: got %d devices, %v; want 1", len(devs), err)
			}
			d := devs[0]
			if d.OK || len(d.Summaries) != 2 || d.Summaries[0].Seq != 1 || d.Summaries[1].Seq != 3 {
				t.Fatalf("got OK %v, %d sessions counted, problem %q; want seq 1 and 3 counted, seq 2 left out", d.OK, len(d.Summaries), d.Problem)
			}
			if !containsAll(d.Problem, `"laptop"`, "line 2 (seq 2)", c.want, "left out of every figure") {
				t.Fatalf("got problem %q, want it to name device \"laptop\", line 2 (seq 2) and %q", d.Problem, c.want)
			}
		})
	}
}

// A real session is never refused by the number checks: a minute of
// rounding, and a session whose wall clock was set holding its timebox.
func TestNumbersOfARealSessionPass(t *testing.T) {
	s := goodSession(1)
	s.Buckets[0].Seconds += 59
	if p := NumbersProblem(s); p != "" {
		t.Fatalf("a minute of rounding: got %q, want none", p)
	}
	s = goodSession(1)
	s.ClockJumps, s.EndedUnix = 1, s.StartedUnix+10
	if p := NumbersProblem(s); p != "" {
		t.Fatalf("a clock set back mid-session: got %q, want none", p)
	}
}

// addFolders puts n copies of p's device folder into its sync_dir under
// new device ids (each its own device, pinned on first sight).
func addDevices(t *testing.T, n int) (syncDir string, ids []string) {
	t.Helper()
	syncDir = t.TempDir()
	for i := 0; i < n; i++ {
		st := openStore(t, newStateDir(t))
		if _, err := st.AppendAudit(goodSession(i)); err != nil {
			t.Fatal(err)
		}
		p := publisherFor(t, st, syncDir, false)
		if problem := p.PublishNow(); problem != "" {
			t.Fatal(problem)
		}
		ids = append(ids, p.id)
	}
	return syncDir, ids
}

// Too many device folders: a reading opens at most Devices of them, the
// ones this machine already knows first, and names the rest.
func TestTooManyDevicesAreNamedNotRead(t *testing.T) {
	syncDir, ids := addDevices(t, 5)
	reader := t.TempDir()
	// The machine this one knows sorts last: it is read all the same.
	last := ids[0]
	for _, id := range ids {
		last = max(last, id)
	}
	var pinned SharedDevice
	full, _, _ := ReadShared(syncDir, LoadTrust(""))
	for _, d := range full {
		if d.ID == last {
			pinned = d
		}
	}
	if err := appendPinLine(reader, pinLine{Version: pinsVersion, Event: "pin", DeviceID: last, PublicKey: keyOf(t, syncDir, pinned), AtUnix: 1}); err != nil {
		t.Fatal(err)
	}
	devs, problems, err := ReadSharedWith(syncDir, LoadTrust(reader), ReadOptions{Bounds: bounds(func(b *ReadBounds) { b.Devices = 3 })})
	if err != nil {
		t.Fatal(err)
	}
	if len(devs) != 3 || devs[0].ID != last {
		t.Fatalf("got %d devices, the first %q; want 3, the known one (%s) first", len(devs), devs[0].ID, last)
	}
	if len(problems) != 1 || !containsAll(problems[0], "more device folders than the 3", "not read", "known here are read first") {
		t.Fatalf("got problems %q, want the 2 folders left out named", problems)
	}
}

func keyOf(t *testing.T, syncDir string, d SharedDevice) string {
	t.Helper()
	data := readFile(t, filepath.Join(syncDir, LayoutFolder, d.Folder, PublishedDevice))
	var m struct {
		PublicKey string `json:"public_key"`
	}
	if err := json.Unmarshal(data, &m); err != nil {
		t.Fatal(err)
	}
	return m.PublicKey
}

func bounds(f func(*ReadBounds)) ReadBounds {
	b := DefaultReadBounds
	f(&b)
	return b
}

// An oversize folder: a device's chain file is read to its share of bytes
// and of signature checks, and of the whole read's; the sessions before
// the bound count, and what is past it is named, never loaded.
func TestAnOversizeFolderIsReadToItsBound(t *testing.T) {
	var sums []service.Summary
	for i := 1; i <= 6; i++ {
		sums = append(sums, goodSession(i))
	}
	_, p := machineWith(t, true, sums...)
	size := int64(len(readFile(t, filepath.Join(p.Folder(), PublishedChain))))
	line := size / 6
	for _, c := range []struct {
		name  string
		b     func(*ReadBounds)
		count int
		want  string
	}{
		{"bytes a device", func(b *ReadBounds) { b.DeviceBytes = line*2 + line/2 }, 2, "past the bound on bytes read"},
		{"bytes in all", func(b *ReadBounds) { b.TotalBytes = line*3 + 1 }, 3, "past the bound on bytes read"},
		{"checks a device", func(b *ReadBounds) { b.DeviceChecks = 4 }, 4, "signature checks ran out"},
		{"checks in all", func(b *ReadBounds) { b.TotalChecks = 1 }, 1, "signature checks ran out"},
	} {
		t.Run(c.name, func(t *testing.T) {
			devs, _, _ := ReadSharedWith(p.syncDir, LoadTrust(t.TempDir()), ReadOptions{Bounds: bounds(c.b)})
			d := devs[0]
			if d.OK || len(d.Summaries) != c.count || !containsAll(d.Problem, `"laptop"`, c.want, "left out") || strings.Contains(d.Problem, "not signed") {
				t.Fatalf("got OK %v, %d sessions, problem %q; want the first %d counted and %q named", d.OK, len(d.Summaries), d.Problem, c.count, c.want)
			}
		})
	}
}

// Lines up to the head this machine remembers for a device are checked by
// their hash chain alone (no signature check is spent on them); a line
// put among them sends the reading back to checking every signature, so
// a forgery there is still left out.
func TestTheRememberedHeadSavesTheSignatures(t *testing.T) {
	var sums []service.Summary
	for i := 1; i <= 5; i++ {
		sums = append(sums, goodSession(i))
	}
	st, p := machineWith(t, false, sums...)
	reader := openStore(t, newStateDir(t))
	devs, _, _ := ReadShared(p.syncDir, LoadTrust(reader.dir))
	if err := reader.RememberDevices(devs, nil); err != nil {
		t.Fatal(err)
	}
	noChecks := ReadOptions{Bounds: bounds(func(b *ReadBounds) { b.TotalChecks = 0 })}
	devs, _, _ = ReadSharedWith(p.syncDir, LoadTrust(reader.dir), noChecks)
	if d := devs[0]; !d.OK || len(d.Summaries) != 5 {
		t.Fatalf("with no signature check to spend: got OK %v, %d sessions, problem %q; want the 5 remembered ones counted by hash", d.OK, len(d.Summaries), d.Problem)
	}
	// One more real session: only it costs a check.
	if _, err := st.AppendAudit(goodSession(6)); err != nil {
		t.Fatal(err)
	}
	p.PublishNow()
	devs, _, _ = ReadSharedWith(p.syncDir, LoadTrust(reader.dir), ReadOptions{Bounds: bounds(func(b *ReadBounds) { b.TotalChecks = 1 })})
	if d := devs[0]; !d.OK || len(d.Summaries) != 6 {
		t.Fatalf("one new line, one check: got OK %v, %d sessions, problem %q; want all 6", d.OK, len(d.Summaries), d.Problem)
	}
	// A forged line among the remembered ones: every signature is checked.
	path := filepath.Join(p.Folder(), PublishedTotals)
	lines := bytes.SplitAfter(readFile(t, path), []byte("\n"))
	forged := forgedLine(t, bytes.Join(lines[:2], nil), otherKey(t), p.id, formTotals)
	writeFile(t, path, bytes.Join(append([][]byte{lines[0], lines[1], forged}, lines[2:]...), nil))
	devs, _, _ = ReadShared(p.syncDir, LoadTrust(reader.dir))
	if d := devs[0]; d.OK || len(d.Summaries) != 6 || !containsAll(d.Problem, "line 3 (seq 3)", "not signed") {
		t.Fatalf("a forged line before the head: got OK %v, %d sessions, problem %q; want it named, the 6 real ones counted", d.OK, len(d.Summaries), d.Problem)
	}
	for _, s := range devs[0].Summaries {
		if s.SessionID == "forged" {
			t.Fatal("the forged session: got it counted, want it left out")
		}
	}
}

// A folder whose files are as the last reading stamped them is not read
// again (the publisher's pass after a seal), and one that changed is.
func TestAnUnchangedFolderIsNotReadAgain(t *testing.T) {
	_, p := machineWith(t, false, goodSession(1))
	devs, _, _ := ReadShared(p.syncDir, LoadTrust(t.TempDir()))
	stamps := map[string]Stamp{devs[0].Folder: devs[0].Stamp}
	again, _, _ := ReadSharedWith(p.syncDir, LoadTrust(t.TempDir()), ReadOptions{Unchanged: stamps})
	if !again[0].Unchanged || again[0].Summaries != nil {
		t.Fatalf("unchanged: got %+v, want it not read", again[0])
	}
	path := filepath.Join(p.Folder(), PublishedTotals)
	appendToFile(t, path, []byte("{}\n"))
	again, _, _ = ReadSharedWith(p.syncDir, LoadTrust(t.TempDir()), ReadOptions{Unchanged: stamps})
	if again[0].Unchanged || len(again[0].Summaries) != 1 {
		t.Fatalf("changed: got %+v, want it read", again[0])
	}
}

// devices-seen.json keeps only devices whose folder is still in sync_dir
// or whose key is pinned here, and at most maxSeenHeads of them; the
// publisher's pass prunes it.
func TestDevicesSeenKeepsOnlyDevicesThatExist(t *testing.T) {
	syncDir, ids := addDevices(t, 3)
	st := openStore(t, newStateDir(t))
	id, _, _ := st.DeviceID()
	p := NewPublisher(st, syncDir, id, "this", false, func(string) {})
	p.PublishNow()
	heads := NewReader(st.dir).SeenHeads()
	if len(heads) != 3 {
		t.Fatalf("got %d heads remembered, want the 3 others' (%v)", len(heads), heads)
	}
	if err := os.RemoveAll(filepath.Join(syncDir, LayoutFolder, ids[1])); err != nil {
		t.Fatal(err)
	}
	p.PublishNow()
	heads = NewReader(st.dir).SeenHeads()
	if _, ok := heads[SeenKey(ids[1], formTotals)]; !ok || len(heads) != 3 {
		t.Fatalf("after %s's folder was deleted, its key pinned: got %v, want its head kept (a copy put back later must not be behind unnoticed)", ids[1], heads)
	}
	if _, err := ForgetKey(st.dir, ids[1]); err != nil {
		t.Fatal(err)
	}
	p.PublishNow()
	heads = NewReader(st.dir).SeenHeads()
	if _, ok := heads[SeenKey(ids[1], formTotals)]; ok || len(heads) != 2 {
		t.Fatalf("after %s's folder was deleted and its key forgotten: got %v, want its head let go and the 2 others kept", ids[1], heads)
	}

	var many []SharedDevice
	for i := 0; i < maxSeenHeads+10; i++ {
		many = append(many, SharedDevice{ID: fmt.Sprintf("0197a3c4-0000-7000-8000-%012d", i), Form: formTotals, Head: service.AuditHead{Seq: 1, Hash: "h"}, OK: true})
	}
	if err := st.RememberDevices(many, nil); err != nil {
		t.Fatal(err)
	}
	if n := len(NewReader(st.dir).SeenHeads()); n != maxSeenHeads {
		t.Fatalf("after %d devices: got %d heads, want at most %d", len(many), n, maxSeenHeads)
	}
}

// A line longer than any machine writes stops the reading there: it is
// never gathered into memory whole, and what it cost is said; the lines
// before it count.
func TestALineLongerThanAnyMachineWritesStopsTheReading(t *testing.T) {
	_, p := machineWith(t, true, goodSession(1), goodSession(2))
	path := filepath.Join(p.Folder(), PublishedChain)
	appendToFile(t, path, append(bytes.Repeat([]byte("x"), 3*maxLineBytes), '\n'))
	devs, _, _ := ReadShared(p.syncDir, LoadTrust(t.TempDir()))
	d := devs[0]
	if d.OK || len(d.Summaries) != 2 || !containsAll(d.Problem, `"laptop"`, "a line longer than 1.0 MiB", "left out") || strings.Contains(d.Problem, "not signed") {
		t.Fatalf("got OK %v, %d sessions, problem %q; want the 2 real ones counted and the long line said", d.OK, len(d.Summaries), d.Problem)
	}
}

// The publisher's pass after a seal reads another device's folder only
// when its files changed since the last pass: it keeps their stamps, and
// with them every unchanged folder comes back unread.
func TestTheSealsPassReadsOnlyWhatChanged(t *testing.T) {
	syncDir, ids := addDevices(t, 2)
	st := openStore(t, newStateDir(t))
	id, _, _ := st.DeviceID()
	p := NewPublisher(st, syncDir, id, "this", false, func(string) {})
	p.PublishNow()
	for _, other := range ids {
		if _, ok := p.stamps[other]; !ok {
			t.Fatalf("after a pass: got stamps for %v, want one for %s", p.stamps, other)
		}
	}
	devs, _, _ := ReadSharedWith(syncDir, LoadTrust(st.dir), ReadOptions{Unchanged: p.stamps})
	for _, d := range devs {
		if d.ID != id && d.Folder != id && !d.Unchanged {
			t.Fatalf("the next pass, nothing changed: got %s read again, want it skipped", d.Folder)
		}
	}
	// Once its folder is deleted, its stamp goes too.
	os.RemoveAll(filepath.Join(syncDir, LayoutFolder, ids[0]))
	p.PublishNow()
	if _, ok := p.stamps[ids[0]]; ok {
		t.Fatalf("after %s's folder was deleted: got its stamp kept, want it let go", ids[0])
	}
}
