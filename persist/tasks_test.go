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
