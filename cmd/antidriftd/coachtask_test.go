package main

import (
	"encoding/json"
	"fmt"
	"net/http"
	"net/http/httptest"
	"strings"
	"sync"
	"testing"

	"github.com/antidrift/antidrift/internal/testsupport/testenv"
)

// The coach from a task, end to end: a real Taskwarrior, a stand-in model
// server, and the CLI. plan --coach "" --task REF tells the model the
// task's title (read from Taskwarrior) and nothing of any window; the
// proposal is printed and nothing starts.
func TestCoachFromATaskwarriorTaskHearsItsTitle(t *testing.T) {
	bus := testenv.StartBus(t)
	tw := newTaskwarrior(t, bus)
	tw.task(t, "add", "Write the report")
	var (
		mu    sync.Mutex
		facts map[string]any
	)
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		var req struct {
			Messages []struct{ Content string } `json:"messages"`
		}
		_ = json.NewDecoder(r.Body).Decode(&req)
		mu.Lock()
		if len(req.Messages) == 2 {
			_ = json.Unmarshal([]byte(req.Messages[1].Content), &facts)
		}
		mu.Unlock()
		content := `{"next_action":"write the report's first section","success_condition":"it is saved","timebox_minutes":25,"allowed_rules":[],"why":"a start"}`
		b, _ := json.Marshal(map[string]any{"choices": []any{map[string]any{"finish_reason": "stop", "message": map[string]any{"content": content}}}})
		w.Write(b)
	}))
	t.Cleanup(srv.Close)
	d := tw.startDaemon(t, fmt.Sprintf("[tasks.taskwarrior]\n[judge]\nkind = \"llm\"\nendpoint = %q\n", srv.URL+"/v1"))
	s := d.Session(t)

	out, err := tw.cli(t, "plan", "--coach", "", "--task", "taskwarrior:1")
	if err != nil || !strings.Contains(out, "next action: write the report's first section") {
		t.Fatalf("plan --coach --task: %v\n%s\nwant the proposal printed", err, out)
	}
	mu.Lock()
	got := fmt.Sprint(facts)
	mu.Unlock()
	if facts["task_title"] != "Write the report" || facts["intention"] != "" {
		t.Fatalf("the model was told %s, want the task's title and an empty intention", got)
	}
	if st := s.String(t, "State"); st != "planning" {
		t.Fatalf("State after the proposal: got %s, want planning (nothing started)", st)
	}
}
