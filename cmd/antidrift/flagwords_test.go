package main

import (
	"bytes"
	"strings"
	"testing"
)

// A flag's value that is not one is said in words, exit 2 with the usage
// line: never strconv's "parse error".
func TestAFlagValueThatIsNotOneIsSaidInWords(t *testing.T) {
	for _, c := range []struct {
		args []string
		says string
	}{
		{[]string{"history", "--limit", "abc"}, "antidrift history: --limit abc: N must be a whole number such as 20 (digits only)\n"},
		{[]string{"history", "--limit=-1"}, "antidrift history: --limit -1: N must be a whole number such as 20 (digits only)\n"},
		{[]string{"history", "--limit", "99999999999999999999999"}, "antidrift history: --limit 99999999999999999999999: N is too large a number\n"},
		{[]string{"start", "x", "--done-when", "y", "--for", "5m", "--quiet=maybe"},
			"antidrift start: --quiet=maybe: a switch is given alone (--quiet), or as --quiet=true or --quiet=false\n"},
	} {
		var stdout, stderr bytes.Buffer
		code := run(c.args, &stdout, &stderr)
		if code != exitUsage || !strings.HasPrefix(stderr.String(), c.says) || strings.Contains(stderr.String(), "parse error") {
			t.Errorf("antidrift %s: got exit %d and %q, want exit 2 and %q", strings.Join(c.args, " "), code, stderr.String(), c.says)
		}
	}
}
