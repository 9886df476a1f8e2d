package main

import (
	"bytes"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/antidrift/antidrift/internal/testsupport/testenv"
)

// The tampering a person is most likely to try: delete the session they
// are ashamed of from the end of audit.jsonl (or the last two), or replace
// the tail by lines of a fresh, valid chain. The file then verifies by
// itself; the head recorded at the last seal does not let it: VerifyAudit,
// antidrift verify (exit 1) and Problems all say the chain is broken.
func TestACutAuditTailIsBrokenOverTheBus(t *testing.T) {
	testenv.Need(t, "dbus-daemon", "dbus-send")
	cli := testenv.Binary(t, "antidrift")
	for _, tc := range []struct {
		name string
		cut  func(lines [][]byte, fresh [][]byte) [][]byte
		want string
	}{
		{"last line", func(l, _ [][]byte) [][]byte { return l[:2] }, "ends at seq 2, but seq 3"},
		{"last two lines", func(l, _ [][]byte) [][]byte { return l[:1] }, "ends at seq 1, but seq 3"},
		{"tail rewritten as a fresh valid chain", func(_, fresh [][]byte) [][]byte { return fresh }, "the tail was rewritten"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			// The fresh chain: another state directory's first three seals.
			freshDir := t.TempDir()
			fd := testenv.StartDaemon(t, testenv.StartBus(t), freshDir)
			sealSessions(t, dialDaemon(t, fd), 3)
			fd.Stop(t)
			fresh := auditFileLines(t, freshDir)

			dir := t.TempDir()
			d := testenv.StartDaemon(t, testenv.StartBus(t), dir)
			c := dialDaemon(t, d)
			sealSessions(t, c, 3)
			d.Stop(t)
			lines := auditFileLines(t, dir)
			if err := os.WriteFile(filepath.Join(dir, "audit.jsonl"), append(bytes.Join(tc.cut(lines, fresh), []byte("\n")), '\n'), 0o600); err != nil {
				t.Fatal(err)
			}
			d.Start(t)

			var (
				ok      bool
				entries uint32
				problem string
			)
			c.must(t, "VerifyAudit", nil, &ok, &entries, &problem)
			if ok || !strings.Contains(problem, tc.want) {
				t.Errorf("VerifyAudit = %v, %d, %q; want broken, saying %q", ok, entries, problem, tc.want)
			}
			out, err := d.Bus.Run(t, cli, "verify")
			if err == nil || !strings.Contains(err.Error(), "exit status 1") || !strings.Contains(err.Error(), tc.want) {
				t.Errorf("antidrift verify: %v\n%s", err, out)
			}
			if p := strings.Join(c.view(t).Problems, "\n"); !strings.Contains(p, tc.want) {
				t.Errorf("Problems: got %q, want it to say the chain is cut (%q)", p, tc.want)
			}
		})
	}
}

// sealSessions runs n whole sessions: Start, Complete, End.
func sealSessions(t *testing.T, c *client, n int) {
	t.Helper()
	for range n {
		c.start(t, 3600, "warn")
		c.must(t, "Complete", nil)
		c.end(t)
	}
}

func auditFileLines(t *testing.T, dir string) [][]byte {
	t.Helper()
	data, err := os.ReadFile(filepath.Join(dir, "audit.jsonl"))
	if err != nil {
		t.Fatal(err)
	}
	return bytes.Split(bytes.TrimSuffix(data, []byte("\n")), []byte("\n"))
}
