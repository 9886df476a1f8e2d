package report

import (
	"crypto/sha256"
	"encoding/hex"
	"encoding/json"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/antidrift/antidrift/persist"
	"github.com/antidrift/antidrift/service"
)

// machine is a state directory with sealed sessions that publishes into
// sync (a test stands in for the daemon).
func machine(t *testing.T, sync, name string, titles bool, sessions ...[2]time.Time) (*persist.Store, *persist.Publisher) {
	t.Helper()
	st, _, err := persist.Open(filepath.Join(t.TempDir(), "state"))
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { st.Close() })
	for i, s := range sessions {
		secs := uint64(s[1].Sub(s[0]) / time.Second)
		if _, err := st.AppendAudit(service.Summary{
			SessionID: name + "-" + string(rune('a'+i)), NextAction: "work on " + name, Outcome: service.OutcomeCompleted, Enforcement: service.LevelWarn,
			StartedUnix: s[0].Unix(), EndedUnix: s[1].Unix(), TimeboxSecs: secs, DriftSeconds: 60,
			Buckets: []service.Bucket{{Class: "Emacs", Title: "plan.org", Seconds: secs}},
		}); err != nil {
			t.Fatal(err)
		}
	}
	id, _, err := st.DeviceID()
	if err != nil {
		t.Fatal(err)
	}
	p := persist.NewPublisher(st, sync, id, name, titles, func(string) {})
	if problem := p.PublishNow(); problem != "" {
		t.Fatalf("publishing %s: got problem %q, want none", name, problem)
	}
	return st, p
}

// A laptop session while the desktop's runs: both are shown, each named
// with its machine, once; each machine's figures are its own; time active
// overall counts the overlap once.
func TestMergeOverlappingSessions(t *testing.T) {
	sync := t.TempDir()
	at := func(h, m int) time.Time { return time.Date(2026, 11, 30, h, m, 0, 0, time.Local) }
	desk, _ := machine(t, sync, "desk", true, [2]time.Time{at(10, 0), at(11, 0)}, [2]time.Time{at(14, 0), at(14, 30)})
	machine(t, sync, "laptop", false, [2]time.Time{at(10, 30), at(11, 30)})
	span := LastDays(at(23, 0), 1, 0)
	r, err := BuildAll(persist.NewReader(desk.Dir()), span, Options{}, Devices{SyncDir: sync, ThisName: "desk", Now: at(23, 0)})
	if err != nil {
		t.Fatal(err)
	}
	var got []string
	for _, s := range r.Sessions {
		got = append(got, s.Device+" "+time.Unix(s.StartedUnix, 0).Format("15:04"))
	}
	if strings.Join(got, ", ") != "desk 10:00, laptop 10:30, desk 14:00" {
		t.Fatalf("sessions: got %v, want [desk 10:00 laptop 10:30 desk 14:00]", got)
	}
	tot := r.Totals
	if tot.Sessions != 3 || tot.ActiveSeconds != 2*3600 || tot.OverlapSeconds != 1800 || tot.OnTaskSeconds != 2.5*3600-180 {
		t.Fatalf("totals: got sessions %d, active %d, overlap %d, on task %d; want 3, 7200 (10:00–11:30 and 14:00–14:30), 1800, 8820",
			tot.Sessions, tot.ActiveSeconds, tot.OverlapSeconds, tot.OnTaskSeconds)
	}
	if len(r.Devices) != 2 || !r.Devices[0].ThisDevice || r.Devices[0].Totals.ActiveSeconds != 5400 || r.Devices[1].Name != "laptop" || r.Devices[1].Totals.ActiveSeconds != 3600 {
		t.Fatalf("devices: got %+v, want desk (this machine, 5400 s active), then laptop (3600 s)", r.Devices)
	}
	if r.Days[0].Sessions != 3 {
		t.Fatalf("days: got %+v, want 3 sessions on the first", r.Days)
	}
	if len(r.Problems) != 0 {
		t.Fatalf("problems: got %v, want none", r.Problems)
	}
	// --device laptop: the laptop alone.
	only, err := BuildAll(persist.NewReader(desk.Dir()), span, Options{}, Devices{SyncDir: sync, ThisName: "desk", Only: "laptop"})
	if err != nil || len(only.Sessions) != 1 || only.Sessions[0].Device != "laptop" || only.Totals.ActiveSeconds != 3600 {
		t.Fatalf("--device laptop: got %v %+v, want the laptop's one session, 3600 s active", err, only)
	}
	var none *service.NoSuchDevice
	if _, err := BuildAll(persist.NewReader(desk.Dir()), span, Options{}, Devices{SyncDir: sync, ThisName: "desk", Only: "tablet"}); !errors.As(err, &none) ||
		!strings.Contains(err.Error(), `the machines are "desk", "laptop"`) || none.Device != "tablet" {
		t.Fatalf("--device tablet: got %v, want a NoSuchDevice for tablet saying the machines are \"desk\", \"laptop\"", err)
	}
	// Without sync_dir (the daemon's ReportDevice) this machine is the
	// only one there is: named, it is the report; any other name is not.
	if alone, err := BuildAll(persist.NewReader(desk.Dir()), span, Options{}, Devices{ThisName: "desk", Only: "desk"}); err != nil || len(alone.Sessions) != 2 {
		t.Fatalf("no sync_dir, device desk: got %v %+v, want desk's 2 sessions", err, alone)
	}
	if _, err := BuildAll(persist.NewReader(desk.Dir()), span, Options{}, Devices{ThisName: "desk", Only: "laptop"}); !errors.As(err, &none) || strings.Join(none.Devices, ",") != "desk" {
		t.Fatalf("no sync_dir, device laptop: got %v, want no such machine, the machines being desk", err)
	}
}

// A copy that does not verify is named and counts in no figure; a clock
// far ahead is said.
func TestAnUnverifiedDeviceIsLeftOutLoudly(t *testing.T) {
	sync := t.TempDir()
	at := func(h int) time.Time { return time.Date(2026, 11, 30, h, 0, 0, 0, time.Local) }
	desk, _ := machine(t, sync, "desk", true, [2]time.Time{at(9), at(10)})
	_, laptop := machine(t, sync, "laptop", true, [2]time.Time{at(11), at(12)})
	machine(t, sync, "tablet", true, [2]time.Time{at(22), at(23)})
	chain := filepath.Join(laptop.Folder(), persist.PublishedChain)
	data, _ := os.ReadFile(chain)
	os.WriteFile(chain, []byte(strings.Replace(string(data), "work on laptop", "work on nothing", 1)), 0o600)
	r, err := BuildAll(persist.NewReader(desk.Dir()), LastDays(at(20), 1, 0), Options{}, Devices{SyncDir: sync, ThisName: "desk", Now: at(20)})
	if err != nil {
		t.Fatal(err)
	}
	all := strings.Join(r.Problems, "\n")
	if !strings.Contains(all, `device "laptop"`) || !strings.Contains(all, "line 1 (seq 1)") || !strings.Contains(all, "left out of every figure") {
		t.Fatalf("problems: got\n%s\nwant device \"laptop\" named at line 1 (seq 1), left out of every figure", all)
	}
	if !strings.Contains(all, `device "tablet": its record reaches 3h0m0s past this machine's clock`) {
		t.Fatalf("problems: got\n%s\nwant the tablet's clock 3h0m0s ahead said", all)
	}
	for _, s := range r.Sessions {
		if s.Device == "laptop" {
			t.Fatalf("sessions: got %s of the broken copy (laptop) merged, want none of it", s.SessionID)
		}
	}
	if r.Totals.Sessions != 2 {
		t.Fatalf("sessions: got %d, want 2, desk's and tablet's", r.Totals.Sessions)
	}
}

func TestActiveUnion(t *testing.T) {
	s := func(from, active int64) Session {
		return Session{StartedUnix: from, EndedUnix: from + active, ActiveSeconds: uint64(active)}
	}
	for _, c := range []struct {
		in   []Session
		want uint64
	}{
		{nil, 0},
		{[]Session{s(0, 100)}, 100},
		{[]Session{s(0, 100), s(50, 100)}, 150},
		{[]Session{s(0, 100), s(10, 20)}, 100},
		{[]Session{s(0, 100), s(100, 100)}, 200},
		{[]Session{s(200, 10), s(0, 100), s(50, 10)}, 110},
		// A session that was active for less than its span counts its
		// active time, from its start.
		{[]Session{{StartedUnix: 0, EndedUnix: 1000, ActiveSeconds: 100}, s(500, 100)}, 200},
	} {
		if got := activeUnion(c.in); got != c.want {
			t.Errorf("activeUnion(%v): got %d, want %d", c.in, got, c.want)
		}
	}
}

// A second machine with this machine's device id: its copy is not taken
// for this machine's, and the report says what to do.
func TestTheSameDeviceIDOnTwoMachines(t *testing.T) {
	sync := t.TempDir()
	at := func(h int) time.Time { return time.Date(2026, 11, 30, h, 0, 0, 0, time.Local) }
	desk, _ := machine(t, sync, "desk", true, [2]time.Time{at(9), at(10)})
	id := persist.NewReader(desk.Dir()).DeviceID()
	// The clone, with desk's device.json and key (a copied state
	// directory), publishes into desk's folder (its publisher would
	// refuse; a copy from before the clone would not).
	cloneDir, cloneSync := filepath.Join(t.TempDir(), "state"), t.TempDir()
	os.MkdirAll(cloneDir, 0o700)
	for _, f := range []string{"device.json", "device-key.json"} {
		data, _ := os.ReadFile(filepath.Join(desk.Dir(), f))
		os.WriteFile(filepath.Join(cloneDir, f), data, 0o600)
	}
	clone, _, err := persist.Open(cloneDir)
	if err != nil {
		t.Fatal(err)
	}
	defer clone.Close()
	clone.AppendAudit(service.Summary{SessionID: "clone-a", NextAction: "on the clone", StartedUnix: at(11).Unix(), EndedUnix: at(12).Unix()})
	persist.NewPublisher(clone, cloneSync, id, "clone", true, func(string) {}).PublishNow()
	data, _ := os.ReadFile(filepath.Join(cloneSync, persist.LayoutFolder, id, persist.PublishedChain))
	os.WriteFile(filepath.Join(sync, persist.LayoutFolder, id, persist.PublishedChain), data, 0o600)
	r, err := BuildAll(persist.NewReader(desk.Dir()), LastDays(at(20), 1, 0), Options{}, Devices{SyncDir: sync, ThisName: "desk"})
	if err != nil {
		t.Fatal(err)
	}
	if all := strings.Join(r.Problems, "\n"); !strings.Contains(all, "another machine uses the same device id") {
		t.Fatalf("problems: got\n%s\nwant \"another machine uses the same device id\"", all)
	}
	if r.Totals.Sessions != 1 {
		t.Fatalf("sessions: got %d, want 1, desk's own, once", r.Totals.Sessions)
	}
}

// The text and the HTML page name each session's machine and list the
// machines, with the overlap said; a report of one machine has neither.
func TestTextAndHTMLNameTheDevices(t *testing.T) {
	sync := t.TempDir()
	at := func(h, m int) time.Time { return time.Date(2026, 11, 30, h, m, 0, 0, time.Local) }
	desk, _ := machine(t, sync, "desk", true, [2]time.Time{at(10, 0), at(11, 0)})
	machine(t, sync, "laptop", false, [2]time.Time{at(10, 30), at(11, 30)})
	span := LastDays(at(23, 0), 1, 0)
	r, err := BuildAll(persist.NewReader(desk.Dir()), span, Options{}, Devices{SyncDir: sync, ThisName: "desk"})
	if err != nil {
		t.Fatal(err)
	}
	var text, page strings.Builder
	Text(&text, r, time.Local, false)
	HTML(&page, r, time.Local)
	for _, want := range []string{"Devices", "desk (this machine)", "laptop", "time active counts 30m once", "overlap counted once           30m", "completed  warn"} {
		if !strings.Contains(text.String(), want) {
			t.Errorf("the text: got\n%s\nwant %q", text.String(), want)
		}
	}
	for _, l := range strings.Split(text.String(), "\n") {
		if n := len([]rune(l)); n > textWidth {
			t.Errorf("a line's width: got %d columns, want at most %d: %q", n, textWidth, l)
		}
	}
	if !strings.Contains(text.String(), "drift 2%  laptop") {
		t.Errorf("the text: got\n%s\nwant the laptop's session line to name it (\"drift 2%%  laptop\")", text.String())
	}
	// Shares of active time are of each machine's time, so they never pass
	// 100% when time active counts an overlap once.
	for _, want := range []string{"<h2>Devices</h2>", "<th>device</th>", "<td>laptop</td>", "this machine", "98% of active time", "machines at once, counted once"} {
		if !strings.Contains(page.String(), want) {
			t.Errorf("the page: got no %q, want it", want)
		}
	}
	one, _ := BuildAll(persist.NewReader(desk.Dir()), span, Options{}, Devices{})
	var alone strings.Builder
	HTML(&alone, one, time.Local)
	if strings.Contains(alone.String(), "<th>device</th>") || one.Devices != nil {
		t.Errorf("a report of one machine: got devices %+v (or a device column), want none", one.Devices)
	}
}

// appendForgedLine appends to a published copy a line chained to its last
// one by the hash rule, with a signature by no key of that machine's: what
// a synced machine gone bad can write into another's folder.
func appendForgedLine(t *testing.T, path string, at time.Time) {
	t.Helper()
	data, err := os.ReadFile(path)
	if err != nil {
		t.Fatal(err)
	}
	lines := strings.Split(strings.TrimSuffix(string(data), "\n"), "\n")
	var last struct {
		Seq  uint64 `json:"seq"`
		Hash string `json:"hash"`
	}
	if err := json.Unmarshal([]byte(lines[len(lines)-1]), &last); err != nil {
		t.Fatal(err)
	}
	body := fmt.Sprintf(`{"seq":%d,"prev_hash":"%s","session_id":"forged","next_action":"deep work on the thesis","success_condition":"","outcome":"completed","enforcement":"warn","started_unix":%d,"ended_unix":%d,"timebox_secs":21600,"switch_count":0,"drift_seconds":0,"away_seconds":0,"minimize_count":0,"break_glass":false,"buckets":[],"hash":"`,
		last.Seq+1, last.Hash, at.Unix(), at.Add(6*time.Hour).Unix())
	sum := sha256.Sum256([]byte(last.Hash + body + `"}`))
	line := body + hex.EncodeToString(sum[:]) + `","sig":"` + strings.Repeat("A", 86) + `"}` + "\n"
	if err := os.WriteFile(path, append(data, line...), 0o600); err != nil {
		t.Fatal(err)
	}
}

// A forged line appended to another machine's copy is named and left out
// of every figure; that machine's real sessions still count; once it
// republishes, everything counts and nothing is said. The same for this
// machine's own folder.
func TestAForgedLineCostsTheRealRecordNothing(t *testing.T) {
	sync := t.TempDir()
	at := func(h int) time.Time { return time.Date(2026, 11, 30, h, 0, 0, 0, time.Local) }
	desk, deskPub := machine(t, sync, "desk", true, [2]time.Time{at(9), at(10)})
	laptop, laptopPub := machine(t, sync, "laptop", false, [2]time.Time{at(11), at(12)})
	build := func() *Report {
		t.Helper()
		r, err := BuildAll(persist.NewReader(desk.Dir()), LastDays(at(23), 1, 0), Options{}, Devices{SyncDir: sync, ThisName: "desk", Now: at(23)})
		if err != nil {
			t.Fatal(err)
		}
		return r
	}
	if r := build(); r.Totals.Sessions != 2 || len(r.Problems) != 0 || !strings.Contains(r.Devices[1].Pinned, "first seen") {
		t.Fatalf("the first report: got %d sessions, problems %q, laptop %+v; want 2, none, the laptop's key said pinned", r.Totals.Sessions, r.Problems, r.Devices[1])
	}
	for _, c := range []struct {
		name, path string
		pub        *persist.Publisher
		st         *persist.Store
	}{
		{"the other machine's copy", filepath.Join(laptopPub.Folder(), persist.PublishedTotals), laptopPub, laptop},
		{"this machine's own copy", filepath.Join(deskPub.Folder(), persist.PublishedChain), deskPub, desk},
	} {
		appendForgedLine(t, c.path, at(13))
		r := build()
		if r.Totals.Sessions != 2 || r.Totals.ActiveSeconds != 2*3600 || !slices.ContainsFunc(r.Problems, func(p string) bool {
			return strings.Contains(p, "line 2 (seq 2)") && strings.Contains(p, "not signed by its key") && strings.Contains(p, "left out")
		}) {
			t.Fatalf("%s with a forged line: got %d sessions, %d s active, problems %q; want the 2 real ones, 7200 s, line 2 (seq 2) named not signed and left out",
				c.name, r.Totals.Sessions, r.Totals.ActiveSeconds, r.Problems)
		}
		for _, s := range r.Sessions {
			if s.SessionID == "forged" {
				t.Fatalf("%s: got the forged session counted, want it left out", c.name)
			}
		}
		c.pub.PublishNow() // the real machine's next pass
		if r := build(); r.Totals.Sessions != 2 || len(r.Problems) != 0 {
			t.Fatalf("%s after its machine republished: got %d sessions, problems %q; want the 2 real ones and nothing said", c.name, r.Totals.Sessions, r.Problems)
		}
	}
}
