package main

import (
	"bytes"
	"context"
	"encoding/json"
	"os/exec"
	"testing"
	"time"

	"github.com/antidrift/antidrift/internal/testsupport/testenv"
)

// A panel that can only run commands to completion follows the daemon with
// status --wait-change: the first run prints at once, a run with the digest
// it printed sleeps until the status changes, and prints the new status.
func TestWaitChangeSleepsUntilTheStatusChanges(t *testing.T) {
	s := startDaemon(t, "")
	first := map[string]any{}
	printed := s.ok(t, "status", "--format", "json", "--wait-change", "none")
	if err := json.Unmarshal([]byte(printed), &first); err != nil {
		t.Fatalf("first run: got\n%s\nwant JSON: %v", printed, err)
	}
	digest, _ := first["digest"].(string)
	if first["state"] != "locked" || len(digest) != 16 {
		t.Fatalf("first run: got state %v, digest %q; want locked and a 16-character digest", first["state"], digest)
	}
	// Run again with that digest, nothing has changed: it must wait.
	ctx, cancel := context.WithTimeout(context.Background(), wait)
	defer cancel()
	cmd := exec.CommandContext(ctx, testenv.Binary(t, "antidrift"), "status", "--json", "--wait-change", digest)
	cmd.Env = s.d.Bus.Env()
	var out bytes.Buffer
	cmd.Stdout = &out
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	exited := make(chan error, 1)
	go func() { exited <- cmd.Wait() }()
	// A run that printed now would be a panel woken for nothing. (A
	// correct one never exits here, however slow the machine.)
	select {
	case err := <-exited:
		t.Fatalf("--wait-change with the current digest: got an exit (%v) without a change, printing %s; want it to wait", err, out.String())
	case <-time.After(300 * time.Millisecond):
	}
	s.ok(t, "start", "write the intro", "--done-when", "intro committed", "--for", "25m")
	if err := <-exited; err != nil {
		t.Fatalf("--wait-change after Start: got %v, want exit 0", err)
	}
	var next map[string]any
	if err := json.Unmarshal(out.Bytes(), &next); err != nil {
		t.Fatalf("--wait-change --json: got\n%s\nwant JSON: %v", out.String(), err)
	}
	if next["state"] != "active" || next["next_action"] != "write the intro" || next["digest"] == digest {
		t.Fatalf("after Start: got state %v, next_action %v, digest %v; want active, \"write the intro\", a digest other than %s", next["state"], next["next_action"], next["digest"], digest)
	}
	if r := s.run(t, "status", "--format", "waybar", "--wait-change", "x"); r.code != 2 {
		t.Fatalf("--wait-change with --format waybar: got %v, want exit 2", r)
	}
}
