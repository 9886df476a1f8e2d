package main

import (
	"encoding/json"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/godbus/dbus/v5"

	"github.com/antidrift/antidrift/internal/testsupport/statefixture"
	"github.com/antidrift/antidrift/internal/testsupport/testenv"
)

// twoMachines is a daemon ("desk", run with --state-dir away from
// $XDG_STATE_HOME) publishing into sync_dir, where another machine
// ("laptop") has published its copy with one session of today; desk has
// sealed one session too. No Syncthing: the laptop's copy is written
// where Syncthing would have brought it.
type twoMachines struct {
	*syncMachine
	laptopID string
}

func startTwoMachines(t *testing.T) twoMachines {
	t.Helper()
	testenv.Need(t, "dbus-daemon", "busctl")
	root := t.TempDir()
	m := &syncMachine{name: "desk", xdgState: filepath.Join(root, "xdg-state"), xdgConfig: filepath.Join(root, "config"), syncDir: filepath.Join(root, "Sync")}
	for _, dir := range []string{m.xdgState, filepath.Join(m.xdgConfig, "antidrift"), m.syncDir} {
		if err := os.MkdirAll(dir, 0o700); err != nil {
			t.Fatal(err)
		}
	}
	if err := os.WriteFile(filepath.Join(m.xdgConfig, "antidrift", "config.toml"), []byte("sync_dir = \""+m.syncDir+"\"\ndevice_name = \"desk\"\n"), 0o600); err != nil {
		t.Fatal(err)
	}
	laptopID := otherMachine(t, filepath.Join(root, "laptop-state"), m.syncDir)
	// The daemon's state is not under $XDG_STATE_HOME, which the CLI sees.
	m.d = testenv.StartDaemon(t, testenv.StartBus(t), filepath.Join(root, "desk-state"), "XDG_CONFIG_HOME="+m.xdgConfig)
	m.session(t, "write the intro on the desk", 1)
	id := deskID(t, m)
	waitForSync(t, "desk's copy to hold 1 entry of totals.jsonl", func() bool { return holdsChainOf(m.syncDir, id, "totals.jsonl", 1) }, m.d.Output)
	return twoMachines{syncMachine: m, laptopID: laptopID}
}

// otherMachine publishes, into syncDir, the copy of a machine "laptop"
// whose state is at stateDir, with one ten-minute session of today, on
// task throughout; it returns its device id.
func otherMachine(t *testing.T, stateDir, syncDir string) string {
	t.Helper()
	id, err := statefixture.Machine(stateDir, syncDir, "laptop", false,
		statefixture.TodaySession(time.Now(), "0197a3c4-0000-7000-8000-000000000001", "answer mail on the laptop"))
	if err != nil {
		t.Fatal(err)
	}
	return id
}

func deskID(t *testing.T, m *syncMachine) string {
	t.Helper()
	data, err := os.ReadFile(filepath.Join(m.d.StateDir, "device.json"))
	var d struct {
		DeviceID string `json:"device_id"`
	}
	if err != nil || json.Unmarshal(data, &d) != nil || d.DeviceID == "" {
		t.Fatalf("desk's device.json: %v %s", err, data)
	}
	return d.DeviceID
}

func midnightOf(t time.Time) time.Time {
	y, mo, d := t.Date()
	return time.Date(y, mo, d, 0, 0, 0, 0, t.Location())
}

// ReportDevice, over the bus, is the daemon's report of one machine by its
// name or device id, and of every machine with ""; a name no machine has
// is org.antidrift.Error.InvalidArgument saying which machines there are,
// as data for a client that asked (rule device, got, choices) and in the
// message for every other (busctl). antidrift report --daemon --device
// reaches it and says the refusal as the CLI's own usage error.
func TestReportDeviceOverTheBus(t *testing.T) {
	m := startTwoMachines(t)
	conn := m.d.Bus.Dial(t)
	obj := conn.Object("org.antidrift", "/org/antidrift/Session1")
	today := midnightOf(time.Now())
	since, until := today.Unix(), today.AddDate(0, 0, 1).Unix()
	reportOf := func(device string) syncReport {
		t.Helper()
		var doc string
		if err := obj.Call("org.antidrift.Session1.ReportDevice", 0, since, until, device).Store(&doc); err != nil {
			t.Fatalf("ReportDevice(%q): %v", device, err)
		}
		var r syncReport
		if err := json.Unmarshal([]byte(doc), &r); err != nil {
			t.Fatal(err)
		}
		return r
	}
	for _, tc := range []struct {
		device string
		want   []string
	}{
		{"", []string{"laptop: answer mail on the laptop", "desk: write the intro on the desk"}},
		{"laptop", []string{"laptop: answer mail on the laptop"}},
		{m.laptopID, []string{"laptop: answer mail on the laptop"}},
		{"desk", []string{"desk: write the intro on the desk"}},
	} {
		if r := reportOf(tc.device); !slices.Equal(r.sessionsBy(), tc.want) || r.Totals.Sessions != len(tc.want) {
			t.Errorf("ReportDevice(%q): got sessions %q (totals %d), want %q", tc.device, r.sessionsBy(), r.Totals.Sessions, tc.want)
		}
	}

	const refused = `no machine is named "lptop" (the machines are "desk", "laptop")`
	if err := obj.Call("org.antidrift.ErrorData1.Enable", 0).Err; err != nil {
		t.Fatal(err)
	}
	err := obj.Call("org.antidrift.Session1.ReportDevice", 0, since, until, "lptop").Err
	var e dbus.Error
	if !asDBusError(err, &e) || e.Name != "org.antidrift.Error.InvalidArgument" || len(e.Body) != 2 || !strings.Contains(e.Error(), refused) {
		t.Fatalf("ReportDevice(lptop): got %#v, want InvalidArgument saying %s", err, refused)
	}
	data, _ := e.Body[1].(map[string]dbus.Variant)
	if rule, _ := data["rule"].Value().(string); rule != "device" {
		t.Errorf("the refusal's rule: got %v, want device", data["rule"])
	}
	if got, _ := data["got"].Value().(string); got != "lptop" {
		t.Errorf("got %v, want the name as sent", data["got"])
	}
	if choices, _ := data["choices"].Value().([]string); !slices.Equal(choices, []string{"desk", "laptop"}) {
		t.Errorf("the refusal's choices: got %v, want the machines [desk laptop]", data["choices"])
	}
	if out, err := m.d.Busctl(t, "call", "ReportDevice", "xxs", "0", "3600", "lptop"); err == nil || !strings.Contains(err.Error(), refused) {
		t.Errorf("busctl ReportDevice lptop: got %v %s, want the refusal naming the machines", err, out)
	}

	out, code := m.cli(t, "report", "--daemon", "--today", "--device", "laptop", "--json")
	var r syncReport
	if code != 0 || json.Unmarshal([]byte(out), &r) != nil || !slices.Equal(r.sessionsBy(), []string{"laptop: answer mail on the laptop"}) {
		t.Errorf("antidrift report --daemon --device laptop --json: got exit %d\n%s\nwant exit 0 and only the laptop's session", code, out)
	}
	out, code = m.cli(t, "report", "--daemon", "--today")
	if code != 0 || !containsEvery(out, "answer mail on the laptop", "write the intro on the desk", "laptop", "desk") {
		t.Errorf("antidrift report --daemon (text): got exit %d\n%s\nwant exit 0 and both machines' sessions", code, out)
	}
	out, code = m.cli(t, "report", "--daemon", "--today", "--device", "lptop")
	if code != 2 || !strings.Contains(out, "antidrift report: --device: "+refused) {
		t.Errorf("antidrift report --daemon --device lptop: got exit %d\n%s\nwant exit 2 saying --device: %s", code, out, refused)
	}
}

func asDBusError(err error, e *dbus.Error) bool {
	switch x := err.(type) {
	case dbus.Error:
		*e = x
		return true
	case *dbus.Error:
		*e = *x
		return true
	}
	return false
}

// With the daemon run with --state-dir away from $XDG_STATE_HOME, history
// and verify given the same --state-dir know which copy in sync_dir is
// this machine's: desk's session is listed once (from the daemon), and
// verify checks only the laptop's copy as another machine's. A --device no
// machine has is refused naming the machines, as report refuses it.
func TestHistoryAndVerifyFollowTheDaemonsStateDir(t *testing.T) {
	m := startTwoMachines(t)
	out, code := m.cli(t, "history", "--json", "--state-dir", m.d.StateDir)
	var entries []struct {
		Device     string `json:"device"`
		NextAction string `json:"next_action"`
	}
	if code != 0 || json.Unmarshal([]byte(out), &entries) != nil {
		t.Fatalf("antidrift history --json --state-dir: got exit %d\n%s\nwant exit 0 and JSON", code, out)
	}
	var got []string
	for _, e := range entries {
		got = append(got, e.Device+": "+e.NextAction)
	}
	if want := []string{"desk: write the intro on the desk", "laptop: answer mail on the laptop"}; !slices.Equal(got, want) {
		t.Errorf("history: %q, want each session once, named with its machine: %q", got, want)
	}
	out, code = m.cli(t, "verify", "--state-dir", m.d.StateDir)
	if code != 0 || !strings.Contains(out, `Device "laptop" (totals copy): intact, 1 entry, signed by its key`) || strings.Contains(out, `Device "desk"`) {
		t.Errorf("antidrift verify --state-dir: got exit %d\n%s\nwant the laptop's copy checked and desk's not taken for another machine", code, out)
	}
	// A machine that is not there is named as not there, never an empty list.
	for _, command := range []string{"history", "verify"} {
		out, code = m.cli(t, command, "--state-dir", m.d.StateDir, "--device", "lptop")
		if want := "antidrift " + command + `: --device: no machine is named "lptop" (the machines are "desk", "laptop")`; code != 2 || !strings.Contains(out, want) {
			t.Errorf("antidrift %s --device lptop: got exit %d\n%s\nwant exit 2 saying %s", command, code, out, want)
		}
	}
}
