package dist

import (
	"encoding/json"
	"fmt"
	"io"
	"net/http"
	"net/http/httptest"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/antidrift/antidrift/internal/testsupport/testenv"
)

// In review, the applet's popup lists the changes the session's own
// evidence argues for (ReviewProposals), each as the daemon words it with
// an Apply button; pressing one (as a screen reader presses it) applies it
// (ApplyProposal): the sentence saying what was written where is shown, the
// button says Applied and is disabled, and the rules file has the change.
// The model's note on the session (ReviewNote, from a stand-in model
// server) is shown above them. Photographed.
func TestPlasmaAppletReview(t *testing.T) {
	testenv.EachRelease(t, testenv.PlasmaReleases, testPlasmaAppletReview)
}

func testPlasmaAppletReview(t *testing.T, rel testenv.Release) {
	r := needPlasma(t, rel)
	bus := testenv.StartBus(t)
	x := testenv.StartX(t)
	runtime := r.TempDir(t)
	a11y := testenv.StartAccessibility(t, bus, runtime)
	editor := x.XTerm(t, "Emacs", "intro.md")
	console := x.XTerm(t, "Konsole", "~ : bash")
	x.Activate(t, editor)
	config := t.TempDir()
	if err := os.MkdirAll(filepath.Join(config, "antidrift"), 0o700); err != nil {
		t.Fatal(err)
	}
	// A stand-in for the model: off task for any window no rule decides,
	// and a note on the session in review.
	const note = "You kept to the intro. Three looks at the console were quick ones."
	model := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		var req struct {
			ResponseFormat struct {
				JSONSchema struct{ Name string } `json:"json_schema"`
			} `json:"response_format"`
		}
		b, _ := io.ReadAll(r.Body)
		_ = json.Unmarshal(b, &req)
		content := `{"on_task":false,"reason":"not the intro"}`
		if req.ResponseFormat.JSONSchema.Name == "review_note" {
			content = fmt.Sprintf(`{"note":%q}`, note)
		}
		reply, _ := json.Marshal(map[string]any{"choices": []any{map[string]any{
			"index": 0, "finish_reason": "stop", "message": map[string]any{"role": "assistant", "content": content},
		}}})
		w.Write(reply)
	}))
	t.Cleanup(model.Close)
	cfg := fmt.Sprintf("drift_grace = \"1s\"\nnudge_repeat = \"10m\"\nidle_after = \"1h\"\n[judge]\nkind = \"llm\"\nendpoint = %q\n", model.URL+"/v1")
	if err := os.WriteFile(filepath.Join(config, "antidrift", "config.toml"), []byte(cfg), 0o600); err != nil {
		t.Fatal(err)
	}
	testenv.StartDaemon(t, bus, filepath.Join(t.TempDir(), "state"), "DISPLAY="+x.Name, "XDG_CONFIG_HOME="+config)
	s := bus.Session(t)
	s.Call(t, "Start", testenv.Args("write the intro", "it is written", uint64(600), "warn", []string{"Emacs"}), new(string))
	testenv.WaitForValue(t, time.Minute, "CurrentClass", "Emacs", func() string { return s.String(t, "CurrentClass") })
	// Three quick looks at the console, each outlasting the grace (1s) by a
	// little, each followed straight by the editor.
	for range 3 {
		x.Activate(t, console)
		testenv.WaitForValue(t, time.Minute, "Drift", "drifting", func() string { return s.String(t, "Drift") })
		time.Sleep(2 * time.Second)
		x.Activate(t, editor)
		testenv.WaitForValue(t, time.Minute, "CurrentClass", "Emacs", func() string { return s.String(t, "CurrentClass") })
	}
	s.Call(t, "Complete", nil)
	testenv.WaitForValue(t, time.Minute, "State", "review", func() string { return s.String(t, "State") })
	testenv.WaitForValue(t, time.Minute, "ReviewNote", note, func() string { return s.String(t, "ReviewNote") })

	dir, env := plasmaHome(t, r, bus, runtime, "DISPLAY="+x.Name, "QT_QPA_PLATFORM=xcb")
	installCLI(t, dir)
	applet := startApplet(t, r, dir, env)
	window := roomyWindow(t, x, applet, 520, 520)
	grace := showing("push button", named(`Apply: drift_grace = "5s"`))
	button, tree := a11y.WaitForNode(t, "plasmawindowed", `the applet offering to apply drift_grace = "5s"`, grace)
	if len(tree.Find(showing("label", func(s string) bool { return strings.HasPrefix(s, "3 of the 3 episodes") }))) == 0 {
		t.Errorf("the popup in review: got\n%s\nwant the grace proposal's reason (3 of the 3 episodes …)", tree)
	}
	if len(tree.Find(showing("label", named(note)))) == 0 {
		t.Errorf("the popup in review: got\n%s\nwant the model's note %q", tree, note)
	}
	if len(tree.Find(showing("heading", named("Proposed changes to your rules")))) == 0 {
		t.Errorf("the popup in review: got\n%s\nwant the heading Proposed changes to your rules", tree)
	}
	checkReadable(t, "the popup in review", tree)
	shots := testenv.ArtifactsDir(t)
	photograph(t, x, applet, window, filepath.Join(shots, "plasma-applet-review.png"), 0, white)

	a11y.Press(t, button)
	_, tree = a11y.WaitForNode(t, "plasmawindowed", "the applet saying what was applied (a sentence naming rules.toml)",
		showing("label", func(s string) bool { return strings.Contains(s, "rules.toml") }))
	done := tree.Find(showing("push button", named(`Apply: drift_grace = "5s"`)))
	if len(done) != 1 || done[0].Has("enabled") {
		t.Errorf("the applied proposal's button: got %v, want one, disabled", done)
	}
	rules, err := os.ReadFile(filepath.Join(config, "antidrift", "rules.toml"))
	if err != nil || !strings.Contains(string(rules), "drift_grace") {
		t.Errorf("rules.toml after Apply in the applet: got %q, %v; want drift_grace in it", rules, err)
	}
	x.Screenshot(t, filepath.Join(shots, "plasma-applet-review-applied.png"), uint32(window))

	s.Call(t, "End", nil, new(string))
	_, tree = a11y.WaitForNode(t, "plasmawindowed", "the applet after End (a session can be started)", showing("push button", named("Start a session…")))
	if n := tree.Find(showing("push button", func(s string) bool { return strings.HasPrefix(s, "Apply") })); len(n) > 0 {
		t.Errorf("the popup after End: got %v, want no Apply button", n)
	}
}
