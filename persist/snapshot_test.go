package persist

import (
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"reflect"
	"strings"
	"testing"
	"time"

	"github.com/antidrift/antidrift/service"
)

func activeSnapshot() service.Snapshot {
	pending := sampleSummary(7)
	return service.Snapshot{
		Version: 1, // no task: written as version 1

		State:             service.StateActive,
		SessionID:         "0197a3c4-5e6f-7a8b-9c0d-000000000042",
		NextAction:        "draft the \"persist\" README <now> & ship",
		SuccessCondition:  "a reviewer can follow it",
		TimeboxSecs:       1500,
		StartedUnixMilli:  1_780_000_000_000,
		DeadlineUnixMilli: 1_780_001_500_000,
		Enforcement:       service.LevelBlock,
		AllowedClasses:    []string{"code", "firefox"},
		Pending:           []service.Summary{pending},
	}
}

func TestSnapshotRoundTrip(t *testing.T) {
	s := openStore(t, newStateDir(t))
	want := activeSnapshot()
	if err := s.SaveSnapshot(want); err != nil {
		t.Fatal(err)
	}

	got, found, problem, err := s.LoadSnapshot()
	if err != nil || !found || problem != "" {
		t.Fatalf("LoadSnapshot: got found %v, problem %q, err %v; want found, no problem", found, problem, err)
	}
	if !reflect.DeepEqual(got, want) {
		t.Errorf("loaded snapshot differs from the saved one:\n got %+v\nwant %+v", got, want)
	}
}

func TestSnapshotSurvivesRestart(t *testing.T) {
	s := openStore(t, newStateDir(t))
	want := activeSnapshot()
	if err := s.SaveSnapshot(want); err != nil {
		t.Fatal(err)
	}
	s, _ = reopen(t, s)
	if got, found, _, err := s.LoadSnapshot(); err != nil || !found || !reflect.DeepEqual(got, want) {
		t.Errorf("after restart: got found %v, err %v, snapshot %+v; want found, the snapshot saved", found, err, got)
	}
}

func TestFirstStartHasNoSnapshotAndNoProblem(t *testing.T) {
	s := openStore(t, newStateDir(t))
	snap, found, problem, err := s.LoadSnapshot()
	if err != nil || found || problem != "" || !reflect.DeepEqual(snap, service.Snapshot{}) {
		t.Errorf("LoadSnapshot on a first start: got %+v, found %v, problem %q, err %v; want a zero snapshot, not found, no problem", snap, found, problem, err)
	}
}

func TestSaveStampsTheFormatVersion(t *testing.T) {
	s := openStore(t, newStateDir(t))
	if err := s.SaveSnapshot(service.Snapshot{State: service.StateLocked}); err != nil {
		t.Fatal(err)
	}
	// A caller that forgot the version must not make its own next start
	// treat the file as damaged.
	got, found, problem, err := s.LoadSnapshot()
	if err != nil || !found || problem != "" || got.Version != 1 {
		t.Errorf("LoadSnapshot: got version %d, found %v, problem %q, err %v; want version 1, found, no problem", got.Version, found, problem, err)
	}
}

// A snapshot with a task is version 2 (a daemon from before tasks would
// drop the task, so it must refuse the file); one without stays version 1,
// which every earlier daemon reads; both read back whole.
func TestSnapshotWithATaskIsVersion2(t *testing.T) {
	s := openStore(t, newStateDir(t))
	snap := activeSnapshot()
	snap.Task = &service.SessionTask{Source: "taskwarrior", ID: "3b57c555-9465-4989-87b5-55cd2b3c1123", Title: "Write the report", Version: "20261203T132730Z", StartedHere: true}
	snap.TaskResult = "left open"
	if err := s.SaveSnapshot(snap); err != nil {
		t.Fatal(err)
	}
	got, found, problem, err := s.LoadSnapshot()
	snap.Version = 2
	if err != nil || !found || problem != "" || !reflect.DeepEqual(got, snap) {
		t.Errorf("LoadSnapshot: got %+v (found %v, problem %q, err %v), want %+v", got, found, problem, err, snap)
	}
	snap.Task, snap.TaskResult = nil, ""
	snap.Pending[0].Task = &service.TaskRecord{Source: "caldav", ID: "x@example.org", Result: "done"}
	if snap.Format() != 2 {
		t.Errorf("a snapshot whose pending summary has a task: Format() = %d, want 2", snap.Format())
	}
}

// A crash after the new snapshot's temp file is written but before the
// rename must leave the previous snapshot in place, and the stray temp file
// must not disturb the next start.
func TestCrashBeforeRenameKeepsTheOldSnapshot(t *testing.T) {
	s := openStore(t, newStateDir(t))
	old := activeSnapshot()
	if err := s.SaveSnapshot(old); err != nil {
		t.Fatal(err)
	}
	oldBytes := readFile(t, s.statePath())

	// The first half of an atomic write, then the "crash": no commitTemp.
	stray, err := writeDurableTemp(s.statePath(), []byte(`{"version":1,"state":"rev`))
	if err != nil {
		t.Fatal(err)
	}

	s, problems := reopen(t, s)
	if len(problems) != 0 {
		t.Errorf("Open after the crash: got problems %q, want none", problems)
	}
	if got := readFile(t, s.statePath()); string(got) != string(oldBytes) {
		t.Errorf("state.json, although the rename never happened: got\n%s\nwant it unchanged:\n%s", got, oldBytes)
	}
	got, found, problem, err := s.LoadSnapshot()
	if err != nil || !found || problem != "" || !reflect.DeepEqual(got, old) {
		t.Errorf("LoadSnapshot after the crash: got found %v, problem %q, err %v, %+v; want the old snapshot %+v", found, problem, err, got, old)
	}

	next := old
	next.State = service.StateReview
	next.Outcome = service.OutcomeCompleted
	if err := s.SaveSnapshot(next); err != nil {
		t.Fatalf("SaveSnapshot with a stray temp file present: got %v, want success", err)
	}
	if got, _, _, _ := s.LoadSnapshot(); !reflect.DeepEqual(got, next) {
		t.Errorf("after the next save: got %+v, want %+v", got, next)
	}
	if _, err := os.Stat(stray); err != nil {
		t.Errorf("the stray temp file: got %v, want it kept: persist never deletes bytes it did not write in this run", err)
	}
}

func TestDamagedSnapshotIsSetAsideByteForByte(t *testing.T) {
	cases := map[string]string{
		"garbage":         "\x00\x01 this is not json \xff",
		"truncated JSON":  `{"version":1,"state":"active","session_id":"0197`,
		"empty file":      "",
		"version below 1": `{"version":0,"state":"locked"}`,
		"unknown state":   `{"version":1,"state":"sleeping"}`,
		"trailing bytes":  `{"version":1,"state":"locked"} {}`,
	}
	for name, content := range cases {
		t.Run(name, func(t *testing.T) {
			s := openStore(t, newStateDir(t))
			stamp := time.Unix(1_780_000_123, 0)
			s.now = func() time.Time { return stamp }
			writeFile(t, s.statePath(), []byte(content))

			snap, found, problem, err := s.LoadSnapshot()
			if err != nil {
				t.Fatalf("LoadSnapshot: got err %v, want none: damage is not an I/O error", err)
			}
			if found || !reflect.DeepEqual(snap, service.Snapshot{}) {
				t.Errorf("found %v, snapshot %+v; want a fresh start", found, snap)
			}
			aside := "state.json.damaged-1780000123"
			if !strings.Contains(problem, aside) {
				t.Errorf("problem: got %q, want it to name %s", problem, aside)
			}
			if got := readFile(t, filepath.Join(s.Dir(), aside)); string(got) != content {
				t.Errorf("the set-aside file holds %q, want the original %q", got, content)
			}
			assertMode(t, filepath.Join(s.Dir(), aside), 0o600)

			if _, found, problem, err := s.LoadSnapshot(); found || problem != "" || err != nil {
				t.Errorf("the next load: got found %v, problem %q, err %v; want a clean first start", found, problem, err)
			}
		})
	}
}

// A state.json a later version wrote, put there while the store is open,
// is not damage: LoadSnapshot leaves it where it is and says why.
func TestLaterSnapshotIsLeftAsItIs(t *testing.T) {
	s := openStore(t, newStateDir(t))
	later := fmt.Sprintf(`{"version":%d,"state":"locked"}`, StateFileVersion+1)
	writeFile(t, s.statePath(), []byte(later))
	_, found, problem, err := s.LoadSnapshot()
	if !errors.Is(err, ErrNewerFormat) || found || problem != "" {
		t.Fatalf("LoadSnapshot of a later version: got found %v, problem %q, err %v, want a *NewerFormatError", found, problem, err)
	}
	if got := string(readFile(t, s.statePath())); got != later {
		t.Errorf("state.json after the load: got %q, want it as it was, %q", got, later)
	}
}

func TestDamagedSnapshotsNeverOverwriteEachOther(t *testing.T) {
	s := openStore(t, newStateDir(t))
	s.now = func() time.Time { return time.Unix(1_780_000_123, 0) }
	contents := []string{"first damage", "second damage", "third damage"}
	for _, content := range contents {
		writeFile(t, s.statePath(), []byte(content))
		if _, _, problem, err := s.LoadSnapshot(); err != nil || problem == "" {
			t.Fatalf("LoadSnapshot of damage: got problem %q, err %v; want a problem and no error", problem, err)
		}
	}
	names := []string{"state.json.damaged-1780000123", "state.json.damaged-1780000123-2", "state.json.damaged-1780000123-3"}
	for i, name := range names {
		if got := readFile(t, filepath.Join(s.Dir(), name)); string(got) != contents[i] {
			t.Errorf("%s holds %q, want %q", name, got, contents[i])
		}
	}
}

func TestSnapshotThatIsADirectoryIsSetAside(t *testing.T) {
	s := openStore(t, newStateDir(t))
	if err := os.Mkdir(s.statePath(), 0o700); err != nil {
		t.Fatal(err)
	}
	_, found, problem, err := s.LoadSnapshot()
	if err != nil || found || !strings.Contains(problem, "state.json.damaged-") {
		t.Errorf("LoadSnapshot of a directory: got found %v, problem %q, err %v; want not found, a problem naming state.json.damaged-*", found, problem, err)
	}
	if err := s.SaveSnapshot(service.Snapshot{State: service.StateLocked}); err != nil {
		t.Errorf("SaveSnapshot after setting the directory aside: got %v, want success", err)
	}
}
