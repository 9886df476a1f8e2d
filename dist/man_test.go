package dist_test

// The manual pages in dist/man, checked against the programs they describe
// as those programs describe themselves: the commands and flags `antidrift
// help` prints, the flags `antidriftd --help` prints, the config keys
// `antidriftd --check-config` names. A command, flag or key added without
// its entry fails here, and so does an entry for one that is gone. And
// each page renders, as lintian renders it, without a warning.

import (
	"bytes"
	"errors"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"slices"
	"strings"
	"testing"
	"unicode/utf8"

	"github.com/antidrift/antidrift/internal/testsupport/testenv"
)

// manPages are the pages make install puts in man1.
var manPages = []string{"man/antidrift.1", "man/antidriftd.1"}

// entry is one .TP paragraph of a page: its tag as a reader sees it, and
// the tags of the .TP paragraphs nested in it (between .RS and .RE).
type entry struct {
	tag    string
	nested []string
}

// sectionEntries returns the .TP entries of section (a .SH heading) of the
// page at path, in order.
func sectionEntries(t *testing.T, path, section string) []entry {
	t.Helper()
	data, err := os.ReadFile(path)
	if err != nil {
		t.Fatal(err)
	}
	var (
		out   []entry
		in    bool
		depth int
		found bool
	)
	lines := strings.Split(string(data), "\n")
	for i := 0; i < len(lines); i++ {
		line := lines[i]
		if name, ok := strings.CutPrefix(line, ".SH "); ok {
			in = roffText(name) == section
			found = found || in
			continue
		}
		switch {
		case !in:
		case line == ".RS":
			depth++
		case line == ".RE":
			depth--
		case line == ".TP" && i+1 < len(lines):
			i++
			tag := roffText(lines[i])
			switch {
			case depth == 0:
				out = append(out, entry{tag: tag})
			case depth == 1 && len(out) > 0:
				out[len(out)-1].nested = append(out[len(out)-1].nested, tag)
			default:
				t.Fatalf("%s:%d: got a .TP nested %d deep in %s, want it at the top or one .RS under an entry", path, i, depth, section)
			}
		}
	}
	if !found {
		t.Fatalf("%s: got no section %s, want one", path, section)
	}
	return out
}

// roffEscapes are the escapes the pages use, as they render.
var roffEscapes = strings.NewReplacer(
	`\fB`, "", `\fI`, "", `\fR`, "", `\fP`, "",
	`\-`, "-", `\ `, " ", `\e`, `\`, `\&`, "", `\:`, "",
	`\(aq`, "'", `\(dq`, `"`, `\(ti`, "~", `\(em`, "—", `\(->`, "→",
)

// roffText is how one line of man(7) source reads: a text line with its
// escapes rendered, or the arguments of a font macro (.B, .I, .BR, .IR,
// .BI, ...), which the two-letter macros join without spaces.
func roffText(line string) string {
	macro, rest, _ := strings.Cut(line, " ")
	switch macro {
	case ".B", ".I":
		return roffEscapes.Replace(strings.Join(macroArgs(rest), " "))
	case ".BR", ".RB", ".BI", ".IB", ".IR", ".RI":
		return roffEscapes.Replace(strings.Join(macroArgs(rest), ""))
	}
	if strings.HasPrefix(line, ".") {
		return ""
	}
	return roffEscapes.Replace(strings.Trim(line, `"`))
}

// macroArgs splits a macro's arguments: separated by spaces, a double
// quoted one may hold spaces.
func macroArgs(s string) []string {
	var args []string
	for s = strings.TrimLeft(s, " "); s != ""; s = strings.TrimLeft(s, " ") {
		if s[0] == '"' {
			arg, rest, _ := strings.Cut(s[1:], `"`)
			args, s = append(args, arg), rest
			continue
		}
		arg, rest, _ := strings.Cut(s, " ")
		args, s = append(args, arg), rest
	}
	return args
}

// run runs a built program and returns its stdout and stderr; it fails the
// test unless the program exits with status want.
func run(t *testing.T, want int, name string, args ...string) (stdout, stderr string) {
	t.Helper()
	var out, errOut bytes.Buffer
	cmd := exec.Command(name, args...)
	cmd.Stdout, cmd.Stderr = &out, &errOut
	err := cmd.Run()
	code := 0
	if exit := (*exec.ExitError)(nil); errors.As(err, &exit) {
		code = exit.ExitCode()
	} else if err != nil {
		t.Fatalf("%s %v: %v", name, args, err)
	}
	if code != want {
		t.Fatalf("%s %s: exit %d, want %d\n%s%s", filepath.Base(name), strings.Join(args, " "), code, want, out.String(), errOut.String())
	}
	return out.String(), errOut.String()
}

// flagLine is a flag in a program's help: "  --for DURATION" (antidrift),
// "  -config FILE" (antidriftd, Go's flag package).
var flagLine = regexp.MustCompile(`(?m)^  --?([a-z][a-z-]*)(?: (\S+))?$`)

// helpFlags maps each flag in help to its value's name ("" for a switch).
func helpFlags(help string) map[string]string {
	flags := map[string]string{}
	for _, m := range flagLine.FindAllStringSubmatch(help, -1) {
		flags[m[1]] = m[2]
	}
	return flags
}

// checkFlagTags checks that tags are exactly the flags of want, each
// written "--name" or "--name VALUE" with the value help names: "-h, --help"
// counts as help.
func checkFlagTags(t *testing.T, where string, tags []string, want map[string]string) {
	t.Helper()
	seen := map[string]bool{}
	for _, tag := range tags {
		tag = tag[strings.LastIndex(tag, ", ")+1:]
		name, value, _ := strings.Cut(strings.TrimSpace(tag), " ")
		name = strings.TrimPrefix(name, "--")
		wantValue, ok := want[name]
		switch {
		case !ok:
			t.Errorf("%s: got %q described, want only options the program has", where, tag)
		case seen[name]:
			t.Errorf("%s: got --%s described twice, want once", where, name)
		case wantValue == "" && value != "":
			t.Errorf("%s: got %q, want --%s without a value (it takes none)", where, tag, name)
		case !strings.HasPrefix(value, wantValue):
			t.Errorf("%s: the page has %q, the program's help --%s %s", where, tag, name, wantValue)
		}
		seen[name] = true
	}
	for name, value := range want {
		if !seen[name] {
			t.Errorf("%s: got no description of --%s %s, want one", where, name, value)
		}
	}
}

// TestManPageOfTheCLINamesEveryCommandAndFlag: antidrift(1) has an entry
// for every command antidrift help lists, in its order, under the usage
// line antidrift help COMMAND prints, with every flag of the command (and
// none it does not have); and its OPTIONS are the ones the program takes.
func TestManPageOfTheCLINamesEveryCommandAndFlag(t *testing.T) {
	bin := testenv.Binary(t, "antidrift")
	help, _ := run(t, 0, bin, "help")
	_, list, ok := strings.Cut(help, "\nCommands:\n")
	if !ok {
		t.Fatalf("antidrift help: got\n%s\nwant a Commands: list", help)
	}
	list, _, _ = strings.Cut(list, "\n\n")
	var names []string
	for _, line := range strings.Split(list, "\n") {
		if strings.HasPrefix(line, "  ") && !strings.HasPrefix(line, "   ") {
			names = append(names, strings.Fields(line)[0])
		}
	}
	if len(names) < 10 {
		t.Fatalf("antidrift help's commands: got %d (%q), want at least 10", len(names), names)
	}

	entries := sectionEntries(t, manPages[0], "COMMANDS")
	var documented []string
	for _, e := range entries {
		documented = append(documented, strings.Fields(e.tag)[0])
	}
	if !slices.Equal(documented, names) {
		t.Errorf("antidrift.1 COMMANDS: got\n  %q\nwant what antidrift help lists\n  %q", documented, names)
	}
	for _, e := range entries {
		name := strings.Fields(e.tag)[0]
		if !slices.Contains(names, name) {
			continue
		}
		usage, _ := run(t, 0, bin, "help", name)
		first, _, _ := strings.Cut(usage, "\n")
		if want := strings.TrimPrefix(first, "usage: antidrift "); e.tag != want {
			t.Errorf("antidrift.1 %s: the entry reads\n  %s\nantidrift help %s says\n  %s", name, e.tag, name, want)
		}
		flags := helpFlags(usage)
		if _, ok := flags["json"]; !ok {
			t.Errorf("antidrift help %s: got\n%s\nwant --json, which OPTIONS says every command takes", name, usage)
		}
		delete(flags, "json") // under OPTIONS: every command takes it
		checkFlagTags(t, "antidrift.1 "+name, e.nested, flags)
	}

	// The options the page gives are the ones the program answers.
	var options []string
	for _, e := range sectionEntries(t, manPages[0], "OPTIONS") {
		options = append(options, e.tag)
	}
	checkFlagTags(t, "antidrift.1 OPTIONS", options, map[string]string{"json": "", "help": "", "version": ""})
	if out, _ := run(t, 0, bin, "--help"); out != help {
		t.Errorf("antidrift --help: got\n%s\nwant what antidrift help prints\n%s", out, help)
	}
	if out, _ := run(t, 0, bin, "--version"); !strings.HasPrefix(out, "antidrift ") {
		t.Errorf("antidrift --version: got %q, want \"antidrift <version>\"", out)
	}
}

// TestManPageOfTheDaemonNamesEveryFlagAndKey: antidriftd(1) describes every
// flag antidriftd --help prints and no other, and every key of config.toml
// and of its [judge] table that antidriftd --check-config knows.
func TestManPageOfTheDaemonNamesEveryFlagAndKey(t *testing.T) {
	bin := testenv.Binary(t, "antidriftd")
	_, usage := run(t, 0, bin, "--help") // Go's flag package prints it on stderr
	flags := helpFlags(usage)
	if len(flags) < 3 {
		t.Fatalf("antidriftd --help: got %d flags, want at least 3:\n%s", len(flags), usage)
	}
	flags["help"] = "" // the flag package's own -h, --help
	var options []string
	for _, e := range sectionEntries(t, manPages[1], "OPTIONS") {
		options = append(options, e.tag)
	}
	checkFlagTags(t, "antidriftd.1 OPTIONS", options, flags)

	// An unknown key makes the daemon name the keys it knows, at the top
	// level and in [judge].
	config := filepath.Join(t.TempDir(), "config.toml")
	if err := os.WriteFile(config, []byte("no_such_key = 1\n[judge]\nno_such_key = 1\n"), 0o600); err != nil {
		t.Fatal(err)
	}
	problems, _ := run(t, 1, bin, "--check-config", "--config", config)
	known := regexp.MustCompile(`\(the keys are ([a-z_, ]+)\)`).FindAllStringSubmatch(problems, -1)
	if len(known) != 2 {
		t.Fatalf("antidriftd --check-config on two unknown keys: got\n%s\nwant two lines saying (the keys are …)", problems)
	}
	keys, judgeKeys := strings.Split(known[0][1], ", "), strings.Split(known[1][1], ", ")
	var documented, judgeDocumented []string
	for _, e := range sectionEntries(t, manPages[1], "CONFIGURATION") {
		documented = append(documented, e.tag)
		if e.tag == "judge" {
			judgeDocumented = e.nested
		}
	}
	slices.Sort(documented)
	slices.Sort(keys)
	if !slices.Equal(documented, keys) {
		t.Errorf("antidriftd.1 CONFIGURATION keys: got\n  %q\nwant the keys antidriftd knows\n  %q", documented, keys)
	}
	if !slices.Equal(judgeDocumented, judgeKeys) {
		t.Errorf("antidriftd.1 [judge] keys: got\n  %q\nwant the keys antidriftd knows\n  %q", judgeDocumented, judgeKeys)
	}
}

// TestManPagesRenderWithoutWarnings renders each page the way lintian does
// (its groff-message check) and as a person's 60- and 80-column terminal
// shows it: groff has nothing to warn about, no line is wider than the
// terminal, and the NAME line gives man -k / apropos a whatis entry
// (lintian's bad-whatis-entry).
func TestManPagesRenderWithoutWarnings(t *testing.T) {
	testenv.Need(t, "man", "lexgrog")
	for _, page := range manPages {
		t.Run(filepath.Base(page), func(t *testing.T) {
			path, err := filepath.Abs(page)
			if err != nil {
				t.Fatal(err)
			}
			render := func(width string, args ...string) (string, string) {
				cmd := exec.Command("man", append([]string{"--warnings", "-E", "UTF-8", "-l"}, append(args, path)...)...)
				cmd.Env = append(os.Environ(), "LC_ALL=C.UTF-8", "MANROFFSEQ=", "MANWIDTH="+width, "MAN_KEEP_FORMATTING=", "MANPAGER=cat", "PAGER=cat")
				var out, errOut bytes.Buffer
				cmd.Stdout, cmd.Stderr = &out, &errOut
				if err := cmd.Run(); err != nil {
					t.Fatalf("man %v: %v\n%s", cmd.Args[1:], err, errOut.String())
				}
				return out.String(), errOut.String()
			}
			// lintian's own command line (Lintian::Check::Documentation::Manual).
			if _, warnings := render("80", "-Tutf8", "-Z"); warnings != "" {
				t.Errorf("man --warnings -Tutf8 -Z (lintian's groff-message check): got\n%s\nwant no warnings", warnings)
			}
			for _, width := range []string{"60", "80"} {
				text, warnings := render(width)
				if warnings != "" {
					t.Errorf("man --warnings at %s columns: got\n%s\nwant no warnings", width, warnings)
				}
				if !strings.Contains(text, "NAME\n") || !strings.Contains(text, "SYNOPSIS\n") {
					t.Fatalf("the page at %s columns: got\n%s\nwant NAME and SYNOPSIS", width, text)
				}
				if width != "80" {
					continue
				}
				for _, line := range strings.Split(text, "\n") {
					if utf8.RuneCountInString(line) > 80 {
						t.Errorf("line: got one wider than 80 columns:\n%s\nwant at most 80", line)
					}
				}
			}

			name := strings.TrimSuffix(filepath.Base(page), ".1")
			out, err := exec.Command("lexgrog", path).CombinedOutput()
			if err != nil || !strings.HasPrefix(string(out), path+`: "`+name+" - ") {
				t.Errorf("lexgrog finds no whatis entry for %s (%v):\n%s", name, err, out)
			}
		})
	}
}
