package persist

import (
	"bytes"
	"os"
	"path/filepath"
	"reflect"
	"testing"

	"github.com/antidrift/antidrift/service"
)

// A summary with a task is sealed as an audit line of version 2 (an older
// reader would drop the task), verifies in one chain with version 1
// lines, and reads back whole; one without stays version 1, no key.
func TestASummaryWithATaskIsAuditVersion2(t *testing.T) {
	dir := newStateDir(t)
	s := openStore(t, dir)
	plain := sampleSummary(1)
	withTask := sampleSummary(2)
	withTask.Version = service.SummaryTaskVersion
	withTask.Task = &service.TaskRecord{Source: "taskwarrior", ID: "3b57c555-9465-4989-87b5-55cd2b3c1123", Result: "done"}
	for _, sum := range []service.Summary{plain, withTask} {
		if _, err := s.AppendAudit(sum); err != nil {
			t.Fatal(err)
		}
	}
	data, err := os.ReadFile(filepath.Join(dir, auditFileName))
	if err != nil {
		t.Fatal(err)
	}
	lines := bytes.Split(bytes.TrimSpace(data), []byte("\n"))
	if len(lines) != 2 || bytes.Contains(lines[0], []byte(`"version"`)) || !bytes.HasPrefix(lines[1], []byte(`{"version":2,`)) {
		t.Fatalf("audit.jsonl: got\n%s\nwant a first line without a version and a second starting {\"version\":2,", data)
	}
	if r := s.VerifyAudit(); !r.OK || r.Entries != 2 {
		t.Errorf("VerifyAudit: got %+v, want 2 good entries", r)
	}
	got, err := s.History(10)
	if err != nil || len(got) != 2 || !reflect.DeepEqual(got[0].Task, withTask.Task) || got[1].Task != nil {
		t.Errorf("History: got %+v, %v; want the task read back on the newer and none on the older", got, err)
	}
	if err := checkVersion(auditFileName, 2, 2, AuditLineVersion); err != nil {
		t.Errorf("this build refuses its own version 2 line: %v", err)
	}
}

// A raw log's task line (version 2, the task as an object) is read back
// whole by the slow path, and the lines around it by the fast one.
func TestATaskLineIsReadBack(t *testing.T) {
	s := openStore(t, newStateDir(t))
	id := "0197a3c4-5e6f-7a8b-9c0d-000000000042"
	task := service.FocusEvent{Version: service.RawLogTaskVersion, AtUnixMillis: 1_780_000_000_000, Mark: service.MarkTask,
		Task: &service.SessionTask{Source: "taskwarrior", ID: "3b57c555-9465-4989-87b5-55cd2b3c1123", Title: "Write the report", Version: "20261203T132730Z"}}
	events := append([]service.FocusEvent{task}, sampleEvents()...)
	for _, e := range events {
		if err := s.AppendEvent(id, e); err != nil {
			t.Fatal(err)
		}
	}
	var got []service.FocusEvent
	if err := s.EachEvent(id, func(e service.FocusEvent) { got = append(got, e) }); err != nil {
		t.Fatal(err)
	}
	if len(got) != len(events) || !reflect.DeepEqual(got[0], task) {
		t.Fatalf("EachEvent: got %d events, first %+v; want %d, first %+v", len(got), got[0], len(events), task)
	}
	for i := range events[1:] {
		if got[i+1] != events[i+1] {
			t.Errorf("event %d: got %+v, want %+v", i+1, got[i+1], events[i+1])
		}
	}
}
