package dist

import (
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/antidrift/antidrift/internal/testsupport/testenv"
)

// Help me phrase it in the applet's start form asks the coach (Coach) of a
// real model (llama-server with a tiny random-weights model, its reply
// shaped by the coach's schema). A proposal the daemon keeps (Proposal)
// fills the form's next action and success condition; one it refuses is
// said in the daemon's sentence, begun as a sentence, and what was typed
// stays. Nothing starts until Start. Which of the two happens is the
// random model's: the log says which was seen.
func TestPlasmaAppletCoachWithARealModel(t *testing.T) {
	testenv.EachRelease(t, testenv.PlasmaReleases, testPlasmaAppletCoachWithARealModel)
}

func testPlasmaAppletCoachWithARealModel(t *testing.T, rel testenv.Release) {
	r := needPlasma(t, rel)
	model := testenv.StartLlamaServer(t, "")
	bus := testenv.StartBus(t)
	x := testenv.StartX(t)
	runtime := r.TempDir(t)
	a11y := testenv.StartAccessibility(t, bus, runtime)
	config := t.TempDir()
	if err := os.MkdirAll(filepath.Join(config, "antidrift"), 0o700); err != nil {
		t.Fatal(err)
	}
	cfg := "[judge]\nkind = \"llm\"\nendpoint = \"" + model.URL + "\"\ntimeout = \"60s\"\ncoach_timeout = \"60s\"\n"
	if err := os.WriteFile(filepath.Join(config, "antidrift", "config.toml"), []byte(cfg), 0o600); err != nil {
		t.Fatal(err)
	}
	testenv.StartDaemon(t, bus, filepath.Join(t.TempDir(), "state"), "DISPLAY="+x.Name, "XDG_CONFIG_HOME="+config)
	s := bus.Session(t)

	dir, env := plasmaHome(t, r, bus, runtime, "DISPLAY="+x.Name, "QT_QPA_PLATFORM=xcb")
	installCLI(t, dir)
	applet := startApplet(t, r, dir, env)
	window := roomyWindow(t, x, applet, 480, 740)
	start, _ := a11y.WaitForNode(t, "plasmawindowed", "Start a session…", showing("push button", named("Start a session…")))
	a11y.Press(t, start)
	next, tree := a11y.WaitForNode(t, "plasmawindowed", "the start form", showing("text", named("Next action")))
	coach := tree.Find(showing("push button", named("Help me phrase it")))
	if len(coach) == 0 {
		t.Fatalf("the start form: got\n%s\nwant Help me phrase it", tree)
	}
	a11y.Type(t, next, "the intro, somehow")
	a11y.Press(t, coach[0])
	text := func(name string) string {
		var s string
		for _, n := range a11y.Application(t, "plasmawindowed").Find(showing("text", named(name))) {
			if err := a11y.Conn.Object(n.Dest, n.Ref).Call("org.a11y.atspi.Text.GetText", 0, int32(0), int32(-1)).Store(&s); err != nil {
				t.Logf("reading %s: %v", name, err)
			}
		}
		return s
	}
	// The proposal as the daemon keeps it: (next, done, secs, rules, why).
	// The model has random weights: its reply is either a proposal the
	// daemon keeps (then the form has it) or one the daemon refuses as
	// not usable (then the form says so in the daemon's sentence and keeps
	// what was typed). Either way nothing starts.
	var proposal coachProposal
	coachLine := func() string {
		for _, n := range a11y.Application(t, "plasmawindowed").Find(showing("label", func(s string) bool {
			l := strings.ToLower(s)
			return strings.Contains(l, "model") || strings.Contains(l, "proposal")
		})) {
			return n.Name
		}
		return ""
	}
	var said string
	testenv.WaitUntil(t, 2*time.Minute, "the coach's answer (Proposal kept by the daemon, or the form's coach line)", func() bool {
		proposal = testenv.Prop[coachProposal](t, s, "Proposal")
		said = coachLine()
		return proposal.Next != "" || said != ""
	})
	if proposal.Next != "" {
		testenv.WaitForValue(t, time.Minute, "the form's next action", proposal.Next, func() string { return text("Next action") })
		if got := text("Done when"); got != proposal.Done {
			t.Errorf("the form's Done when after the coach: got %q, want the proposal's %q", got, proposal.Done)
		}
		t.Logf("the coach proposed %+v", proposal)
	} else {
		if !strings.HasPrefix(said, "The model") && !strings.HasPrefix(said, "The coach") {
			t.Errorf("the form's coach line: got %q, want the daemon's sentence, begun as a sentence", said)
		}
		if got := text("Next action"); got != "the intro, somehow" {
			t.Errorf("the form's next action after a proposal the daemon refused: got %q, want what was typed", got)
		}
		t.Logf("the daemon refused the random model's proposal: %s", said)
	}
	if st := s.String(t, "State"); st == "active" {
		t.Errorf("State after the coach: got active, want nothing started before Start")
	}
	photograph(t, x, applet, window, filepath.Join(testenv.ArtifactsDir(t), "plasma-applet-coach.png"), 0, white)
}

// coachProposal is the Proposal property, (sstass).
type coachProposal struct {
	Next, Done string
	Secs       uint64
	Rules      []string
	Why        string
}
