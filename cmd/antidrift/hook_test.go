package main

import (
	"bytes"
	"strings"
	"testing"
)

// The hook always gives Taskwarrior its task back, first, and exits 0
// with a line saying why nothing followed when antidrift cannot be
// reached; a change that is no start, stop, done or delete asks nothing.
func TestTaskwarriorHookWithoutADaemon(t *testing.T) {
	t.Setenv("DBUS_SESSION_BUS_ADDRESS", "unix:path=/nonexistent/antidrift-hook-test")
	const (
		pending = `{"uuid":"3b57c555-9465-4989-87b5-55cd2b3c1123","description":"Fix \u001b[31mthe bike","status":"pending","modified":"20261203T132730Z"}`
		started = `{"uuid":"3b57c555-9465-4989-87b5-55cd2b3c1123","description":"Fix \u001b[31mthe bike","status":"pending","start":"20261203T132731Z","modified":"20261203T132731Z"}`
		done    = `{"uuid":"3b57c555-9465-4989-87b5-55cd2b3c1123","description":"Fix \u001b[31mthe bike","status":"completed","modified":"20261203T132732Z"}`
		tagged  = `{"uuid":"3b57c555-9465-4989-87b5-55cd2b3c1123","description":"Fix \u001b[31mthe bike","status":"pending","tags":["home"],"modified":"20261203T132733Z"}`
	)
	for _, c := range []struct {
		name, before, after string
		tells               bool
	}{
		{"start", pending, started, true},
		{"stop", started, pending, true},
		{"done", started, done, true},
		{"another change", pending, tagged, false},
		{"not JSON", "garbage", "more garbage", false},
	} {
		t.Run(c.name, func(t *testing.T) {
			var out bytes.Buffer
			if err := taskwarriorHook(strings.NewReader(c.before+"\n"+c.after+"\n"), &out, 1500); err != nil {
				t.Fatalf("the hook returned %v, want nil (exit 0) whatever happens", err)
			}
			lines := strings.Split(strings.TrimRight(out.String(), "\n"), "\n")
			if lines[0] != c.after {
				t.Errorf("the hook's first line: got %q, want the changed task as Taskwarrior sent it", lines[0])
			}
			switch {
			case c.tells && (len(lines) != 2 || !strings.Contains(lines[1], "antidrift is not running")):
				t.Errorf("the hook's feedback: got %q, want one line saying antidrift is not running", lines[1:])
			case !c.tells && len(lines) != 1:
				t.Errorf("the hook for %s: got %q, want the task back and nothing else", c.name, lines)
			}
			if strings.Contains(out.String(), "\x1b") {
				t.Errorf("the hook wrote an escape to the terminal: %q", out.String())
			}
		})
	}
}

// Hostile input from Taskwarrior's side: whatever comes, the hook gives
// back the changed task exactly as it came (the one line when there is no
// second), and exits 0.
func TestTaskwarriorHookHostileInput(t *testing.T) {
	t.Setenv("DBUS_SESSION_BUS_ADDRESS", "unix:path=/nonexistent/antidrift-hook-test")
	huge := strings.Repeat("x", 1<<20)
	extra := `{"uuid":"3b57c555-9465-4989-87b5-55cd2b3c1123","description":"a","status":"pending","start":"20261203T132731Z","annotations":[{"entry":"20261203T132731Z","description":"b"}],"udaX":"\u0000\u202e"}`
	for _, c := range []struct{ name, in, want string }{
		{"two huge lines", huge + "\n" + huge + "y\n", huge + "y"},
		{"extra fields", `{"uuid":"3b57c555-9465-4989-87b5-55cd2b3c1123","status":"pending"}` + "\n" + extra + "\n", extra},
		{"no second line", extra + "\n", extra},
		{"one line without its newline", extra, extra},
		{"a forged uuid", `{"uuid":"rc.data.location=/tmp","status":"pending"}` + "\n" + `{"uuid":"rc.data.location=/tmp","status":"pending","start":"x"}` + "\n", `{"uuid":"rc.data.location=/tmp","status":"pending","start":"x"}`},
		{"nothing", "", ""},
	} {
		t.Run(c.name, func(t *testing.T) {
			var out bytes.Buffer
			if err := taskwarriorHook(strings.NewReader(c.in), &out, 60); err != nil {
				t.Fatalf("the hook returned %v, want nil (exit 0)", err)
			}
			first, _, _ := strings.Cut(out.String(), "\n")
			if first != c.want {
				t.Errorf("the hook's first line: got %d bytes %.80q, want %d bytes %.80q", len(first), first, len(c.want), c.want)
			}
		})
	}
}
