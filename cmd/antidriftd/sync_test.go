package main

import (
	"bytes"
	"encoding/json"
	"os"
	"os/exec"
	"path/filepath"
	"slices"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/antidrift/antidrift/internal/testsupport/statefixture"
	"github.com/antidrift/antidrift/internal/testsupport/testenv"
	"github.com/antidrift/antidrift/persist"
)

// syncMachine is one of the person's machines: a daemon with its own state
// and config, on its own bus, publishing into its own Syncthing's copy of
// the shared folder.
type syncMachine struct {
	name, xdgState, xdgConfig, syncDir string
	st                                 *testenv.Syncthing
	d                                  *testenv.Daemon
}

func (m *syncMachine) stateDir() string { return filepath.Join(m.xdgState, "antidrift") }

func (m *syncMachine) env() []string {
	return []string{"XDG_STATE_HOME=" + m.xdgState, "XDG_CONFIG_HOME=" + m.xdgConfig}
}

func newSyncMachine(t *testing.T, name string, titles bool) *syncMachine {
	t.Helper()
	root := t.TempDir()
	m := &syncMachine{name: name, xdgState: filepath.Join(root, "state"), xdgConfig: filepath.Join(root, "config"), syncDir: filepath.Join(root, "Sync")}
	for _, dir := range []string{m.xdgState, filepath.Join(m.xdgConfig, "antidrift"), m.syncDir} {
		if err := os.MkdirAll(dir, 0o700); err != nil {
			t.Fatal(err)
		}
	}
	cfg := "sync_dir = \"" + m.syncDir + "\"\ndevice_name = \"" + name + "\"\n"
	if titles {
		cfg += "sync_titles = true\n"
	}
	if err := os.WriteFile(filepath.Join(m.xdgConfig, "antidrift", "config.toml"), []byte(cfg), 0o600); err != nil {
		t.Fatal(err)
	}
	m.st = testenv.StartSyncthing(t, name)
	m.d = testenv.StartDaemon(t, testenv.StartBus(t), m.stateDir(), m.env()...)
	return m
}

// session runs one whole session of about secs seconds and seals it.
func (m *syncMachine) session(t *testing.T, what string, secs int) {
	t.Helper()
	s := m.d.Session(t)
	startSession(t, s, what, "done", 600, "observe")
	time.Sleep(time.Duration(secs) * time.Second)
	completeAndEnd(t, s)
}

// cli runs antidrift as this machine's person would.
func (m *syncMachine) cli(t *testing.T, args ...string) (string, int) {
	t.Helper()
	stdout, stderr, code := m.cliApart(t, args...)
	return stdout + stderr, code
}

// cliApart is cli with what it printed on stdout and on stderr apart.
func (m *syncMachine) cliApart(t *testing.T, args ...string) (string, string, int) {
	t.Helper()
	cmd := exec.Command(testenv.Binary(t, "antidrift"), args...)
	cmd.Env = append(append(os.Environ(), "DBUS_SESSION_BUS_ADDRESS="+m.d.Bus.Address, "NO_COLOR=1"), m.env()...)
	var stdout, stderr bytes.Buffer
	cmd.Stdout, cmd.Stderr = &stdout, &stderr
	err := cmd.Run()
	code := 0
	if err != nil {
		ee, ok := err.(*exec.ExitError)
		if !ok {
			t.Fatal(err)
		}
		code = ee.ExitCode()
	}
	return stdout.String(), stderr.String(), code
}

type syncReport struct {
	Problems []string `json:"problems"`
	Totals   struct {
		Sessions       int    `json:"sessions"`
		ActiveSeconds  uint64 `json:"active_seconds"`
		OverlapSeconds uint64 `json:"overlap_seconds"`
	} `json:"totals"`
	Sessions []struct {
		SessionID     string `json:"session_id"`
		Device        string `json:"device"`
		NextAction    string `json:"next_action"`
		ActiveSeconds uint64 `json:"active_seconds"`
	} `json:"sessions"`
	Devices []struct {
		Name       string `json:"name"`
		ThisDevice bool   `json:"this_device"`
		OK         bool   `json:"ok"`
		Pinned     string `json:"pinned"`
		Totals     struct {
			Sessions      int    `json:"sessions"`
			ActiveSeconds uint64 `json:"active_seconds"`
		} `json:"totals"`
	} `json:"devices"`
}

func (m *syncMachine) report(t *testing.T, extra ...string) syncReport {
	t.Helper()
	out, code := m.cli(t, append([]string{"report", "--today", "--json"}, extra...)...)
	var r syncReport
	if err := json.Unmarshal([]byte(out), &r); err != nil || code != 0 {
		t.Fatalf("%s: antidrift report --json: got exit %d (%v):\n%s\nwant exit 0 and JSON", m.name, code, err, out)
	}
	return r
}

// sessionsBy is the report's sessions as "device: next action", in order.
func (r syncReport) sessionsBy() []string {
	var out []string
	for _, s := range r.Sessions {
		out = append(out, s.Device+": "+s.NextAction)
	}
	return out
}

// syncWait bounds a wait for Syncthing, which moves the files when it will.
const syncWait = 90 * time.Second

// waitForSync polls until ok holds (Syncthing moves the files when it will).
func waitForSync(t *testing.T, what string, ok func() bool, logs ...func() string) {
	t.Helper()
	deadline := time.Now().Add(syncWait)
	for !ok() {
		if time.Now().After(deadline) {
			var all []string
			for _, l := range logs {
				all = append(all, l())
			}
			t.Fatalf("timed out waiting for %s\n%s", what, strings.Join(all, "\n"))
		}
		time.Sleep(250 * time.Millisecond)
	}
}

// holdsChainOf reports whether sync holds device's copy with n entries.
func holdsChainOf(sync, id, file string, n int) bool {
	data, err := os.ReadFile(filepath.Join(sync, persist.LayoutFolder, id, file))
	return err == nil && bytes.Count(data, []byte("\n")) == n
}

// sameFiles reports whether every regular file in folder from is in folder
// to with the same bytes (files only in to, such as Syncthing's own, do not
// count).
func sameFiles(from, to string) bool {
	entries, err := os.ReadDir(from)
	if err != nil || len(entries) == 0 {
		return false
	}
	for _, e := range entries {
		if !e.Type().IsRegular() {
			continue
		}
		want, err1 := os.ReadFile(filepath.Join(from, e.Name()))
		got, err2 := os.ReadFile(filepath.Join(to, e.Name()))
		if err1 != nil || err2 != nil || !bytes.Equal(want, got) {
			return false
		}
	}
	return true
}

func deviceID(t *testing.T, m *syncMachine) string {
	t.Helper()
	id := persist.NewReader(m.stateDir()).DeviceID()
	if id == "" {
		t.Fatalf("%s's device id: got none, want one in its state dir", m.name)
	}
	return id
}

// Two machines, each with its own daemon, state and Syncthing; one folder
// shared send-receive between the two Syncthings over loopback. Sessions on
// both (two at the same time); once Syncthing has moved the copies, the
// report on each machine shows every session of both exactly once, named
// with its machine, with each machine's totals and time active counted
// once through the overlap. Then what goes wrong in a shared folder: an
// edited line, a truncated copy, a duplicated device folder, a conflict
// copy, the same device id on two machines — each caught, named and kept
// out of the figures.
func TestTwoMachinesOneRecordThroughSyncthing(t *testing.T) {
	testenv.Need(t, "dbus-daemon", "busctl", "syncthing")
	desk := newSyncMachine(t, "desk", true)
	laptop := newSyncMachine(t, "laptop", false)
	desk.st.Introduce(t, laptop.st)
	laptop.st.Introduce(t, desk.st)
	desk.st.Share(t, "antidrift", desk.syncDir, laptop.st)
	laptop.st.Share(t, "antidrift", laptop.syncDir, desk.st)
	deskID, laptopID := deviceID(t, desk), deviceID(t, laptop)

	// A session on each machine at the same time, then one more on the laptop.
	var wg sync.WaitGroup
	wg.Add(2)
	go func() { defer wg.Done(); desk.session(t, "write the budget", 3) }()
	go func() { defer wg.Done(); laptop.session(t, "answer mail on the train", 3) }()
	wg.Wait()
	laptop.session(t, "read the paper", 1)
	logs := []func() string{desk.st.Output, laptop.st.Output}
	waitForSync(t, "the laptop's copy on the desk to hold 2 entries of "+persist.PublishedTotals, func() bool { return holdsChainOf(desk.syncDir, laptopID, persist.PublishedTotals, 2) }, logs...)
	// A seal on the desk after the laptop's copy arrived: the desk now
	// remembers how far the laptop's copy reached.
	desk.session(t, "plan tomorrow", 1)
	waitForSync(t, "the desk's copy on the laptop to hold 2 entries of "+persist.PublishedChain, func() bool { return holdsChainOf(laptop.syncDir, deskID, persist.PublishedChain, 2) }, logs...)

	want := []string{"desk: write the budget", "laptop: answer mail on the train", "laptop: read the paper", "desk: plan tomorrow"}
	slices.Sort(want)
	var reports []syncReport
	for _, m := range []*syncMachine{desk, laptop} {
		r := m.report(t)
		got := r.sessionsBy()
		sorted := slices.Clone(got)
		slices.Sort(sorted)
		if !slices.Equal(sorted, want) {
			t.Fatalf("%s's report shows %v, want every session of both machines once: %v\n%+v", m.name, got, want, r)
		}
		ids := map[string]bool{}
		var sum uint64
		for _, s := range r.Sessions {
			if ids[s.SessionID] {
				t.Fatalf("%s's report: got session %s twice, want each once", m.name, s.SessionID)
			}
			ids[s.SessionID] = true
			sum += s.ActiveSeconds
		}
		if len(r.Problems) != 0 {
			t.Errorf("%s's report's problems: got %q, want none", m.name, r.Problems)
		}
		if r.Totals.Sessions != 4 || len(r.Devices) != 2 || r.Devices[0].Totals.Sessions+r.Devices[1].Totals.Sessions != 4 {
			t.Fatalf("%s's totals: got %+v, want 4 sessions over 2 devices", m.name, r)
		}
		if r.Totals.OverlapSeconds == 0 || r.Totals.ActiveSeconds != sum-r.Totals.OverlapSeconds {
			t.Errorf("%s's time active: got %d with overlap %d, want the sessions' %d less a non-zero overlap (two of them ran at once)", m.name, r.Totals.ActiveSeconds, r.Totals.OverlapSeconds, sum)
		}
		reports = append(reports, r)
	}
	if !slices.Equal(reports[0].sessionsBy(), reports[1].sessionsBy()) || reports[0].Totals != reports[1].Totals {
		t.Fatalf("the two machines' reports: got\n%v %+v\n%v %+v\nwant them the same", reports[0].sessionsBy(), reports[0].Totals, reports[1].sessionsBy(), reports[1].Totals)
	}
	// The daemon's Report, where the GNOME indicator and the Plasma applet
	// read today's figures, covers both machines too.
	now := time.Now()
	midnight := time.Date(now.Year(), now.Month(), now.Day(), 0, 0, 0, 0, time.Local)
	var doc string
	desk.d.Session(t).Call(t, "Report", testenv.Args(midnight.Unix(), midnight.AddDate(0, 0, 1).Unix()), &doc)
	var overBus syncReport
	if err := json.Unmarshal([]byte(doc), &overBus); err != nil || overBus.Totals != reports[0].Totals || len(overBus.Devices) != 2 {
		t.Fatalf("the daemon's Report: got %v %+v, want the totals of both machines %+v", err, overBus.Totals, reports[0].Totals)
	}
	// history lists both machines' sessions, newest first, each named;
	// verify checks the other machine's copy too.
	if out, code := desk.cli(t, "history"); code != 0 || !containsEvery(out, "DEVICE", "laptop", "answer mail on the train", "desk", "plan tomorrow") {
		t.Errorf("history on the desk: got exit %d\n%s\nwant exit 0 and both machines' sessions, named", code, out)
	}
	if out, code := desk.cli(t, "verify"); code != 0 || !containsEvery(out, "The audit log is intact: 2 entries", `Device "laptop" (totals copy): intact, 2 entries, signed by its key SHA256:`) {
		t.Errorf("verify on the desk: got exit %d\n%s\nwant exit 0, the log and the laptop's copy intact", code, out)
	}
	// --this-device is the machine alone; --device narrows to one.
	if r := desk.report(t, "--this-device"); r.Totals.Sessions != 2 || len(r.Devices) != 0 {
		t.Errorf("--this-device on the desk: got %v, want the desk's 2 sessions alone", r.sessionsBy())
	}
	if r := desk.report(t, "--device", "laptop"); r.Totals.Sessions != 2 || r.Sessions[0].Device != "laptop" {
		t.Errorf("--device laptop on the desk: got %v, want the laptop's 2 sessions", r.sessionsBy())
	}

	// Each trouble is made in the desk's copy of the laptop's folder, read
	// by the desk's report, and undone.
	laptopDir := filepath.Join(desk.syncDir, persist.LayoutFolder, laptopID)
	totals := filepath.Join(laptopDir, persist.PublishedTotals)
	good, err := os.ReadFile(totals)
	if err != nil {
		t.Fatal(err)
	}
	restore := func() {
		t.Helper()
		if err := os.WriteFile(totals, good, 0o600); err != nil {
			t.Fatal(err)
		}
	}
	problemWith := func(r syncReport, parts ...string) bool {
		for _, p := range r.Problems {
			if containsEvery(p, parts...) {
				return true
			}
		}
		return false
	}
	laptopSessions := func(r syncReport) int {
		n := 0
		for _, s := range r.Sessions {
			if s.Device == "laptop" {
				n++
			}
		}
		return n
	}

	t.Run("an edited line", func(t *testing.T) {
		os.WriteFile(totals, bytes.Replace(good, []byte("answer mail"), []byte("answer post"), 1), 0o600)
		r := desk.report(t)
		if !problemWith(r, `device "laptop"`, "line 1 (seq 1)", "altered", "left out of every figure") || laptopSessions(r) != 0 || r.Totals.Sessions != 2 {
			t.Errorf("got problems %q, laptop's sessions %d, sessions %d; want line 1 named altered, 0 of the laptop's, 2 in all", r.Problems, laptopSessions(r), r.Totals.Sessions)
		}
		if out, code := desk.cli(t, "verify"); code != 1 || !strings.Contains(out, `"laptop"`) {
			t.Errorf("verify: got exit %d\n%s\nwant exit 1 naming the laptop", code, out)
		}
		restore()
	})
	t.Run("a copy truncated by a line", func(t *testing.T) {
		os.WriteFile(totals, good[:bytes.IndexByte(good, '\n')+1], 0o600)
		r := desk.report(t)
		if !problemWith(r, `"laptop"`, "ends at seq 1", "up to seq 2", "truncated") || laptopSessions(r) != 1 {
			t.Errorf("got problems %q, laptop's sessions %d; want the copy named truncated, 1 of the laptop's", r.Problems, laptopSessions(r))
		}
		restore()
	})
	t.Run("a duplicated device folder", func(t *testing.T) {
		dup := filepath.Join(desk.syncDir, persist.LayoutFolder, laptopID+" (copy)")
		copyDir(t, laptopDir, dup)
		r := desk.report(t)
		if !problemWith(r, "2 folders claim device id "+laptopID) || laptopSessions(r) != 2 {
			t.Errorf("got problems %q, laptop's sessions %d; want the two folders named, 2 of the laptop's (once)", r.Problems, laptopSessions(r))
		}
		os.RemoveAll(dup)
	})
	t.Run("a conflict copy", func(t *testing.T) {
		conflict := filepath.Join(laptopDir, "totals.sync-conflict-20261201-101500-ABCDEFG.jsonl")
		os.WriteFile(conflict, good, 0o600)
		r := desk.report(t)
		if !problemWith(r, "totals.sync-conflict-20261201-101500-ABCDEFG.jsonl", "conflict copy", "give one machine a new id") || laptopSessions(r) != 2 {
			t.Errorf("got problems %q, laptop's sessions %d; want the conflict copy named, 2 of the laptop's", r.Problems, laptopSessions(r))
		}
		os.Remove(conflict)
	})
	signedFaults(t, desk, laptop, deskID, laptopID, logs)

	// A third machine gone bad publishes, through the laptop's Syncthing,
	// a session with a number that would wrap the desk's week: Syncthing
	// carries it, and report, history and verify on the desk name the line
	// and leave it out, its good session still counted.
	t.Run("a number from a machine gone bad", func(t *testing.T) {
		now := time.Now()
		bad := statefixture.TodaySession(now, "0197a3c4-0000-7000-8000-0000000000b2", "wrap the week")
		bad.DriftSeconds = 1<<64 - 31
		tabletID, err := statefixture.Machine(filepath.Join(t.TempDir(), "tablet"), laptop.syncDir, "tablet", false,
			statefixture.TodaySession(now, "0197a3c4-0000-7000-8000-0000000000b1", "sketch the figures"), bad)
		if err != nil {
			t.Fatal(err)
		}
		// Every file of the folder, not only its totals: Syncthing moves
		// them in no set order, and a copy without its device.json is
		// (rightly) left out whole.
		waitForSync(t, "the tablet's whole folder on the desk", func() bool {
			return sameFiles(filepath.Join(laptop.syncDir, persist.LayoutFolder, tabletID), filepath.Join(desk.syncDir, persist.LayoutFolder, tabletID))
		}, logs...)
		agree(t, desk, "tablet", 1, `device "tablet"`, "line 2 (seq 2)", "drift_seconds 18446744073709551585", "left out of every figure")
		os.RemoveAll(filepath.Join(laptop.syncDir, persist.LayoutFolder, tabletID))
		waitForSync(t, "the tablet's folder gone from the desk", func() bool {
			_, err := os.Stat(filepath.Join(desk.syncDir, persist.LayoutFolder, tabletID))
			return os.IsNotExist(err)
		}, logs...)
	})

	t.Run("the same device id on two machines", func(t *testing.T) {
		// The laptop gets the desk's device.json and key, as a copied
		// state directory would give it, and seals a session.
		laptop.d.Stop(t)
		for _, f := range []string{"device.json", "device-key.json"} {
			data, err := os.ReadFile(filepath.Join(desk.stateDir(), f))
			if err != nil {
				t.Fatal(err)
			}
			os.WriteFile(filepath.Join(laptop.stateDir(), f), data, 0o600)
		}
		deskCopy := filepath.Join(laptop.syncDir, persist.LayoutFolder, deskID, persist.PublishedChain)
		before, _ := os.ReadFile(deskCopy)
		laptop.d.Start(t)
		laptop.session(t, "a session on the clone", 1)
		if problems := laptop.d.Session(t).Strings(t, "Problems"); !slices.ContainsFunc(problems, func(p string) bool {
			return strings.Contains(p, "another machine publishes under the same device id")
		}) {
			t.Errorf("the laptop's Problems: got %q, want one saying another machine publishes under the same device id\n%s", problems, laptop.d.Output())
		}
		if after, _ := os.ReadFile(deskCopy); !bytes.Equal(before, after) {
			t.Error("the desk's copy on the laptop: got it overwritten, want it as the desk published it")
		}
		if r := laptop.report(t); !problemWith(r, "another machine uses the same device id") {
			t.Errorf("the laptop's report's problems: got %q, want one saying another machine uses the same device id", r.Problems)
		}
		if out, code := laptop.cli(t, "verify"); code != 1 || !strings.Contains(out, "another machine uses the same device id") {
			t.Errorf("verify on the laptop: got exit %d\n%s\nwant exit 1 saying another machine uses the same device id", code, out)
		}
	})
}

func containsEvery(s string, parts ...string) bool {
	for _, p := range parts {
		if !strings.Contains(s, p) {
			return false
		}
	}
	return true
}

func copyDir(t *testing.T, from, to string) {
	t.Helper()
	if err := os.MkdirAll(to, 0o700); err != nil {
		t.Fatal(err)
	}
	entries, err := os.ReadDir(from)
	if err != nil {
		t.Fatal(err)
	}
	for _, e := range entries {
		data, err := os.ReadFile(filepath.Join(from, e.Name()))
		if err != nil {
			t.Fatal(err)
		}
		os.WriteFile(filepath.Join(to, e.Name()), data, 0o600)
	}
}

// A sync_dir that is not there (Syncthing has not made the folder yet)
// never holds up or loses a seal: End returns the hash, the chain
// verifies, Problems says why nothing was published and what to do; once
// the folder is there, the next seal publishes and the sentence goes.
func TestPublishingNeverHoldsUpASeal(t *testing.T) {
	testenv.Need(t, "dbus-daemon")
	root := t.TempDir()
	syncDir, cfgHome := filepath.Join(root, "Sync"), filepath.Join(root, "config")
	os.MkdirAll(filepath.Join(cfgHome, "antidrift"), 0o700)
	os.WriteFile(filepath.Join(cfgHome, "antidrift", "config.toml"), []byte("sync_dir = \""+syncDir+"\"\n"), 0o600)
	d := testenv.StartDaemon(t, testenv.StartBus(t), filepath.Join(root, "state"), "XDG_CONFIG_HOME="+cfgHome)
	t.Cleanup(func() {
		if t.Failed() {
			t.Logf("antidriftd's log:\n%s", d.Output())
		}
	})
	s := d.Session(t)
	problems := func() string { return strings.Join(s.Strings(t, "Problems"), "\n") }
	startSession(t, s, "write", "done", 600, "observe")
	if hash := completeAndEnd(t, s); len(hash) != 64 {
		t.Fatalf("End's hash: got %q, want 64 hex digits", hash)
	}
	var audit auditReport
	s.Call(t, "VerifyAudit", nil, &audit.OK, &audit.Entries, &audit.Problem)
	if want := (auditReport{OK: true, Entries: 1}); audit != want {
		t.Fatalf("VerifyAudit: got %+v, want %+v", audit, want)
	}
	testenv.WaitFor(t, syncWait, "Problems to say the seal could not be published to sync_dir", problems,
		func(p string) bool { return strings.Contains(p, "could not be published to sync_dir") })
	if got := problems(); !strings.Contains(got, "create it as the folder Syncthing shares") {
		t.Errorf("Problems: got %q, want it to say create it as the folder Syncthing shares", got)
	}
	os.MkdirAll(syncDir, 0o700)
	startSession(t, s, "write more", "done", 600, "observe")
	completeAndEnd(t, s)
	id := persist.NewReader(filepath.Join(root, "state")).DeviceID()
	waitForSync(t, "the published copy to hold 2 entries of "+persist.PublishedTotals, func() bool { return holdsChainOf(syncDir, id, persist.PublishedTotals, 2) }, d.Output)
	testenv.WaitFor(t, syncWait, "Problems to say nothing of sync_dir", problems, func(p string) bool { return !strings.Contains(p, "sync_dir") })
}
