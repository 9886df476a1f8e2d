package main

import (
	"errors"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"

	"github.com/antidrift/antidrift/internal/testsupport/testenv"
)

const badConfig = `enforcement = "block"
drift_grace = "5 seconds"
enforcment = "locked"
`

func writeConfig(t *testing.T, body string) (home, path string) {
	t.Helper()
	home = t.TempDir()
	path = filepath.Join(home, "antidrift", "config.toml")
	if err := os.MkdirAll(filepath.Dir(path), 0o700); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(path, []byte(body), 0o600); err != nil {
		t.Fatal(err)
	}
	return home, path
}

func TestCheckConfig(t *testing.T) {
	bin := testenv.Binary(t, "antidriftd")
	_, good := writeConfig(t, "enforcement = \"block\"\ndrift_grace = \"1s\"\n")
	out, err := exec.Command(bin, "--check-config", "--config", good).CombinedOutput()
	if err != nil || !strings.Contains(string(out), "ok") {
		t.Fatalf("--check-config of a good file: got %v %s, want success saying ok", err, out)
	}
	_, bad := writeConfig(t, badConfig)
	out, err = exec.Command(bin, "--check-config", "--config", bad).CombinedOutput()
	var exit *exec.ExitError
	if !errors.As(err, &exit) || exit.ExitCode() != 1 {
		t.Fatalf("--check-config of a bad file: got %v %s, want exit 1", err, out)
	}
	for _, want := range []string{bad + " line 2: drift_grace", `"5 seconds" is not a duration`, "line 3", "enforcment"} {
		if !strings.Contains(string(out), want) {
			t.Errorf("--check-config's output: got\n%s\nwant it to say %q", out, want)
		}
	}
}

// A bad config never stops the daemon: it runs with defaults for what is
// wrong, keeps what is right, and says so in Problems.
func TestBadConfigIsAProblemNotAFailure(t *testing.T) {
	testenv.Need(t, "dbus-daemon", "busctl", "dbus-send")
	home, path := writeConfig(t, badConfig)
	d := testenv.StartDaemon(t, testenv.StartBus(t), filepath.Join(t.TempDir(), "state"), "XDG_CONFIG_HOME="+home)
	s := d.Session(t)
	problems := strings.Join(s.Strings(t, "Problems"), "\n")
	if !strings.Contains(problems, path+" line 2: drift_grace") || !strings.Contains(problems, "enforcment") {
		t.Fatalf("Problems: got %q, want %s line 2: drift_grace and enforcment named", problems, path)
	}
	// Logged once each: the journal is read by people.
	for _, want := range []string{"line 2: drift_grace", "enforcment"} {
		if n := strings.Count(d.Output(), want); n != 1 {
			t.Errorf("the log: got %q %d times, want once:\n%s", want, n, d.Output())
		}
	}
	startSession(t, s, "a", "b", 60, "")
	if got := s.String(t, "Enforcement"); got != "block" {
		t.Fatalf("Enforcement (the good key): got %q, want %q", got, "block")
	}
}
