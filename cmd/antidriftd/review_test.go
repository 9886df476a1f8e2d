package main

import (
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/antidrift/antidrift/internal/testsupport/testenv"
)

// The review over the bus, with gdbus and busctl as independent clients:
// the proposals of a session that looked a window up three times, the
// errors by name (a number there is not; a rules file antidrift cannot
// read, which is left exactly as it was), and ReviewNote without a model.
func TestReviewOverTheBusWithIndependentClients(t *testing.T) {
	testenv.Need(t, "dbus-daemon", "busctl", "gdbus", "Xvfb", "openbox", "xterm", "xdotool", "xprop")
	bus, x := testenv.StartBus(t), testenv.StartX(t)
	editor, docs := x.XTerm(t, "Editor", "main.go - editor"), x.XTerm(t, "Docs", "the manual")
	x.Activate(t, editor)
	cfgHome := configHome(t, "allowed_classes = [\"Editor\"]\ndrift_grace = \"1s\"\n")
	d := testenv.StartDaemon(t, bus, filepath.Join(t.TempDir(), "state"), "DISPLAY="+x.Name, "XDG_CONFIG_HOME="+cfgHome)
	waitProp(t, d, "CurrentClass", "Editor")
	gdbus := func(method string, args ...string) (string, error) {
		return bus.Run(t, "gdbus", append([]string{"call", "--session", "--dest", "org.antidrift",
			"--object-path", "/org/antidrift/Session1", "--method", "org.antidrift.Session1." + method}, args...)...)
	}
	if _, err := gdbus("ReviewProposals"); err == nil || !strings.Contains(err.Error(), "org.antidrift.Error.NotPermitted") {
		t.Fatalf("ReviewProposals with no session: got %v, want org.antidrift.Error.NotPermitted", err)
	}

	s := d.Session(t)
	startSession(t, s, "write code", "tests pass", 600, "warn")
	for i := 0; i < 3; i++ {
		x.Activate(t, docs)
		waitProp(t, d, "Drift", "drifting")
		x.Activate(t, editor)
		waitProp(t, d, "Drift", "on_task")
	}
	s.Call(t, "Complete", nil)

	out, err := d.Busctl(t, "call", "ReviewProposals")
	if err != nil || !strings.HasPrefix(out, "a(usss) ") || !strings.Contains(out, `1 "allow" "allowed_classes + \"Docs\""`) {
		t.Fatalf("busctl call ReviewProposals: got %q (%v), want proposal 1 to allow Docs", out, err)
	}
	if out, err := d.Busctl(t, "get-property", "ReviewNote"); err != nil || out != `s ""` {
		t.Errorf("ReviewNote without a model: got %q (%v), want s \"\"", out, err)
	}
	if _, err := gdbus("ApplyProposal", "uint32 7"); err == nil || !strings.Contains(err.Error(), "org.antidrift.Error.InvalidArgument") || !strings.Contains(err.Error(), "proposals 1 to") {
		t.Errorf("ApplyProposal 7: got %v, want org.antidrift.Error.InvalidArgument naming the numbers there are", err)
	}

	rules := filepath.Join(cfgHome, "antidrift", "rules.toml")
	const later = "version = 9\nallowed_classes = [\"Mine\"]\n"
	if err := os.WriteFile(rules, []byte(later), 0o600); err != nil {
		t.Fatal(err)
	}
	if _, err := gdbus("ApplyProposal", "uint32 1"); err == nil || !strings.Contains(err.Error(), "org.antidrift.Error.Storage") || !strings.Contains(err.Error(), "written by a newer antidrift") || !strings.Contains(err.Error(), "nothing was applied") {
		t.Errorf("ApplyProposal over a rules file of a later version: got %v, want org.antidrift.Error.Storage saying so and that nothing was applied", err)
	}
	if got, _ := os.ReadFile(rules); string(got) != later {
		t.Errorf("the rules file after the refusal: got %q, want it untouched", got)
	}
	os.Remove(rules)
	if out, err := gdbus("ApplyProposal", "uint32 1"); err != nil || !strings.Contains(out, `wrote allowed_classes + "Docs" to `+rules) {
		t.Errorf("ApplyProposal 1: got %q (%v), want it to say what it wrote where", out, err)
	}
}
