// Package config reads antidrift's config file,
// $XDG_CONFIG_HOME/antidrift/config.toml.
//
// The file is edited by hand, and a mistake in it must never keep the daemon
// from starting: Load always returns a usable Config, and reports what was
// wrong as Problems, sentences for a person that the daemon logs and shows.
package config

import (
	"errors"
	"fmt"
	"io/fs"
	"maps"
	"os"
	"path/filepath"
	"regexp"
	"regexp/syntax"
	"slices"
	"strings"
	"time"
	"unicode/utf8"

	"github.com/BurntSushi/toml"

	"github.com/antidrift/antidrift/internal/endpoint"
	"github.com/antidrift/antidrift/service"
)

// Config is the daemon's settings. The zero value is not useful; start from
// Default.
type Config struct {
	Enforcement    service.Level    // enforcement
	AllowedClasses []string         // allowed_classes: used when Start passes none; CLASS or CLASS:TITLE-GLOB
	Distractions   []string         // distractions: always off task, even in an allowed class
	DriftGrace     time.Duration    // drift_grace
	NudgeRepeat    time.Duration    // nudge_repeat
	BreakGlassHold time.Duration    // break_glass_hold: wait before a locked session may be abandoned
	Retention      time.Duration    // retention: age at which raw session logs are pruned
	IdleAfter      time.Duration    // idle_after: no input for this long is away
	PrivateClasses []string         // private_classes (used by a later feature)
	RedactTitles   []*regexp.Regexp // redact_titles
	Evidence       string           // evidence: one of EvidenceSources
	DayStarts      time.Duration    // day_starts: when a report's day begins, after midnight
	Judge          Judge            // [judge]: who judges the windows no rule decides
	// SyncDir is sync_dir: the folder Syncthing shares between this
	// person's machines, where the daemon publishes a copy of its sealed
	// chain and the report reads the other machines' ("" means off).
	// Absolute, with a leading ~/ expanded.
	SyncDir string
	// SyncTitles is sync_titles: whether the published copy keeps the
	// sealed summaries' window titles (the chain itself, byte for byte)
	// or only totals per window class (off by default: titles leave this
	// machine only when the person says so).
	SyncTitles bool
	// DeviceName is device_name: this machine's label in reports of many
	// machines; "" means the hostname.
	DeviceName string
	// Quiet is quiet: every session is quiet (Do Not Disturb while it is
	// active) unless its Start says otherwise (antidrift start --no-quiet).
	Quiet bool
	// FlatpakBrowsers is flatpak_browsers: believe the tab reports of a
	// native host that xdg-native-messaging-proxy started (a Flatpak
	// Firefox's) as those of a host its browser started. Off by default:
	// the proxy starts a host for any program that asks it over the bus.
	FlatpakBrowsers bool
	// Tasks is [tasks]: the task managers a session may start from.
	Tasks Tasks
}

// Judge is the [judge] table: "rules" (a window no rule decides is off
// task) or "llm" (such a window is asked of a model on an
// OpenAI-compatible server).
type Judge struct {
	Kind     string        // kind: one of JudgeKinds
	Endpoint string        // endpoint: the server's base URL
	Model    string        // model: passed through; "" for servers that serve one
	Timeout  time.Duration // timeout: per request
	// CoachTimeout (coach_timeout) bounds one request of the coach, which
	// asks the same model for a proposal: longer than a verdict's.
	CoachTimeout time.Duration
	AllowRemote  bool // allow_remote: permit an endpoint off this machine
	// SitePaths tells the model a browser page's path beside its host
	// (site_paths); by default it hears the host only.
	SitePaths bool
}

// JudgeKinds are the values of judge.kind.
var JudgeKinds = []string{"rules", "llm"}

// EvidenceSources are the values of the evidence key: where the daemon
// sees windows and acts on them. "auto" picks by the session's displays
// and the compositor's interfaces (see cmd/antidriftd).
var EvidenceSources = []string{"auto", "x11", "wlroots", "kwin", "gnome-shell", "none"}

// Default is the config of a missing or empty file.
func Default() Config {
	return Config{
		Enforcement:    service.LevelWarn,
		DriftGrace:     5 * time.Second,
		NudgeRepeat:    2 * time.Minute,
		BreakGlassHold: 5 * time.Minute,
		Retention:      720 * time.Hour,
		IdleAfter:      3 * time.Minute,
		Evidence:       "auto",
		Judge: Judge{
			Kind:     "rules",
			Endpoint: "http://127.0.0.1:8080/v1",
			Timeout:  3 * time.Second, // llmjudge.DefaultTimeout, which a test holds it to
			// llmjudge.DefaultCoachTimeout; under the 40 s the CLI waits for a call.
			CoachTimeout: 30 * time.Second,
		},
	}
}

// Limits on class lists. A class is matched against WM_CLASS, which is short;
// the caps keep a pasted-in mistake from becoming a huge allow list.
const (
	maxClasses  = 64
	maxClassLen = 256 // characters (runes), not bytes
)

// maxProblems caps the problems one file reports. Past a screenful a person
// has enough to go on (the file is likely not a config file at all), and
// finding each problem's line costs a pass over the file.
const maxProblems = 20

// DefaultPath is where the config file lives when --config doesn't say:
// $XDG_CONFIG_HOME/antidrift/config.toml, or ~/.config/antidrift/config.toml
// when XDG_CONFIG_HOME is unset or relative (the XDG spec says to ignore a
// relative one).
func DefaultPath() (string, error) {
	dir := os.Getenv("XDG_CONFIG_HOME")
	if !filepath.IsAbs(dir) {
		home, err := os.UserHomeDir()
		if err != nil {
			return "", fmt.Errorf("config: cannot find the config directory: %w", err)
		}
		dir = filepath.Join(home, ".config")
	}
	return filepath.Join(dir, "antidrift", "config.toml"), nil
}

// Problem is one thing wrong with the file, for a person:
//
//	/home/me/.config/antidrift/config.toml line 4: drift_grace: "5 seconds" is not a duration (use Go syntax such as 5s, 2m, 1h30m)
type Problem struct {
	Path string // the file, as given to Load or Parse
	Line int    // 1-based; 0 when unknown
	Key  string // the top-level key at fault; empty for the file as a whole
	Msg  string
}

func (p Problem) String() string {
	var b strings.Builder
	b.WriteString(p.Path)
	if p.Line > 0 {
		fmt.Fprintf(&b, " line %d", p.Line)
	}
	b.WriteString(": ")
	if p.Key != "" {
		b.WriteString(p.Key + ": ")
	}
	b.WriteString(p.Msg)
	return b.String()
}

// Load reads the config file at path.
//
// A missing file is not a problem: it means Default(). Otherwise Load never
// fails, it falls back:
//   - an unreadable file (permission denied, a directory) or one that is not
//     valid TOML gives Default() for everything, with one problem;
//   - an unknown key is reported and ignored;
//   - a key with a bad value (wrong type, out of bounds, a regex that does
//     not compile) is reported and keeps its default, while every other key
//     keeps its good value, so one typo doesn't cost the rest of the file.
//     A list key is taken whole or not at all: one bad item keeps the
//     default for the entire list.
func Load(path string) (Config, []Problem) {
	data, missing, p := readTOMLFile(path)
	if missing {
		return Default(), nil
	}
	if p != nil {
		return Default(), []Problem{*p}
	}
	return Parse(path, data)
}

// Parse is Load on the file's contents; path is only used in problems.
func Parse(path string, data []byte) (Config, []Problem) {
	values, md, p := decodeTOML(path, data)
	if p != nil {
		return Default(), []Problem{*p}
	}

	c := Default()
	r := reporter{path: path, md: &md, values: values}
	for _, full := range topKeys(md) {
		key := full[0]
		set, known := fields[key]
		if !known {
			r.add(full, "unknown key (the keys are "+knownKeys+")")
			continue
		}
		var v any
		if err := md.PrimitiveDecode(values[key], &v); err != nil {
			r.add(full, err.Error())
			continue
		}
		if err := set(&c, v); err != nil {
			// A problem inside a table is at its own key's line, not the
			// table's ([judge] on line 1, its typo on line 4).
			// A table in a table ([tasks.caldav]) nests them.
			var in *keyError
			if errors.As(err, &in) {
				full = toml.Key{key}
				for e := error(err); errors.As(e, &in); e = in.err {
					full = append(full, in.key)
				}
			}
			r.add(full, err.Error())
		}
	}
	return c, r.done()
}

// topKeys lists the file's top-level keys in the order they first appear,
// so problems read top to bottom. Each comes as the first full key under it
// (a.b for a.b = 1), which is what has a line number.
func topKeys(md toml.MetaData) []toml.Key {
	var keys []toml.Key
	seen := make(map[string]bool)
	for _, k := range md.Keys() {
		if !seen[k[0]] {
			seen[k[0]] = true
			keys = append(keys, k)
		}
	}
	return keys
}

// knownKeys lists fields' keys for the unknown-key message.
var knownKeys = strings.Join(slices.Sorted(maps.Keys(fields)), ", ")

// A field checks one key's value and, when it is good, stores it in c. When
// it is not, it leaves c alone and returns why, in words for a person (the
// key name is added by the caller).
type field func(c *Config, v any) error

// fields are the keys a config file may have.
var fields = map[string]field{
	"enforcement":      level,
	"allowed_classes":  rules(func(c *Config) *[]string { return &c.AllowedClasses }),
	"distractions":     rules(func(c *Config) *[]string { return &c.Distractions }),
	"judge":            judge,
	"drift_grace":      duration(func(c *Config) *time.Duration { return &c.DriftGrace }, "0s", ""),
	"nudge_repeat":     duration(func(c *Config) *time.Duration { return &c.NudgeRepeat }, "10s", "to keep nudges humane"),
	"break_glass_hold": duration(func(c *Config) *time.Duration { return &c.BreakGlassHold }, "0s", ""),
	"retention":        duration(func(c *Config) *time.Duration { return &c.Retention }, "1h", ""),
	"idle_after":       duration(func(c *Config) *time.Duration { return &c.IdleAfter }, "1s", "below that every pause between keystrokes would be away"),
	"private_classes":  classes(func(c *Config) *[]string { return &c.PrivateClasses }),
	"redact_titles":    redactTitles,
	"evidence":         evidence,
	"day_starts":       dayStarts,
	"sync_dir":         syncDir,
	"sync_titles":      flag(func(c *Config) *bool { return &c.SyncTitles }),
	"device_name":      deviceName,
	"quiet":            flag(func(c *Config) *bool { return &c.Quiet }),
	"flatpak_browsers": flag(func(c *Config) *bool { return &c.FlatpakBrowsers }),
	"tasks":            tasks,
}

// flag is a true-or-false key.
func flag(to func(*Config) *bool) field {
	return func(c *Config, v any) error {
		b, ok := v.(bool)
		if !ok {
			return fmt.Errorf("want true or false, got %s", describe(v))
		}
		*to(c) = b
		return nil
	}
}

// dayStarts is a time of day, "HH:MM": a report's days begin then rather
// than at midnight, so a night owl's 01:00 belongs to the day before.
func dayStarts(c *Config, v any) error {
	s, err := text(v, `a quoted time of day such as "04:00"`)
	if err != nil {
		return err
	}
	t, err := time.Parse("15:04", s)
	if err != nil {
		return fmt.Errorf("%s is not a time of day (use HH:MM, 00:00 to 23:59)", service.Quote(s))
	}
	c.DayStarts = time.Duration(t.Hour())*time.Hour + time.Duration(t.Minute())*time.Minute
	return nil
}

func level(c *Config, v any) error {
	s, err := oneOf(v, "level", `"warn"`, service.LevelNames())
	if err == nil {
		c.Enforcement = service.Level(s)
	}
	return err
}

func evidence(c *Config, v any) error {
	s, err := oneOf(v, "evidence source", `"auto"`, EvidenceSources)
	if err == nil {
		c.Evidence = s
	}
	return err
}

// oneOf is v as one of names, or an error saying what was wanted: a quoted
// what such as example.
func oneOf(v any, what, example string, names []string) (string, error) {
	s, err := text(v, "a quoted "+what+" such as "+example)
	if err != nil {
		return "", err
	}
	if !slices.Contains(names, s) {
		return "", fmt.Errorf("%s is not %s (use one of %s)", service.Quote(s), article(what), strings.Join(names, ", "))
	}
	return s, nil
}

// duration is a key holding a Go duration string of at least least (itself
// a duration string, so messages show it as written rather than as
// time.Duration prints it, 1h0m0s). why, if set, tells a person the reason
// for the floor.
func duration(dst func(*Config) *time.Duration, least, why string) field {
	floor, err := time.ParseDuration(least)
	if err != nil {
		panic("config: bad minimum " + least)
	}
	return func(c *Config, v any) error {
		s, err := text(v, `a quoted duration such as "5s"`)
		if err != nil {
			return err
		}
		d, err := time.ParseDuration(s)
		switch {
		case err != nil:
			return fmt.Errorf("%s is not a duration (use Go syntax such as 5s, 2m, 1h30m)", service.Quote(s))
		case d < 0 && floor == 0:
			return fmt.Errorf("%s is negative", service.Quote(s))
		case d < floor && why != "":
			return fmt.Errorf("%s is too short: the minimum is %s, %s", service.Quote(s), least, why)
		case d < floor:
			return fmt.Errorf("%s is too short: the minimum is %s", service.Quote(s), least)
		}
		*dst(c) = d
		return nil
	}
}

// classes is a key holding a list of window classes.
func classes(dst func(*Config) *[]string) field {
	return func(c *Config, v any) error {
		list, err := classList(v)
		if err == nil {
			*dst(c) = list
		}
		return err
	}
}

// classList is v as at most maxClasses strings, each 1 to maxClassLen
// characters.
func classList(v any) ([]string, error) {
	list, err := texts(v, "window class")
	if err != nil {
		return nil, err
	}
	if len(list) > maxClasses {
		return nil, fmt.Errorf("%d classes is too many (at most %d)", len(list), maxClasses)
	}
	for i, s := range list {
		switch n := utf8.RuneCountInString(s); {
		case n == 0:
			return nil, fmt.Errorf("item %d is empty", i+1)
		case n > maxClassLen:
			return nil, fmt.Errorf("item %d is %d characters long (at most %d)", i+1, n, maxClassLen)
		}
	}
	return list, nil
}

// rules is a key holding a list of rules (CLASS or CLASS:TITLE-GLOB), each
// checked as the core checks Start's allowed_classes.
func rules(dst func(*Config) *[]string) field {
	return func(c *Config, v any) error {
		list, err := classList(v)
		if err != nil {
			return err
		}
		for i, s := range list {
			if _, err := service.ParseRule(s); err != nil {
				return fmt.Errorf("item %d, %s, is not a valid rule: %v; %s", i+1, service.Quote(s), err, service.RuleSyntax)
			}
		}
		*dst(c) = list
		return nil
	}
}

// judgeKeys are the keys of the [judge] table.
var judgeKeys = []string{"kind", "endpoint", "model", "timeout", "coach_timeout", "allow_remote", "site_paths"}

// judge is the [judge] table, taken whole or not at all: a half-applied
// judge could send titles somewhere the person did not mean to.
func judge(c *Config, v any) error {
	table, ok := v.(map[string]any)
	if !ok {
		return fmt.Errorf("want a table ([judge] with %s), got %s", strings.Join(judgeKeys, ", "), describe(v))
	}
	j := Default().Judge
	for _, k := range slices.Sorted(maps.Keys(table)) {
		var err error
		switch k {
		case "kind":
			j.Kind, err = oneOf(table[k], "judge kind", `"llm"`, JudgeKinds)
		case "endpoint":
			j.Endpoint, err = text(table[k], `a quoted URL such as "http://127.0.0.1:8080/v1"`)
		case "model":
			j.Model, err = text(table[k], `a quoted model name such as "qwen2.5:3b"`)
		case "timeout":
			err = duration(func(*Config) *time.Duration { return &j.Timeout }, "100ms", "")(c, table[k])
		case "coach_timeout":
			err = duration(func(*Config) *time.Duration { return &j.CoachTimeout }, "1s", "")(c, table[k])
		case "allow_remote":
			var isBool bool
			if j.AllowRemote, isBool = table[k].(bool); !isBool {
				err = fmt.Errorf("want true or false, got %s", describe(table[k]))
			}
		case "site_paths":
			var isBool bool
			if j.SitePaths, isBool = table[k].(bool); !isBool {
				err = fmt.Errorf("want true or false, got %s", describe(table[k]))
			}
		default:
			err = fmt.Errorf("unknown key (the keys are %s)", strings.Join(judgeKeys, ", "))
		}
		if err != nil {
			return &keyError{key: k, err: err}
		}
	}
	if _, err := endpoint.Check(j.Endpoint, j.AllowRemote); err != nil {
		if _, set := table["endpoint"]; set {
			return &keyError{key: "endpoint", err: err, quiet: true}
		}
		return err
	}
	c.Judge = j
	return nil
}

// keyError is a problem with key, a key inside a table: its message names
// the key (unless quiet: the message already does), and its line is the
// key's own.
type keyError struct {
	key   string
	err   error
	quiet bool
}

func (e *keyError) Error() string {
	if e.quiet {
		return e.err.Error()
	}
	return e.key + ": " + e.err.Error()
}

func redactTitles(c *Config, v any) error {
	list, err := texts(v, "regular expression")
	if err != nil {
		return err
	}
	res := make([]*regexp.Regexp, len(list))
	for i, s := range list {
		res[i], err = regexp.Compile(s)
		if err != nil {
			var se *syntax.Error
			if errors.As(err, &se) {
				err = errors.New(se.Code.String()) // Error() repeats the expression
			}
			return fmt.Errorf("item %d, %s, is not a valid regular expression: %v", i+1, service.Quote(s), err)
		}
	}
	c.RedactTitles = res
	return nil
}

// text is v as a string, or an error saying what was wanted instead.
func text(v any, want string) (string, error) {
	s, ok := v.(string)
	if !ok {
		return "", fmt.Errorf("want %s, got %s", want, describe(v))
	}
	return s, nil
}

// texts is v as a list of strings, or an error naming the first item that
// is not one. item names what each string is, for the message.
func texts(v any, item string) ([]string, error) {
	items, ok := v.([]any)
	if !ok {
		return nil, fmt.Errorf("want a list of quoted strings (each a %s), got %s", item, describe(v))
	}
	out := make([]string, len(items))
	for i, it := range items {
		s, ok := it.(string)
		if !ok {
			return nil, fmt.Errorf("item %d: want a quoted %s, got %s", i+1, item, describe(it))
		}
		out[i] = s
	}
	return out, nil
}

// describe names a decoded TOML value's kind for a message.
func describe(v any) string {
	switch v := v.(type) {
	case string:
		return fmt.Sprintf("the string %s", service.Quote(v))
	case int64, float64:
		return fmt.Sprintf("the number %v", v)
	case bool:
		return fmt.Sprintf("%v", v)
	case []any, []map[string]any:
		return "a list"
	case map[string]any:
		return "a table"
	default: // the toml date and time types
		return "a date or time"
	}
}

// reporter collects one Parse's problems, up to maxProblems.
type reporter struct {
	path     string
	md       *toml.MetaData
	values   map[string]toml.Primitive
	problems []Problem
	more     int // problems past the cap, counted but not shown
}

// add reports a problem with the top-level key of key, a full key from
// topKeys.
func (r *reporter) add(key toml.Key, msg string) {
	if len(r.problems) == maxProblems {
		r.more++
		return
	}
	r.problems = append(r.problems, Problem{Path: r.path, Line: r.line(key), Key: key[0], Msg: msg})
}

func (r *reporter) done() []Problem {
	if r.more > 0 {
		r.problems = append(r.problems, Problem{Path: r.path, Msg: fmt.Sprintf("%d more problems not shown", r.more)})
	}
	return r.problems
}

// line is where key is defined, or 0 when toml doesn't say: the line of
// the deepest part of key that has one. A dotted key (a.b = 1) gives its
// table no position of its own, and a key inside a table is on its own
// line, below the table's header.
func (r *reporter) line(key toml.Key) int {
	p := r.values[key[0]]
	line := r.locate(p)
	for _, k := range key[1:] {
		var table map[string]toml.Primitive
		if r.md.PrimitiveDecode(p, &table) != nil {
			break
		}
		var ok bool
		if p, ok = table[k]; !ok {
			break
		}
		if l := r.locate(p); l > 0 {
			line = l
		}
	}
	return line
}

// locate is the line of the key p was decoded from, or 0.
//
// toml v1.6 has no public way to ask where a key is, but when an
// Unmarshaler fails it returns a ParseError carrying the position of the key
// being decoded. Decoding into locator, which always fails, reads that
// position out. It costs a pass over the file (toml works out the column
// too), one reason problems are capped.
func (r *reporter) locate(p toml.Primitive) int {
	var pe toml.ParseError
	if errors.As(r.md.PrimitiveDecode(p, locator{}), &pe) {
		return pe.Position.Line
	}
	return 0
}

// locator is a toml.Unmarshaler that always fails; see reporter.locate.
type locator struct{}

var errLocate = errors.New("locate")

func (locator) UnmarshalTOML(any) error { return errLocate }

// article is what with "a" or "an" before it.
func article(what string) string {
	if strings.ContainsRune("aeiou", rune(what[0])) {
		return "an " + what
	}
	return "a " + what
}

// readTOMLFile reads a settings file: missing when there is none (which is
// no problem), else the problem that kept it from being read.
func readTOMLFile(path string) (data []byte, missing bool, p *Problem) {
	data, err := os.ReadFile(path)
	if errors.Is(err, fs.ErrNotExist) {
		return nil, true, nil
	}
	if err != nil {
		var pe *fs.PathError
		if errors.As(err, &pe) {
			err = pe.Err // the path is already in the Problem
		}
		return nil, false, &Problem{Path: path, Msg: fmt.Sprintf("cannot read the file (%v), so none of it is used", err)}
	}
	return data, false, nil
}

// decodeTOML decodes a settings file's keys for the field tables to check
// one by one, or says at which line it is not TOML.
func decodeTOML(path string, data []byte) (map[string]toml.Primitive, toml.MetaData, *Problem) {
	var values map[string]toml.Primitive
	md, err := toml.Decode(string(data), &values)
	if err != nil {
		p := Problem{Path: path, Msg: err.Error()}
		var pe toml.ParseError
		if errors.As(err, &pe) {
			p.Line, p.Msg = pe.Position.Line, pe.Message
		}
		p.Msg = "not valid TOML (" + p.Msg + "), so none of it is used"
		return nil, md, &p
	}
	return values, md, nil
}
