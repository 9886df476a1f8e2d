package main

import (
	"encoding/json"
	"flag"
	"io"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"strings"
	"testing"
)

// The completion scripts and panel configs in dist/ name this CLI's
// commands, flags and formats by hand; these tests keep them in step with
// the command table, and check that the scripts parse in the shells that
// are installed (none is required).

func distFile(t *testing.T, rel string) string {
	t.Helper()
	data, err := os.ReadFile(filepath.Join("..", "..", "dist", rel))
	if err != nil {
		t.Fatal(err)
	}
	return string(data)
}

func TestCompletionsKnowEveryCommandFlagAndValue(t *testing.T) {
	var words []string
	for _, c := range commands {
		words = append(words, c.name)
		fs := flag.NewFlagSet(c.name, flag.ContinueOnError)
		fs.SetOutput(io.Discard)
		c.setup(fs)
		fs.VisitAll(func(f *flag.Flag) { words = append(words, "--"+f.Name) })
	}
	words = append(append(append(words, "--json", "--help", "--version"), levels...), formats...)

	for _, c := range []struct{ file, shell string }{
		{"completions/antidrift.bash", "bash"},
		{"completions/_antidrift", "zsh"},
		{"completions/antidrift.fish", "fish"},
	} {
		script := distFile(t, c.file)
		for _, w := range words {
			// As a whole word; fish writes flags as "-l name".
			word := regexp.MustCompile(`(^|[^\w-])(` + regexp.QuoteMeta(w) + `|-l ` + regexp.QuoteMeta(strings.TrimPrefix(w, "--")) + `)($|[^\w-])`)
			if !word.MatchString(script) {
				t.Errorf("%s: got no completion of %s, want one", c.file, w)
			}
		}
		if _, err := exec.LookPath(c.shell); err != nil {
			t.Logf("%s not installed: not checking that %s parses", c.shell, c.file)
			continue
		}
		if out, err := exec.Command(c.shell, "-n", filepath.Join("..", "..", "dist", c.file)).CombinedOutput(); err != nil {
			t.Errorf("%s -n %s: %v\n%s", c.shell, c.file, err, out)
		}
	}
}

func TestPanelConfigsRunTheFollowCommand(t *testing.T) {
	// waybar's config is JSON with // comments.
	jsonc := regexp.MustCompile(`(?m)^\s*//.*$`).ReplaceAllString(distFile(t, "panels/waybar.jsonc"), "")
	var cfg map[string]map[string]any
	if err := json.Unmarshal([]byte(jsonc), &cfg); err != nil {
		t.Fatalf("waybar.jsonc is not JSON once comments are removed: %v", err)
	}
	m := cfg["custom/antidrift"]
	if m["exec"] != "antidrift status --follow --format waybar" || m["return-type"] != "json" || m["on-click"] != "antidrift refocus" {
		t.Errorf("waybar module: got %v, want exec \"antidrift status --follow --format waybar\", return-type json, on-click \"antidrift refocus\"", m)
	}
	ini := distFile(t, "panels/polybar.ini")
	for _, want := range []string{"[module/antidrift]", "type = custom/script", "exec = antidrift status --follow --format polybar", "tail = true"} {
		if !strings.Contains(ini, "\n"+want+"\n") {
			t.Errorf("polybar.ini: got\n%s\nwant the line %q", ini, want)
		}
	}
}
