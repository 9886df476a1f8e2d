package main

import (
	"math"
	"os"
	"os/exec"
	"path/filepath"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/antidrift/antidrift/persist"
	"github.com/antidrift/antidrift/report"
	"github.com/antidrift/antidrift/service"
)

// agreeSession is a session of an hour on the 30th of November 2026.
func agreeSession(name string, hour int) service.Summary {
	from := time.Date(2026, 11, 30, hour, 0, 0, 0, time.UTC)
	return service.Summary{SessionID: name + "-" + from.Format("15"), NextAction: "work on " + name, Outcome: service.OutcomeCompleted,
		Enforcement: service.LevelWarn, StartedUnix: from.Unix(), EndedUnix: from.Add(time.Hour).Unix(), TimeboxSecs: 3600,
		Buckets: []service.Bucket{{Class: "Emacs", Title: "plan.org", Seconds: 3600}}}
}

// seal opens the state directory dir, seals sums, publishes into syncDir
// as name, and closes it again.
func seal(t *testing.T, dir, syncDir, name string, sums ...service.Summary) {
	t.Helper()
	st, _, err := persist.Open(dir)
	if err != nil {
		t.Fatal(err)
	}
	defer st.Close()
	for _, s := range sums {
		if _, err := st.AppendAudit(s); err != nil {
			t.Fatal(err)
		}
	}
	id, _, err := st.DeviceID()
	if err != nil {
		t.Fatal(err)
	}
	persist.NewPublisher(st, syncDir, id, name, true, func(string) {}).PublishNow()
}

// remember has the daemon of dir remember every other copy's head, as
// its publisher does after a seal.
func remember(t *testing.T, dir, syncDir string) {
	t.Helper()
	st, _, err := persist.Open(dir)
	if err != nil {
		t.Fatal(err)
	}
	defer st.Close()
	devs, _, _ := persist.ReadShared(syncDir, persist.LoadTrust(dir))
	if err := st.RememberDevices(devs, nil); err != nil {
		t.Fatal(err)
	}
}

func copyDir(t *testing.T, from, to string) {
	t.Helper()
	if out, err := exec.Command("cp", "-a", from, to).CombinedOutput(); err != nil {
		t.Fatalf("cp: %v: %s", err, out)
	}
}

// report, history and verify take the same machines with the same
// problems, from one function (report.ChooseDevices): for every fault a
// synced machine can show, each counts the same sessions of it (report:
// its sessions, history: its entries, verify: its entries, when it
// counts) and says the same problems.
func TestReportHistoryAndVerifyAgree(t *testing.T) {
	now := time.Date(2026, 12, 1, 12, 0, 0, 0, time.UTC)
	defer func(f func() time.Time) { reportNow = f }(reportNow)
	reportNow = func() time.Time { return now }
	for _, c := range []struct {
		name string
		// fault breaks the laptop's copy in syncDir: desk is this machine,
		// laptop (laptopDir) sealed three sessions, laptop2 is its state
		// directory as it was after two.
		fault   func(t *testing.T, syncDir, desk, laptop, laptop2 string)
		counted int    // laptop's sessions that count
		want    string // a problem all three say
	}{
		{"no fault", func(*testing.T, string, string, string, string) {}, 3, ""},
		{"a forged line appended", func(t *testing.T, syncDir, desk, laptop, _ string) {
			path := laptopChain(t, syncDir)
			data, _ := os.ReadFile(path)
			lines := strings.SplitAfter(string(data), "\n")
			os.WriteFile(path, []byte(string(data)+strings.Replace(lines[0], "work on laptop", "deep work on the thesis", 1)), 0o600)
		}, 3, "not signed by its key"},
		{"rewritten under the remembered head", func(t *testing.T, syncDir, desk, laptop, laptop2 string) {
			remember(t, desk, syncDir)
			os.RemoveAll(filepath.Dir(laptopChain(t, syncDir)))
			seal(t, laptop2, syncDir, "laptop", agreeSession("other", 16))
		}, 0, "rewritten from that point"},
		{"cut short of the remembered head", func(t *testing.T, syncDir, desk, laptop, laptop2 string) {
			remember(t, desk, syncDir)
			os.RemoveAll(filepath.Dir(laptopChain(t, syncDir)))
			seal(t, laptop2, syncDir, "laptop")
		}, 2, "truncated or rolled back"},
		{"a number that wraps the week", func(t *testing.T, syncDir, desk, laptop, _ string) {
			bad := agreeSession("laptop", 20)
			bad.DriftSeconds = math.MaxUint64 - 30
			seal(t, laptop, syncDir, "laptop", bad)
		}, 3, "drift_seconds 18446744073709551585"},
		{"an end at the end of time", func(t *testing.T, syncDir, desk, laptop, _ string) {
			bad := agreeSession("laptop", 20)
			bad.EndedUnix = math.MaxInt64
			seal(t, laptop, syncDir, "laptop", bad)
		}, 3, "ended_unix 9223372036854775807"},
		{"a clock far ahead", func(t *testing.T, syncDir, desk, laptop, _ string) {
			ahead := agreeSession("laptop", 0)
			ahead.StartedUnix, ahead.EndedUnix = now.Add(2*time.Hour).Unix(), now.Add(3*time.Hour).Unix()
			seal(t, laptop, syncDir, "laptop", ahead)
		}, 4, "past this machine's clock"},
		{"a conflict copy", func(t *testing.T, syncDir, desk, laptop, _ string) {
			path := laptopChain(t, syncDir)
			data, _ := os.ReadFile(path)
			os.WriteFile(path+".sync-conflict-20261130-120000-ABCDEFG.jsonl", data, 0o600)
		}, 3, "Syncthing conflict copy"},
		{"more lines than one reading checks", func(t *testing.T, syncDir, desk, laptop, _ string) {
			old := persist.DefaultReadBounds
			persist.DefaultReadBounds.DeviceChecks = 2
			t.Cleanup(func() { persist.DefaultReadBounds = old })
		}, 2, "signature checks ran out"},
		{"more devices than one reading opens", func(t *testing.T, syncDir, desk, laptop, _ string) {
			old := persist.DefaultReadBounds
			persist.DefaultReadBounds.Devices = 1 // desk's own folder, known, is read first
			t.Cleanup(func() { persist.DefaultReadBounds = old })
		}, 0, "more device folders than the 1"},
	} {
		t.Run(c.name, func(t *testing.T) {
			root := t.TempDir()
			syncDir, desk, laptop, laptop2 := filepath.Join(root, "sync"), filepath.Join(root, "desk"), filepath.Join(root, "laptop"), filepath.Join(root, "laptop2")
			os.Mkdir(syncDir, 0o700)
			seal(t, desk, syncDir, "desk", agreeSession("desk", 8))
			seal(t, laptop, syncDir, "laptop", agreeSession("laptop", 9), agreeSession("laptop", 10))
			copyDir(t, laptop, laptop2)
			seal(t, laptop, syncDir, "laptop", agreeSession("laptop", 11))
			// Each laptop folder is pinned before, so no reading says so.
			persist.ReadShared(syncDir, persist.LoadTrust(desk))
			c.fault(t, syncDir, desk, laptop, laptop2)

			which := report.Devices{SyncDir: syncDir, ThisName: "desk", Now: now}
			r, err := report.BuildAll(persist.NewReader(desk), report.LastDays(now, 30, 0), report.Options{}, which)
			if err != nil {
				t.Fatal(err)
			}
			reported := 0
			for _, s := range r.Sessions {
				if s.Device == "laptop" {
					reported++
				}
			}
			entries, historyProblems, _, err := withOtherDevices(nil, which, desk, 1000)
			if err != nil {
				t.Fatal(err)
			}
			listed := 0
			for _, e := range entries {
				if e["device"].Value() == "laptop" {
					listed++
				}
			}
			out := map[string]any{}
			_, _, err = verifyOtherDevices(which, desk, out)
			if err != nil {
				t.Fatal(err)
			}
			verified := 0
			for _, d := range out["devices"].([]map[string]any) {
				if d["name"] == "laptop" && d["counts"] == true {
					verified = int(d["entries"].(uint32))
				}
			}
			verifyProblems := out["problems"].([]string)
			if reported != c.counted || listed != c.counted || verified != c.counted {
				t.Errorf("laptop's sessions that count: got report %d, history %d, verify %d; want %d in each", reported, listed, verified, c.counted)
			}
			if !slices.Equal(r.Problems, historyProblems) || !slices.Equal(r.Problems, verifyProblems) {
				t.Errorf("problems: got\nreport  %q\nhistory %q\nverify  %q\nwant the same in each", r.Problems, historyProblems, verifyProblems)
			}
			if c.want != "" && !strings.Contains(strings.Join(r.Problems, "\n"), c.want) {
				t.Errorf("problems: got %q, want one saying %q", r.Problems, c.want)
			}
			if c.want == "" && len(r.Problems) != 0 {
				t.Errorf("problems: got %q, want none", r.Problems)
			}
		})
	}
}

// laptopChain is the laptop's chain.jsonl in syncDir: the device folder
// whose device.json names it.
func laptopChain(t *testing.T, syncDir string) string {
	t.Helper()
	folders, _ := filepath.Glob(filepath.Join(syncDir, persist.LayoutFolder, "*", persist.PublishedDevice))
	for _, f := range folders {
		if data, _ := os.ReadFile(f); strings.Contains(string(data), `"laptop"`) {
			return filepath.Join(filepath.Dir(f), persist.PublishedChain)
		}
	}
	t.Fatal("no laptop folder")
	return ""
}
