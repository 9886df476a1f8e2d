package config

import (
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/antidrift/antidrift/service"
)

func TestRulesFileApplyKeepsConfigAndLoads(t *testing.T) {
	dir := t.TempDir()
	cfgPath := filepath.Join(dir, "config.toml")
	own := "# my own settings\nallowed_classes = [\"Emacs\"]  # the editor\n\ndrift_grace = \"5s\"\ndistractions = [\"url:news.example\"]\n"
	if err := os.WriteFile(cfgPath, []byte(own), 0o600); err != nil {
		t.Fatal(err)
	}
	f := RulesFile{Path: RulesPath(cfgPath)}
	for _, p := range []service.ReviewProposal{
		{Kind: service.ProposeAllow, Rule: "Zeal"},
		{Kind: service.ProposeAllow, Rule: "zeal"}, // already there
		{Kind: service.ProposeAllow, Rule: "url:docs.python.org"},
		{Kind: service.ProposeDistraction, Rule: `a\:b`},
		{Kind: service.ProposeDistraction, Rule: service.LiteralRule(`q"] enforcement = "observe`)}, // a class is outside text
		{Kind: service.ProposeGrace, Grace: 20 * time.Second},
		{Kind: service.ProposeLevel, Level: service.LevelBlock},
	} {
		if where, err := f.Apply(p); err != nil || where != filepath.Join(dir, "rules.toml") {
			t.Fatalf("Apply(%+v): got %q, %v", p, where, err)
		}
	}
	if got, _ := os.ReadFile(cfgPath); string(got) != own {
		t.Errorf("config.toml changed: got %q, want %q", got, own)
	}
	fi, err := os.Stat(f.Path)
	if err != nil || fi.Mode().Perm() != 0o600 {
		t.Errorf("rules.toml: got %v, %v; want mode 0600", fi, err)
	}
	c, problems := LoadWithRules(cfgPath)
	if len(problems) > 0 {
		t.Fatalf("problems: %v", problems)
	}
	if got := strings.Join(c.AllowedClasses, ","); got != "Emacs,Zeal,url:docs.python.org" {
		t.Errorf("allowed_classes: got %s", got)
	}
	if got := strings.Join(c.Distractions, ","); got != `url:news.example,a\:b,q"] enforcement = "observe` {
		t.Errorf("distractions: got %s", got)
	}
	if c.DriftGrace != 20*time.Second || c.Enforcement != service.LevelBlock {
		t.Errorf("got grace %s, level %s; want 20s and block from the rules file", c.DriftGrace, c.Enforcement)
	}
	data, _ := os.ReadFile(f.Path)
	if !strings.Contains(string(data), "version = 1") || !strings.HasPrefix(string(data), "# antidrift's rules file") {
		t.Errorf("rules.toml: got %s", data)
	}
}

func TestRulesFileRefusesWhatItCannotRead(t *testing.T) {
	for _, tc := range []struct{ name, content, want string }{
		{"not TOML", "allowed_classes = [", "not valid TOML"},
		{"newer", "version = 2\n", "written by a newer antidrift"},
		{"a bad rule", "allowed_classes = [\"a:\"]\n", "is not a valid rule"},
		{"unknown key", "nudge_repeat = \"1m\"\n", "unknown key"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			path := filepath.Join(t.TempDir(), RulesName)
			os.WriteFile(path, []byte(tc.content), 0o600)
			if _, p := LoadRules(path); len(p) == 0 || !strings.Contains(p[0].String(), tc.want) {
				t.Errorf("LoadRules: got %v, want a problem with %q", p, tc.want)
			}
			_, err := RulesFile{Path: path}.Apply(service.ReviewProposal{Kind: service.ProposeAllow, Rule: "Zeal"})
			if err == nil || !strings.Contains(err.Error(), tc.want) {
				t.Errorf("Apply: got %v, want a refusal with %q", err, tc.want)
			}
			if got, _ := os.ReadFile(path); string(got) != tc.content {
				t.Errorf("the file changed: got %q, want %q", got, tc.content)
			}
		})
	}
	t.Run("a symbolic link", func(t *testing.T) {
		dir := t.TempDir()
		target := filepath.Join(dir, "elsewhere.toml")
		os.WriteFile(target, nil, 0o600)
		path := filepath.Join(dir, RulesName)
		os.Symlink(target, path)
		if _, err := (RulesFile{Path: path}).Apply(service.ReviewProposal{Kind: service.ProposeAllow, Rule: "Zeal"}); err == nil {
			t.Error("Apply through a symbolic link: got no error")
		}
		if got, _ := os.ReadFile(target); len(got) != 0 {
			t.Errorf("the link's target was written: %q", got)
		}
	})
}

// A list already at the most antidrift reads is refused, not reported as
// written while the rule was dropped.
func TestRulesFileApplyRefusesAFullList(t *testing.T) {
	f := RulesFile{Path: filepath.Join(t.TempDir(), "rules.toml")}
	for i := range maxClasses {
		if _, err := f.Apply(service.ReviewProposal{Kind: service.ProposeAllow, Rule: fmt.Sprintf("App%d", i)}); err != nil {
			t.Fatalf("Apply #%d: %v", i, err)
		}
	}
	before, _ := os.ReadFile(f.Path)
	_, err := f.Apply(service.ReviewProposal{Kind: service.ProposeAllow, Rule: "OneTooMany"})
	if err == nil || !strings.Contains(err.Error(), "64") {
		t.Errorf("Apply to a full allowed_classes: got %v, want an error naming the limit", err)
	}
	if after, _ := os.ReadFile(f.Path); string(after) != string(before) {
		t.Errorf("a refused Apply changed the rules file")
	}
}

// A class is outside text: whatever it holds, the rule applied reads back
// exactly, or is refused before anything is written.
func TestRulesFileRoundTripsHostileClasses(t *testing.T) {
	for _, class := range []string{"Foo\nBar", "a'''b\"\"\"c", "\u202eevil", `back\slash`, "trailing ", "tab\there", "#not a comment", "[table]", "x\x00y", "é\u200b"} {
		f := RulesFile{Path: filepath.Join(t.TempDir(), "rules.toml")}
		rule := service.LiteralRule(class)
		_, err := f.Apply(service.ReviewProposal{Kind: service.ProposeAllow, Rule: rule})
		if err != nil {
			if _, statErr := os.Stat(f.Path); statErr == nil {
				t.Errorf("Apply(%q) refused (%v) but wrote the file", class, err)
			}
			continue
		}
		r, problems := LoadRules(f.Path)
		if len(problems) > 0 || len(r.AllowedClasses) != 1 || r.AllowedClasses[0] != rule {
			t.Errorf("Apply(%q) then LoadRules: got %q, problems %v; want [%q] and none", class, r.AllowedClasses, problems, rule)
		}
	}
}
