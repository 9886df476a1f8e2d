package main

import (
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/antidrift/antidrift/config"
	"github.com/antidrift/antidrift/internal/testsupport/testenv"
)

// reviewConfig is a person's own config.toml, comments and layout theirs.
const reviewConfig = `# My antidrift settings.
allowed_classes = ["Editor"]   # the editor, and nothing else

drift_grace = "1s"   # short, for the test
nudge_repeat = "10m"
`

// On a real desktop: a session where a docs window was judged drift three
// times, each a quick look between on-task work, proposes allowing it;
// --apply writes the rule to rules.toml, leaves config.toml byte for byte
// as it was (and loadable), and the next session — in the same daemon, and
// in one restarted — judges the docs window on task.
func TestReviewProposesTheDocsWindowAndApplyingAllowsIt(t *testing.T) {
	testenv.Need(t, "dbus-daemon", "dbus-send", "Xvfb", "openbox", "xterm", "xdotool", "xprop")
	x := testenv.StartX(t)
	editor := x.XTerm(t, "Editor", "main.go - editor")
	docs := x.XTerm(t, "Docs", "net/http - Go Packages")
	x.Activate(t, editor)
	cfgHome := t.TempDir()
	cfgPath := filepath.Join(cfgHome, "antidrift", "config.toml")
	writeFile(t, cfgPath, reviewConfig)
	bus := testenv.StartBus(t)
	s := &session{d: testenv.StartDaemon(t, bus, filepath.Join(t.TempDir(), "state"), "DISPLAY="+x.Name, "XDG_CONFIG_HOME="+cfgHome)}
	s.waitForStatus(t, "antidriftd to see the Editor window", map[string]any{"current_class": "Editor"})

	// Outside review, the CLI says so in its own words.
	if r := s.run(t, "review"); r.code != exitRefused || !strings.Contains(r.stderr, "antidrift review") || !strings.Contains(r.stderr, "in review") {
		t.Errorf("review with no session: got %v, want a refusal naming antidrift review and when it works", r)
	}

	s.ok(t, "start", "write the handler", "--done-when", "tests pass", "--for", "30m")
	for i := 0; i < 3; i++ {
		x.Activate(t, docs)
		s.waitForStatus(t, "the docs window judged drift", map[string]any{"current_class": "Docs", "drift": "drifting"})
		x.Activate(t, editor)
		s.waitForStatus(t, "back to the editor", map[string]any{"current_class": "Editor", "drift": "on_task"})
	}
	s.ok(t, "complete")

	text := s.ok(t, "review")
	t.Logf("antidrift review:\n%s", text)
	contains(t, "antidrift review", text, ` 1. allow: allowed_classes + "Docs"`, "Docs was judged drift for", "in 3 visits, 3 of them a quick look", "Nothing is applied unless you ask")
	type listed struct {
		Proposals []reviewProposal `json:"proposals"`
		Note      string           `json:"note"`
	}
	got := okJSON[listed](t, s, "review")
	if len(got.Proposals) == 0 || got.Proposals[0] != (reviewProposal{Number: 1, Kind: "allow", Change: `allowed_classes + "Docs"`, Reason: got.Proposals[0].Reason}) {
		t.Fatalf("review --json: got %+v, want proposal 1 to allow Docs", got)
	}
	rulesPath := filepath.Join(cfgHome, "antidrift", "rules.toml")
	if _, err := os.Stat(rulesPath); !os.IsNotExist(err) {
		t.Fatalf("rules.toml before any --apply: got %v, want none (nothing is applied unless asked)", err)
	}

	// A number the review does not have: a usage error in the CLI's words.
	r := s.run(t, "review", "--apply", "9")
	if r.code != exitUsage || !strings.Contains(r.stderr, "--apply 9: this session's review has proposals 1 to") {
		t.Errorf("review --apply 9: got %v, want exit 2 saying which numbers there are", r)
	}

	out := s.ok(t, "review", "--apply", "1")
	if want := `Applied: wrote allowed_classes + "Docs" to ` + rulesPath + "; the next session uses it."; strings.TrimSpace(out) != want {
		t.Errorf("review --apply 1: got %q, want %q", out, want)
	}
	if data, err := os.ReadFile(cfgPath); err != nil || string(data) != reviewConfig {
		t.Errorf("config.toml after --apply: got %q (%v), want it byte for byte as written:\n%s", data, err, reviewConfig)
	}
	rules, err := os.ReadFile(rulesPath)
	if err != nil || !strings.Contains(string(rules), `allowed_classes = ["Docs"]`) || !strings.Contains(string(rules), "version = 1") {
		t.Errorf("rules.toml: got %q (%v), want version 1 allowing Docs", rules, err)
	}
	cfg, problems := config.LoadWithRules(cfgPath)
	if len(problems) > 0 || strings.Join(cfg.AllowedClasses, ",") != "Editor,Docs" || cfg.DriftGrace != time.Second {
		t.Errorf("the config with the rules file: got allowed %q, grace %s, problems %v; want Editor,Docs, 1s, none", cfg.AllowedClasses, cfg.DriftGrace, problems)
	}
	if out, err := bus.Run(t, testenv.Binary(t, "antidriftd"), "--check-config", "--config", cfgPath); err != nil || !strings.Contains(out, ": ok") {
		t.Errorf("antidriftd --check-config: got %q, %v; want ok", out, err)
	}
	s.ok(t, "end")

	nextSessionAllowsDocs := func(when string) {
		t.Helper()
		x.Activate(t, editor)
		s.waitForStatus(t, "the editor "+when, map[string]any{"current_class": "Editor"})
		s.ok(t, "start", "write the tests", "--done-when", "they pass", "--for", "30m")
		x.Activate(t, docs)
		s.waitForStatus(t, "the docs window on task "+when, map[string]any{"current_class": "Docs", "drift": "on_task"})
		time.Sleep(1500 * time.Millisecond) // past the grace: still on task, by the rule
		st := s.status(t)
		if st["drift"] != "on_task" || !strings.Contains(st["drift_reason"].(string), "allowed") {
			t.Errorf("the next session %s: got drift %v (%v), want on task, allowed", when, st["drift"], st["drift_reason"])
		}
		s.ok(t, "complete")
		if text := s.ok(t, "review"); strings.Contains(text, `"Docs"`) {
			t.Errorf("review of the next session %s: got\n%s\nwant no proposal about Docs again", when, text)
		}
		s.ok(t, "end")
	}
	nextSessionAllowsDocs("in the same daemon")
	s.d.Stop(t)
	s.d.Start(t)
	nextSessionAllowsDocs("after a restart, from rules.toml")
}

// With a real model (llama-server, random weights) configured as the
// judge, the review shows its note beside the proposals; the note is kept
// in review-notes.jsonl and never enters the sealed chain, which still
// verifies.
func TestReviewShowsTheModelsNoteKeptBesideTheChain(t *testing.T) {
	srv := testenv.StartLlamaServer(t, "")
	s := startDaemon(t, "[judge]\nkind = \"llm\"\nendpoint = \""+srv.URL+"\"\ntimeout = \"60s\"\n")
	s.ok(t, "start", "write the intro", "--done-when", "it is committed", "--for", "10m")
	s.ok(t, "complete")
	type listed struct {
		Proposals []reviewProposal `json:"proposals"`
		Note      string           `json:"note"`
	}
	var got listed
	deadline := time.Now().Add(2 * time.Minute)
	for got = okJSON[listed](t, s, "review"); got.Note == ""; got = okJSON[listed](t, s, "review") {
		if time.Now().After(deadline) {
			t.Fatalf("the model's note in antidrift review --json: got none within 2m, want one\n%s\n%s", s.d.Output(), srv.Output())
		}
		time.Sleep(200 * time.Millisecond)
	}
	if text := s.ok(t, "review"); !strings.Contains(text, "Note (from your model): ") {
		t.Errorf("antidrift review: got\n%s\nwant the note beside the figures", text)
	}
	// A daemon restarted during the review shows the same note.
	s.d.Stop(t)
	s.d.Start(t)
	if again := okJSON[listed](t, s, "review"); again.Note != got.Note {
		t.Errorf("the note after a restart in review: got %q, want %q", again.Note, got.Note)
	}
	notes, err := os.ReadFile(filepath.Join(s.d.StateDir, "review-notes.jsonl"))
	if err != nil || !strings.Contains(string(notes), `"version":1`) {
		t.Fatalf("review-notes.jsonl: got %q (%v), want the note's line", notes, err)
	}
	s.ok(t, "end")
	audit, err := os.ReadFile(filepath.Join(s.d.StateDir, "audit.jsonl"))
	if err != nil || strings.Contains(string(audit), "note") {
		t.Errorf("audit.jsonl: got %q (%v), want the sealed summary without the note", audit, err)
	}
	s.ok(t, "verify")
	t.Logf("the random model's note: %q", got.Note)
}
