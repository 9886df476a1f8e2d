package testenv

import (
	"os"
	"os/exec"
	"testing"
)

// StartLogged starts cmd (a browser, most often) with its output in a file
// under dir, kills it at cleanup, and shows the end of that output when
// the test failed: a program that misbehaves says why in the failure.
func StartLogged(t testing.TB, dir, name string, cmd *exec.Cmd) {
	t.Helper()
	logf, err := os.CreateTemp(dir, name+"-*.log")
	if err != nil {
		t.Fatal(err)
	}
	cmd.Stdout, cmd.Stderr = logf, logf
	if err := cmd.Start(); err != nil {
		t.Fatalf("starting %s: %v", name, err)
	}
	t.Cleanup(func() {
		cmd.Process.Kill()
		cmd.Wait()
		logf.Close()
		if t.Failed() {
			b, _ := os.ReadFile(logf.Name())
			t.Logf("%s's output:\n%s", name, b[max(0, len(b)-6000):])
		}
	})
}
