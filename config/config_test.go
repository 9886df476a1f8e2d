package config

import (
	"os"
	"path/filepath"
	"reflect"
	"regexp"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/antidrift/antidrift/service"
)

// goodFile sets every key to a value other than its default.
const goodFile = `# antidrift
enforcement = "block"
allowed_classes = ["Emacs", "kitty"]
drift_grace = "10s"
nudge_repeat = "90s"
break_glass_hold = "1s"
retention = "48h"
idle_after = "1m30s"
private_classes = ["KeePassXC", "Signal"]
redact_titles = ['\d{4}-\d{4}', "(?i)bank"]
evidence = "wlroots"
day_starts = "04:30"
distractions = ["*:*YouTube*", "steam", "url:*.reddit.com", "app:org.mozilla.firefox"]
judge = {kind = "llm", endpoint = "http://localhost:11434/v1", model = "qwen2.5:3b", timeout = "5s", coach_timeout = "20s", site_paths = true}
`

// want is a problem a test expects: the key, the line, and a piece of the
// message. The path is checked against the file the test wrote.
type want struct {
	key  string
	line int
	msg  string
}

func TestLoad(t *testing.T) {
	tests := []struct {
		name     string
		file     *string       // nil: no file at the path
		config   func(*Config) // edits Default() into the expected config
		problems []want
	}{
		{name: "missing file", file: nil},
		{name: "empty file", file: ptr("")},
		{name: "good file", file: ptr(goodFile), config: func(c *Config) {
			c.Enforcement = service.LevelBlock
			c.AllowedClasses = []string{"Emacs", "kitty"}
			c.DriftGrace = 10 * time.Second
			c.NudgeRepeat = 90 * time.Second
			c.BreakGlassHold = time.Second
			c.Retention = 48 * time.Hour
			c.IdleAfter = 90 * time.Second
			c.PrivateClasses = []string{"KeePassXC", "Signal"}
			c.RedactTitles = regexps(`\d{4}-\d{4}`, `(?i)bank`)
			c.Evidence = "wlroots"
			c.DayStarts = 4*time.Hour + 30*time.Minute
			c.Distractions = []string{"*:*YouTube*", "steam", "url:*.reddit.com", "app:org.mozilla.firefox"}
			c.Judge = Judge{Kind: "llm", Endpoint: "http://localhost:11434/v1", Model: "qwen2.5:3b", Timeout: 5 * time.Second, CoachTimeout: 20 * time.Second, SitePaths: true}
		}},
		{name: "judge table with a remote endpoint allowed",
			file: ptr("drift_grace = \"9s\"\n\n[judge]\nkind = \"llm\"\nendpoint = \"https://llm.example.org/v1\"\nallow_remote = true\n"),
			config: func(c *Config) {
				c.DriftGrace = 9 * time.Second
				c.Judge.Kind, c.Judge.Endpoint, c.Judge.AllowRemote = "llm", "https://llm.example.org/v1", true
			}},
		{name: "judge table with a remote endpoint keeps the rules alone",
			file:     ptr("drift_grace = \"9s\"\n\n[judge]\nkind = \"llm\"\nendpoint = \"https://llm.example.org/v1\"\n"),
			config:   func(c *Config) { c.DriftGrace = 9 * time.Second },
			problems: []want{{"judge", 5, `endpoint "https://llm.example.org/v1" is not on this machine (loopback), and window titles are private: set allow_remote = true`}}},
		{name: "a typo inside [judge] is at its own line",
			file:     ptr("[judge]\nkind = \"llm\"\nendpoint = \"http://127.0.0.1:8080/v1\"\nmodle = \"qwen2.5:3b\"\n"),
			problems: []want{{"judge", 4, `modle: unknown key (the keys are kind, endpoint, model, timeout, coach_timeout, allow_remote, site_paths)`}}},
		{name: "a bad value inside a dotted judge key is at its own line",
			file:     ptr("drift_grace = \"9s\"\n\njudge.kind = \"gpt\"\n"),
			config:   func(c *Config) { c.DriftGrace = 9 * time.Second },
			problems: []want{{"judge", 3, `kind: "gpt" is not a judge kind`}}},
		{name: "unicode classes", file: ptr("allowed_classes = [\"Скайп\", \"微信\", \"🦊\"]\n"), config: func(c *Config) {
			c.AllowedClasses = []string{"Скайп", "微信", "🦊"}
		}},
		{name: "256 characters is long enough", file: ptr(`private_classes = ["` + strings.Repeat("é", 256) + `"]`), config: func(c *Config) {
			c.PrivateClasses = []string{strings.Repeat("é", 256)}
		}},
		{name: "syntax error uses no part of the file",
			file:     ptr("enforcement = \"block\"\ndrift_grace = \"9s\"\nretention = \n"),
			problems: []want{{"", 3, "not valid TOML"}}},
		{name: "unknown key, others applied",
			file:     ptr("drift_grace = \"9s\"\nenforcment = \"block\"\n"),
			config:   func(c *Config) { c.DriftGrace = 9 * time.Second },
			problems: []want{{"enforcment", 2, "unknown key (the keys are allowed_classes, "}}},
		{name: "unknown table",
			file:     ptr("retention = \"2h\"\n\n[nudges]\nrepeat = \"1m\"\n"),
			config:   func(c *Config) { c.Retention = 2 * time.Hour },
			problems: []want{{"nudges", 3, "unknown key"}}},
		{name: "unknown dotted key",
			file:     ptr("retention = \"2h\"\n\nnudge.repeat = \"1m\"\nnudge.when = \"always\"\n"),
			config:   func(c *Config) { c.Retention = 2 * time.Hour },
			problems: []want{{"nudge", 3, "unknown key"}}},
		{name: "keys are case sensitive",
			file:     ptr(`Enforcement = "block"`),
			problems: []want{{"Enforcement", 1, "unknown key"}}},
		{name: "every problem, in file order",
			file:   ptr("enforcement = \"strict\"\nidle_after = \"20s\"\nnudge_repeat = \"1s\"\nbogus = 1\n"),
			config: func(c *Config) { c.IdleAfter = 20 * time.Second },
			problems: []want{
				{"enforcement", 1, `"strict" is not a level (use one of observe, warn, block, locked)`},
				{"nudge_repeat", 3, `"1s" is too short: the minimum is 10s, to keep nudges humane`},
				{"bogus", 4, "unknown key"},
			}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			path := filepath.Join(t.TempDir(), "config.toml")
			if tt.file != nil {
				if err := os.WriteFile(path, []byte(*tt.file), 0o600); err != nil {
					t.Fatal(err)
				}
			}
			expect := Default()
			if tt.config != nil {
				tt.config(&expect)
			}
			got, problems := Load(path)
			sameConfig(t, got, expect)
			checkProblems(t, path, problems, tt.problems)
		})
	}
}

// A bad value is reported, with its key and line, and the key keeps its
// default: the config is exactly the one without that key. Each case is the
// good file with the key's line replaced by a bad one, so every other key
// still has to apply.
func TestBadValues(t *testing.T) {
	long := strings.Repeat("x", 300)
	many := `"c"` + strings.Repeat(`, "c"`, 64) // 65 classes
	for _, bad := range []struct{ name, key, value, want string }{
		{"bad level", "enforcement", `"strict"`, `"strict" is not a level`},
		{"level of wrong type", "enforcement", `3`, `want a quoted level such as "warn", got the number 3`},
		{"unknown evidence source", "evidence", `"wayland"`, `"wayland" is not an evidence source (use one of auto, x11, wlroots, kwin, gnome-shell, none)`},
		{"not a duration", "drift_grace", `"5 seconds"`, `"5 seconds" is not a duration (use Go syntax such as 5s, 2m, 1h30m)`},
		{"negative duration", "drift_grace", `"-5s"`, `"-5s" is negative`},
		{"duration as a number", "drift_grace", `5`, `want a quoted duration such as "5s", got the number 5`},
		{"duration as a date", "drift_grace", `2024-01-01`, `want a quoted duration such as "5s", got a date or time`},
		{"inhumane nudges", "nudge_repeat", `"1s"`, `"1s" is too short: the minimum is 10s, to keep nudges humane`},
		{"zero nudges", "nudge_repeat", `"0s"`, `the minimum is 10s`},
		{"negative hold", "break_glass_hold", `"-1m"`, `"-1m" is negative`},
		{"short retention", "retention", `"30m"`, `"30m" is too short: the minimum is 1h`},
		{"short idle", "idle_after", `"500ms"`, `the minimum is 1s`},
		{"bad regex", "redact_titles", `["ok", "a(b"]`, `item 2, "a(b", is not a valid regular expression: missing closing )`},
		{"regex not a string", "redact_titles", `["ok", true]`, `item 2: want a quoted regular expression, got true`},
		{"class too long", "allowed_classes", `["ok", "` + long + `"]`, `item 2 is 300 characters long (at most 256)`},
		{"too many classes", "allowed_classes", `[` + many + `]`, `65 classes is too many (at most 64)`},
		{"empty class", "private_classes", `[""]`, `item 1 is empty`},
		{"class list as string", "allowed_classes", `"Emacs"`, `want a list of quoted strings (each a window class), got the string "Emacs"`},
		{"class list of tables", "allowed_classes", `[{name = "Emacs"}]`, `item 1: want a quoted window class, got a table`},
		{"class list as table", "private_classes", `{a = "b"}`, `got a table`},
		{"day starting at 25:00", "day_starts", `"25:00"`, `"25:00" is not a time of day (use HH:MM, 00:00 to 23:59)`},
		{"day start as a duration", "day_starts", `"4h"`, `"4h" is not a time of day`},
		{"day start as a number", "day_starts", `4`, `want a quoted time of day such as "04:00", got the number 4`},
		{"bad title glob", "allowed_classes", `["Emacs", "firefox:*[GitHub"]`, `item 2, "firefox:*[GitHub", is not a valid rule: the title pattern has a [ that is never closed (write \[ for a literal bracket); an entry is CLASS or CLASS:TITLE-GLOB`},
		{"bad distraction", "distractions", `[":*YouTube*"]`, `item 1, ":*YouTube*", is not a valid rule: the class before ':' is empty (use * for any class)`},
		{"empty distraction title", "distractions", `["steam:"]`, `the title pattern after ':' is empty`},
		{"judge kind", "judge", `{kind = "gpt"}`, `kind: "gpt" is not a judge kind (use one of rules, llm)`},
		{"judge unknown key", "judge", `{kind = "llm", url = "http://127.0.0.1/v1"}`, `url: unknown key (the keys are kind, endpoint, model, timeout, coach_timeout, allow_remote, site_paths)`},
		{"judge site_paths", "judge", `{kind = "llm", site_paths = 1}`, `site_paths: want true or false, got the number 1`},
		{"url rule with a scheme", "distractions", `["url:https://www.youtube.com"]`, `item 1, "url:https://www.youtube.com", is not a valid rule: it names a scheme`},
		{"url rule with a query", "allowed_classes", `["url:youtube.com/watch?v=*"]`, `never keeps a page's query`},
		{"empty app rule", "allowed_classes", `["app:.desktop"]`, `item 1, "app:.desktop", is not a valid rule: the desktop id after app: is empty (e.g. app:org.mozilla.firefox); an entry is CLASS`},
		{"judge timeout", "judge", `{kind = "llm", timeout = "3"}`, `timeout: "3" is not a duration`},
		{"judge allow_remote", "judge", `{kind = "llm", allow_remote = "yes"}`, `allow_remote: want true or false, got the string "yes"`},
		{"judge remote endpoint", "judge", `{kind = "llm", endpoint = "http://10.0.0.2:8080/v1"}`, `set allow_remote = true to send them there`},
		{"judge endpoint not a URL", "judge", `{kind = "llm", endpoint = "localhost:8080"}`, `must start with http:// or https://`},
		{"judge as a string", "judge", `"llm"`, `want a table ([judge] with kind, endpoint, model, timeout, coach_timeout, allow_remote, site_paths), got the string "llm"`},
		// A huge value is quoted by its first 80 characters and its size.
		{"huge duration", "drift_grace", `"` + strings.Repeat("9", 5000) + `s"`, `"` + strings.Repeat("9", 80) + `"… (5001 bytes in all) is not a duration`},
		{"huge string for a list", "allowed_classes", `"` + strings.Repeat("x", 5000) + `"`, `got the string "` + strings.Repeat("x", 80) + `"… (5000 bytes in all)`},
	} {
		t.Run(bad.name, func(t *testing.T) {
			var rest []string
			for _, line := range strings.Split(goodFile, "\n") {
				if !strings.HasPrefix(line, bad.key+" =") {
					rest = append(rest, line)
				}
			}
			expect, problems := Parse("rest.toml", []byte(strings.Join(rest, "\n")))
			if len(problems) != 0 || len(rest) == len(strings.Split(goodFile, "\n")) {
				t.Fatalf("the good file without %s: got %d of %d lines and problems %v, want fewer lines and no problems", bad.key, len(rest), len(strings.Split(goodFile, "\n")), problems)
			}
			// The bad line goes in the middle, so lines after it count too.
			file := slices.Insert(rest, 3, bad.key+" = "+bad.value)
			path := filepath.Join(t.TempDir(), "config.toml")
			if err := os.WriteFile(path, []byte(strings.Join(file, "\n")), 0o600); err != nil {
				t.Fatal(err)
			}
			got, problems := Load(path)
			sameConfig(t, got, expect)
			checkProblems(t, path, problems, []want{{bad.key, 4, bad.want}})
		})
	}
}

func TestLoadUnreadable(t *testing.T) {
	dir := t.TempDir()
	t.Run("directory", func(t *testing.T) {
		got, problems := Load(dir)
		sameConfig(t, got, Default())
		checkProblems(t, dir, problems, []want{{"", 0, "cannot read the file (is a directory), so none of it is used"}})
	})
	t.Run("permission denied", func(t *testing.T) {
		if os.Geteuid() == 0 {
			t.Skip("root reads any file")
		}
		path := filepath.Join(dir, "config.toml")
		if err := os.WriteFile(path, []byte(goodFile), 0o000); err != nil {
			t.Fatal(err)
		}
		got, problems := Load(path)
		sameConfig(t, got, Default())
		checkProblems(t, path, problems, []want{{"", 0, "permission denied"}})
	})
}

// A file with many problems reports the first maxProblems and a count of
// the rest, rather than burying the log.
func TestProblemsAreCapped(t *testing.T) {
	var b strings.Builder
	for i := range maxProblems + 5 {
		b.WriteString("unknown_" + strings.Repeat("x", i) + " = 1\n")
	}
	b.WriteString(`drift_grace = "1s"`)
	got, problems := Parse("c.toml", []byte(b.String()))
	if got.DriftGrace != time.Second {
		t.Errorf("DriftGrace: got %v, want %v (the keys after the cap still apply)", got.DriftGrace, time.Second)
	}
	if len(problems) != maxProblems+1 {
		t.Fatalf("got %d problems, want %d", len(problems), maxProblems+1)
	}
	if p := problems[maxProblems-1]; p.Line != maxProblems {
		t.Errorf("last shown problem %v, want line %d", p, maxProblems)
	}
	if s := problems[maxProblems].String(); s != "c.toml: 5 more problems not shown" {
		t.Errorf("summary: got %q, want %q", s, "c.toml: 5 more problems not shown")
	}
}

func TestProblemString(t *testing.T) {
	for _, tt := range []struct {
		p    Problem
		want string
	}{
		{Problem{"config.toml", 4, "drift_grace", "bad"}, "config.toml line 4: drift_grace: bad"},
		{Problem{"/c.toml", 0, "a.b", "bad"}, "/c.toml: a.b: bad"},
		{Problem{"/c.toml", 2, "", "not valid TOML"}, "/c.toml line 2: not valid TOML"},
		{Problem{"/c.toml", 0, "", "cannot read"}, "/c.toml: cannot read"},
	} {
		if got := tt.p.String(); got != tt.want {
			t.Errorf("%#v.String() = %q, want %q", tt.p, got, tt.want)
		}
	}
	// The example from the package's brief, end to end.
	_, problems := Parse("config.toml", []byte("\n\n\ndrift_grace = \"5 seconds\"\n"))
	want := `config.toml line 4: drift_grace: "5 seconds" is not a duration (use Go syntax such as 5s, 2m, 1h30m)`
	if len(problems) != 1 || problems[0].String() != want {
		t.Errorf("problems = %v, want [%s]", problems, want)
	}
}

func TestDefaultPath(t *testing.T) {
	t.Setenv("HOME", "/home/me")
	for _, tt := range []struct{ xdg, want string }{
		{"", "/home/me/.config/antidrift/config.toml"},
		{"/xdg", "/xdg/antidrift/config.toml"},
		{"relative/dir", "/home/me/.config/antidrift/config.toml"},
	} {
		t.Setenv("XDG_CONFIG_HOME", tt.xdg)
		got, err := DefaultPath()
		if err != nil || got != tt.want {
			t.Errorf("XDG_CONFIG_HOME=%q: DefaultPath() = %q, %v; want %q", tt.xdg, got, err, tt.want)
		}
	}
	t.Setenv("XDG_CONFIG_HOME", "")
	t.Setenv("HOME", "")
	if got, err := DefaultPath(); err == nil {
		t.Errorf("with no HOME: DefaultPath() = %q, want an error", got)
	}
}

func FuzzParse(f *testing.F) {
	f.Add([]byte(goodFile)) // the rest of the seeds are in testdata/fuzz/FuzzParse
	f.Fuzz(func(t *testing.T, data []byte) {
		c, problems := Parse("fuzz.toml", data)
		checkValid(t, c)
		for _, p := range problems {
			if p.Path != "fuzz.toml" || p.Msg == "" || p.Line < 0 {
				t.Errorf("problem: got %#v, want Path %q, a message and a line >= 0", p, "fuzz.toml")
			}
		}
		if len(problems) > maxProblems+1 {
			t.Errorf("problems: got %d, want at most %d (the cap and its summary)", len(problems), maxProblems+1)
		}
	})
}

// checkValid fails t unless c obeys the rules of the file format, stated
// here independently of the code that enforces them.
func checkValid(t *testing.T, c Config) {
	t.Helper()
	if !slices.Contains(service.Levels, c.Enforcement) {
		t.Errorf("Enforcement: got %q, want one of %q", c.Enforcement, service.Levels)
	}
	for _, d := range []struct {
		name     string
		got, min time.Duration
	}{
		{"DriftGrace", c.DriftGrace, 0},
		{"NudgeRepeat", c.NudgeRepeat, 10 * time.Second},
		{"BreakGlassHold", c.BreakGlassHold, 0},
		{"Retention", c.Retention, time.Hour},
		{"IdleAfter", c.IdleAfter, time.Second},
	} {
		if d.got < d.min {
			t.Errorf("%s: got %v, want at least %v", d.name, d.got, d.min)
		}
	}
	for _, list := range [][]string{c.AllowedClasses, c.PrivateClasses} {
		if len(list) > 64 {
			t.Errorf("classes: got %d, want at most 64", len(list))
		}
		for _, s := range list {
			if n := len([]rune(s)); n < 1 || n > 256 {
				t.Errorf("class %q is %d characters, want 1 to 256", s, n)
			}
		}
	}
	for i, re := range c.RedactTitles {
		if re == nil {
			t.Errorf("RedactTitles[%d]: got nil, want a regexp", i)
		}
	}
}

// sameConfig fails t unless got and want are equal, comparing regexps by
// their source.
func sameConfig(t *testing.T, got, want Config) {
	t.Helper()
	checkValid(t, got)
	if g, w := sources(got.RedactTitles), sources(want.RedactTitles); !slices.Equal(g, w) {
		t.Errorf("RedactTitles = %q, want %q", g, w)
	}
	got.RedactTitles, want.RedactTitles = nil, nil
	if !reflect.DeepEqual(got, want) {
		t.Errorf("config =\n%+v\nwant\n%+v", got, want)
	}
}

func checkProblems(t *testing.T, path string, got []Problem, want []want) {
	t.Helper()
	if len(got) != len(want) {
		t.Fatalf("got %d problems %v, want %d %v", len(got), got, len(want), want)
	}
	for i, p := range got {
		w := want[i]
		if p.Path != path || p.Key != w.key || p.Line != w.line || !strings.Contains(p.Msg, w.msg) {
			t.Errorf("problem %d = %#v, want key %q line %d message containing %q", i, p, w.key, w.line, w.msg)
		}
		if !strings.HasPrefix(p.String(), path) {
			t.Errorf("problem %d: got %q, want it to start with the file %q", i, p.String(), path)
		}
	}
}

func regexps(exprs ...string) []*regexp.Regexp {
	out := make([]*regexp.Regexp, len(exprs))
	for i, e := range exprs {
		out[i] = regexp.MustCompile(e)
	}
	return out
}

func sources(res []*regexp.Regexp) []string {
	out := make([]string, len(res))
	for i, re := range res {
		out[i] = re.String()
	}
	return out
}

func ptr(s string) *string { return &s }
