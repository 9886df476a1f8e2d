package main

import (
	"path/filepath"
	"testing"

	"github.com/antidrift/antidrift/service"
)

// The labelled cases are data a person wrote by hand; this keeps them
// usable: they parse, there are at least 100, both labels are well
// represented, and no case is listed twice.
func TestTheLabelledCasesAreUsable(t *testing.T) {
	cases, err := readCases(filepath.Join("..", "..", "..", "testdata", "judge-eval.jsonl"))
	if err != nil {
		t.Fatal(err)
	}
	seen := map[labelled]bool{}
	on := 0
	for _, c := range cases {
		key := c
		key.OnTask = nil
		if seen[key] {
			t.Errorf("the cases: got %s / %s listed twice, want each once", c.Class, c.Title)
		}
		seen[key] = true
		if *c.OnTask {
			on++
		}
	}
	if len(cases) < 100 || on < len(cases)/3 || len(cases)-on < len(cases)/3 {
		t.Fatalf("%d cases, %d on task: want at least 100, each label at least a third", len(cases), on)
	}
}

func TestTheReportCountsFalseDriftAgainstOnTaskWindows(t *testing.T) {
	yes, no := true, false
	var r report
	r.add(labelled{OnTask: &yes}, service.Verdict{Task: service.TaskOff}, 10)
	r.add(labelled{OnTask: &yes}, service.Verdict{Task: service.TaskOn}, 20)
	r.add(labelled{OnTask: &no}, service.Verdict{Task: service.TaskOff}, 30)
	r.add(labelled{OnTask: &no}, service.Verdict{Task: service.TaskUnknown}, 40)
	want := "accuracy          50.0% (2/4)\nfalse-drift rate  50.0% (1/2) of on-task windows judged off task\nmissed-drift rate 0.0% (0/2) of off-task windows judged on task\nunknown           25.0% (1/4)\nlatency           p50 0s, p99 0s, max 0s\n"
	if got := r.String(); got != want {
		t.Fatalf("report:\n%s\nwant:\n%s", got, want)
	}
}
