package main

import (
	"bufio"
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"maps"
	"os"
	"os/exec"
	"path/filepath"
	"slices"
	"strconv"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/antidrift/antidrift/internal/testsupport/testenv"
)

// The tests run antidrift as a person would, as a real process, against a
// real antidriftd on a private bus.

func TestMain(m *testing.M) { os.Exit(testenv.Main(m)) }

// wait bounds every wait for something to happen. It only matters when
// something is broken, so it is generous: CI machines are small and busy.
const wait = 30 * time.Second

// result is what a person sees of one run of the CLI.
type result struct {
	args           []string
	stdout, stderr string
	code           int
}

func (r result) String() string {
	return "antidrift " + strings.Join(r.args, " ") + ": exit " + strconv.Itoa(r.code) +
		"\n--- stdout\n" + r.stdout + "--- stderr\n" + r.stderr
}

// cli runs antidrift with env (a bus's Env(), usually) and args.
func cli(t *testing.T, env []string, args ...string) result {
	t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), wait)
	defer cancel()
	cmd := exec.CommandContext(ctx, testenv.Binary(t, "antidrift"), args...)
	cmd.Env = env
	var stdout, stderr bytes.Buffer
	cmd.Stdout, cmd.Stderr = &stdout, &stderr
	err := cmd.Run()
	if ctx.Err() != nil {
		t.Fatalf("antidrift %v did not finish within %v", args, wait)
	}
	r := result{args: args, stdout: stdout.String(), stderr: stderr.String()}
	var exit *exec.ExitError
	switch {
	case errors.As(err, &exit):
		r.code = exit.ExitCode()
	case err != nil:
		t.Fatalf("running antidrift %v: %v", args, err)
	}
	return r
}

// session is a daemon on its own bus, driven through the CLI.
type session struct {
	d *testenv.Daemon
}

// startDaemon starts antidriftd on a fresh bus. configTOML, if not empty, is
// its config file.
func startDaemon(t *testing.T, configTOML string, extraEnv ...string) *session {
	t.Helper()
	testenv.Need(t, "dbus-daemon", "dbus-send")
	if configTOML != "" {
		cfgHome := t.TempDir()
		writeFile(t, filepath.Join(cfgHome, "antidrift", "config.toml"), configTOML)
		extraEnv = append(extraEnv, "XDG_CONFIG_HOME="+cfgHome)
	}
	bus := testenv.StartBus(t)
	return &session{d: testenv.StartDaemon(t, bus, filepath.Join(t.TempDir(), "state"), extraEnv...)}
}

func writeFile(t *testing.T, path, content string) {
	t.Helper()
	if err := os.MkdirAll(filepath.Dir(path), 0o700); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(path, []byte(content), 0o600); err != nil {
		t.Fatal(err)
	}
}

func (s *session) run(t *testing.T, args ...string) result {
	t.Helper()
	return cli(t, s.d.Bus.Env(), args...)
}

// ok runs the CLI and fails the test unless it exits 0; it returns stdout.
func (s *session) ok(t *testing.T, args ...string) string {
	t.Helper()
	r := s.run(t, args...)
	if r.code != 0 {
		t.Fatalf("exit code: got %v, want 0\n%s", r, s.d.Output())
	}
	return r.stdout
}

// okJSON runs the CLI with --json, which must exit 0, and decodes stdout.
func okJSON[T any](t *testing.T, s *session, args ...string) T {
	t.Helper()
	out := s.ok(t, append(args, "--json")...)
	var v T
	if err := json.Unmarshal([]byte(out), &v); err != nil {
		t.Fatalf("antidrift %v --json: got\n%s\nwant JSON: %v", args, out, err)
	}
	return v
}

// status is `antidrift status --json`, decoded.
func (s *session) status(t *testing.T) map[string]any {
	t.Helper()
	return okJSON[map[string]any](t, s, "status")
}

// waitForStatus waits until `antidrift status --json` reads each value in
// want (as JSON decodes: strings, float64 numbers), and fails naming what
// it last read of those keys.
func (s *session) waitForStatus(t *testing.T, what string, want map[string]any) {
	t.Helper()
	testenv.WaitFor(t, wait, what+" (status --json "+fmt.Sprint(want)+")", func() map[string]any {
		return pick(s.status(t), slices.Collect(maps.Keys(want))...)
	}, func(got map[string]any) bool {
		for key, v := range want {
			if got[key] != v {
				return false
			}
		}
		return true
	})
}

// pick is the keys of a decoded status, for a wait to show what it saw.
func pick(st map[string]any, keys ...string) map[string]any {
	out := make(map[string]any, len(keys))
	for _, k := range keys {
		out[k] = st[k]
	}
	return out
}

// contains fails unless text has every want.
func contains(t *testing.T, what, text string, wants ...string) {
	t.Helper()
	for _, w := range wants {
		if !strings.Contains(text, w) {
			t.Errorf("%s: got\n%s\nwant it to contain %q", what, text, w)
		}
	}
}

// follower is a long-running `antidrift status --follow`, read line by line.
type follower struct {
	cmd    *exec.Cmd
	lines  chan string
	stderr *bytes.Buffer
	done   chan struct{} // closed once stdout hit EOF and the process was reaped
}

func startFollow(t *testing.T, env []string, args ...string) *follower {
	t.Helper()
	cmd := exec.Command(testenv.Binary(t, "antidrift"), append([]string{"status", "--follow"}, args...)...)
	cmd.Env = env
	f := &follower{cmd: cmd, lines: make(chan string, 1000), stderr: &bytes.Buffer{}, done: make(chan struct{})}
	cmd.Stderr = f.stderr
	out, err := cmd.StdoutPipe()
	if err != nil {
		t.Fatal(err)
	}
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	go func() {
		sc := bufio.NewScanner(out)
		for sc.Scan() {
			f.lines <- sc.Text()
		}
		close(f.lines)
		cmd.Wait() // only after EOF: Wait closes the pipe
		close(f.done)
	}()
	t.Cleanup(func() {
		cmd.Process.Kill()
		f.drain()
	})
	return f
}

// drain discards lines until the process is gone.
func (f *follower) drain() {
	for range f.lines {
	}
	<-f.done
}

// next returns the first line, from now on, for which match is true. Every
// line read is handed to match, so match can also check each one (e.g. that
// it parses).
func (f *follower) next(t *testing.T, what string, match func(line string) bool) string {
	t.Helper()
	timeout := time.After(wait)
	var seen []string
	for {
		select {
		case line, ok := <-f.lines:
			if !ok {
				<-f.done
				t.Fatalf("antidrift status --follow ended: got\n%s\nstderr:\n%s\nwant a line for %s first", strings.Join(seen, "\n"), f.stderr, what)
			}
			seen = append(seen, line)
			if match(line) {
				return line
			}
		case <-timeout:
			t.Fatalf("antidrift status --follow within %v: got\n%s\nwant a line for %s", wait, strings.Join(seen, "\n"), what)
		}
	}
}

// stop sends sig and returns the exit code.
func (f *follower) stop(t *testing.T, sig syscall.Signal) int {
	t.Helper()
	f.cmd.Process.Signal(sig)
	exited := make(chan struct{})
	go func() { f.drain(); close(exited) }()
	select {
	case <-exited:
	case <-time.After(wait):
		t.Fatalf("antidrift status --follow did not exit within %v of %v", wait, sig)
	}
	return f.cmd.ProcessState.ExitCode()
}
