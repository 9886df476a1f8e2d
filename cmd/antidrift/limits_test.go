package main

import (
	"strconv"
	"strings"
	"testing"
)

// An argument far over a limit the CLI knows is said as one just over it
// is: in the CLI's words, exit 2, with the usage line; never as the bus's
// refusal of a message too large to read (LimitsExceeded).
func TestTheLimitsTheCLIKnowsAreCheckedBeforeCalling(t *testing.T) {
	s := startDaemon(t, "")
	for _, c := range []struct {
		args func(text string) []string
		says func(n int) string
	}{
		{func(x string) []string { return []string{"start", x, "--done-when", "y", "--for", "5m"} },
			func(n int) string {
				return "antidrift start: NEXT_ACTION is " + strconv.Itoa(n) + " characters; at most 500 are allowed\n"
			}},
		{func(x string) []string { return []string{"start", "x", "--done-when", x, "--for", "5m"} },
			func(n int) string {
				return "antidrift start: --done-when is " + strconv.Itoa(n) + " characters; at most 500 are allowed\n"
			}},
		{func(x string) []string { return []string{"allow", x} },
			func(int) string { return `antidrift allow: CLASS "` }},
	} {
		for _, n := range []int{501, 100 << 10} {
			text := strings.Repeat("a", n)
			r := s.run(t, c.args(text)...)
			if r.code != exitUsage || !strings.HasPrefix(r.stderr, c.says(n)) || !strings.Contains(r.stderr, "usage: antidrift ") {
				t.Errorf("%s with %d characters: got exit %d and %.300q, want exit 2 and %q with the usage line", c.args("…")[0], n, r.code, r.stderr, c.says(n))
			}
			if strings.Contains(r.stderr, "org.freedesktop.DBus") || strings.Contains(r.stderr, "bytes is more than") {
				t.Errorf("%s with %d characters: got %.300q, want no word of the bus", c.args("…")[0], n, r.stderr)
			}
		}
	}
	if r := s.run(t, "status"); !strings.Contains(r.stdout, "no session") {
		t.Errorf("after the refusals: status got %q, want no session started", r.stdout)
	}
}
