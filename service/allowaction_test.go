package service

import (
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"
)

// classesThatSpellPatterns are window classes a program may choose that
// read as something else in the rule syntax or in a shell.
var classesThatSpellPatterns = []string{
	"*", "*:*", "Fire?ox", "[A-Z]*", `back\slash`, `ends in \`, "a:b", "Term:*GitHub*",
	" padded ", "$(touch pwned)", "it's `id`; rm -rf ~",
}

// "Allow" on a drift nudge allows the nudged window's class as it is: a
// class of "*" does not allow every window, "a:b" is not class a narrowed
// to titles b. The window itself is then on task; another still drifts.
func TestAllowFromANudgeAllowsTheClassAsItIs(t *testing.T) {
	for _, class := range classesThatSpellPatterns {
		h, _, n := newDriftHarness(t, driftOpts{})
		h.RecordWindow(editor)
		h.start(t, LevelWarn, "Editor")
		w := Window{ID: "66", Class: class, Title: "a window", Available: true}
		h.RecordWindow(w)
		h.settle()
		shown, ids := n.history()
		if len(shown) != 1 || shown[0].Summary != "Drifting: "+class {
			t.Fatalf("%q: got nudges %+v, want one about the class", class, shown)
		}
		h.NotificationAction(ids[0], "allow")
		h.settle()
		if v := h.View(); v.Drift != DriftOnTask {
			t.Errorf("%q: after Allow the window itself is %s (%s), want on task; allowed %q", class, v.Drift, v.DriftReason, v.AllowedClasses)
		}
		h.RecordWindow(distraction)
		h.settle()
		if v := h.View(); v.Drift != DriftDrifting {
			t.Errorf("%q: after Allow another class is %s (%s), want drifting; allowed %q", class, v.Drift, v.DriftReason, v.AllowedClasses)
		}
	}
}

// The hint a nudge without buttons gives, `antidrift allow CLASS`, is a
// command a person pastes into a shell: sh reads its argument back as the
// literal rule for the class, running nothing and expanding nothing.
func TestAllowHintIsOneShellWord(t *testing.T) {
	sh, err := exec.LookPath("sh")
	if err != nil {
		t.Skip("no sh")
	}
	for _, class := range append(classesThatSpellPatterns, "Firefox", "org.gnome.Nautilus") {
		h, _, n := newDriftHarness(t, driftOpts{})
		h.RecordWindow(editor)
		h.start(t, LevelWarn, "Editor")
		h.RecordWindow(Window{ID: "66", Class: class, Title: "a window", Available: true})
		h.settle()
		nudge, _ := n.first(t)
		hint := nudge.NoActionsHint
		_, rest, ok := strings.Cut(hint, "`antidrift allow ")
		word, _, ok2 := strings.Cut(rest, "` to allow it")
		if !ok || !ok2 {
			t.Fatalf("%q: NoActionsHint: got %q, want it to name `antidrift allow …` to allow it", class, hint)
		}
		cmd := exec.Command(sh, "-c", "set -- "+word+`; printf '%s\n' "$#" "$1"`, "sh")
		cmd.Dir = t.TempDir()
		out, err := cmd.Output()
		if _, statErr := os.Stat(filepath.Join(cmd.Dir, "pwned")); statErr == nil {
			t.Errorf("%q: sh ran a command of the hint `%s`: got the file pwned, want none", class, word)
		}
		if want := "1\n" + LiteralRule(class) + "\n"; err != nil || string(out) != want {
			t.Errorf("%q: sh reads `%s` as %q (%v), want %q", class, word, out, err, want)
		}
		if class == "Firefox" && word != "Firefox" {
			t.Errorf("a plain class: got %q, want %q unquoted", word, "Firefox")
		}
	}
}

// A literal rule parses, and matches its class and no other.
func TestLiteralRuleMatchesItsClassOnly(t *testing.T) {
	for _, class := range classesThatSpellPatterns {
		r, err := ParseRule(LiteralRule(class))
		if err != nil {
			t.Errorf("%q: ParseRule(LiteralRule %q): got %v, want no error", class, LiteralRule(class), err)
			continue
		}
		if r.Narrowed() || !matchesClass(r, Window{Class: class}) || matchesClass(r, Window{Class: "Editor"}) || matchesClass(r, Window{Class: class + "x"}) {
			t.Errorf("%q: LiteralRule %q: got Narrowed %v, matches its class %v, Editor %v, %q %v; want false, true, false, false", class, LiteralRule(class), r.Narrowed(), matchesClass(r, Window{Class: class}), matchesClass(r, Window{Class: "Editor"}), class+"x", matchesClass(r, Window{Class: class + "x"}))
		}
	}
}

// A window that names no class or instance has no class to allow: its
// nudge offers "Not a distraction" (which remembers that very window) but
// no "Allow this window", which would allow a class no window has.
func TestANamelessWindowIsOfferedNotADistractionOnly(t *testing.T) {
	h, _, n := newDriftHarness(t, driftOpts{})
	h.RecordWindow(editor)
	h.start(t, LevelWarn, "Editor")
	h.RecordWindow(Window{ID: "66", Title: "a window", Available: true})
	h.settle()
	nudge, id := n.first(t)
	var keys []string
	for _, a := range nudge.Actions {
		keys = append(keys, a.Key)
	}
	if got, want := strings.Join(keys, " "), "refocus not_distraction"; got != want {
		t.Errorf("actions: got %q, want %q", got, want)
	}
	if strings.Contains(nudge.NoActionsHint, "antidrift allow") {
		t.Errorf("NoActionsHint: got %q, want no `antidrift allow`", nudge.NoActionsHint)
	}
	h.NotificationAction(id, "not_distraction")
	h.settle()
	if v := h.View(); v.Drift != DriftOnTask {
		t.Errorf("after Not a distraction: Drift: got %s (%s), want %s", v.Drift, v.DriftReason, DriftOnTask)
	}
}
