package service

import (
	"reflect"
	"regexp"
	"strings"
	"testing"
	"time"
)

func titled(id, class, title string) Window {
	return Window{ID: id, Class: class, Instance: strings.ToLower(class), Title: title, Available: true}
}

var (
	docs    = titled("40", "Firefox", "antidrift/antidrift: Pull request 12 - GitHub — Mozilla Firefox")
	youtube = titled("41", "Firefox", "Cat videos - YouTube — Mozilla Firefox")
	htop    = titled("42", "XTerm", "htop")
)

func TestGlobsMatchCaseInsensitivelyAndWhole(t *testing.T) {
	for _, c := range []struct {
		rule, class, title string
		want               bool
	}{
		{"firefox:*GitHub*", "Firefox", "PR - github — Mozilla Firefox", true},
		{"firefox:*GitHub*", "Firefox", "YouTube", false},
		{"Firefox", "firefox", "anything", true},
		{"fire", "Firefox", "", false}, // a class is matched whole, not as a prefix
		{"*:*antidrift*", "XTerm", "vim ~/src/antidrift/README.md", true},
		{"*:*antidrift*", "XTerm", "", false},
		{"term:build ?", "Term", "build 7", true},
		{"term:[!x]*", "Term", "xclock", false},
		{"term:[a-c]*", "Term", "Build", true}, // ranges fold case too
		{`term:\*star\*`, "Term", "*STAR*", true},
		{`term:\*star\*`, "Term", "xstarx", false},
		{"term:a/b*", "Term", "a/b/c: slashes are plain text", true},
		{"term:[]]", "Term", "]", true},
		{"term:*:*", "Term", "http://example.org", true}, // the first ':' splits
	} {
		r, err := ParseRule(c.rule)
		if err != nil {
			t.Fatalf("ParseRule(%q): got %v, want no error", c.rule, err)
		}
		w := Window{Class: c.class, Title: c.title, Available: true}
		if got := matches(r, w, FoldTitle(c.title)); got != c.want {
			t.Errorf("%q on %s %q: got %v, want %v", c.rule, c.class, c.title, got, c.want)
		}
	}
}

func TestTitleRulesNarrowAnAllowedClass(t *testing.T) {
	h, _, n := newDriftHarness(t, driftOpts{})
	h.RecordWindow(docs)
	h.start(t, LevelWarn, "Editor", "firefox:*GitHub*")
	if v := h.View(); v.Drift != DriftOnTask || v.DriftReason != "matches allowed firefox:*GitHub*" {
		t.Fatalf("docs in the browser: got %s (%q), want %s (%q)", v.Drift, v.DriftReason, DriftOnTask, "matches allowed firefox:*GitHub*")
	}
	h.RecordWindow(youtube)
	h.settle()
	v := h.View()
	if v.Drift != DriftDrifting || v.DriftReason != "this Firefox window matches none of this session's allowed titles" {
		t.Fatalf("YouTube in the same browser: got %s (%q), want %s (%q)", v.Drift, v.DriftReason, DriftDrifting, "this Firefox window matches none of this session's allowed titles")
	}
	if shown, _ := n.history(); len(shown) != 1 || shown[0].Summary != "Drifting: Firefox" {
		t.Fatalf("nudges: got %+v, want one %q", shown, "Drifting: Firefox")
	}
	// Allow takes a pattern too, and answers for the current window at once.
	must(t, h.Allow("*:*cat videos*"))
	if v := h.View(); v.Drift != DriftOnTask || v.DriftReason != "matches allowed *:*cat videos*" {
		t.Fatalf("after allowing the title: got %s (%q), want %s (%q)", v.Drift, v.DriftReason, DriftOnTask, "matches allowed *:*cat videos*")
	}
	err := h.Allow("firefox:[GitHub")
	if e, ok := err.(*Error); !ok || e.Kind != InvalidArgument || !strings.Contains(e.Msg, `window_class "firefox:[GitHub"`) || !strings.Contains(e.Msg, "never closed") {
		t.Fatalf("a bad pattern: got %v, want InvalidArgument naming %s and saying it is never closed", err, `window_class "firefox:[GitHub"`)
	}
}

func TestRulesSeeTheScrubbedRedactedTitleNeverTheRawOne(t *testing.T) {
	h, _, _ := newDriftHarness(t, driftOpts{redact: []*regexp.Regexp{regexp.MustCompile(`payroll-\w+`)}, private: []string{"KeePassXC"}})
	h.RecordWindow(titled("1", "XTerm", "vim payroll-2027.csv"))
	h.start(t, LevelWarn, "xterm:*payroll*", "xterm:*…*", "keepassxc:*bank*")
	if v := h.View(); v.DriftReason != "matches allowed xterm:*…*" {
		t.Fatalf("DriftReason: got %q, want %q (the redacted part never matches a rule)", v.DriftReason, "matches allowed xterm:*…*")
	}
	h.RecordWindow(titled("2", "XTerm", "mpv 12:30 45% — talk"))
	must(t, h.Allow("xterm:mpv 9:15 10% — talk")) // written from another reading: the clock and progress fold
	if v := h.View(); v.Drift != DriftOnTask {
		t.Fatalf("the folded title: Drift: got %s (%q), want %s", v.Drift, v.DriftReason, DriftOnTask)
	}
	h.RecordWindow(titled("3", "KeePassXC", "bank - KeePassXC"))
	h.settle()
	if v := h.View(); v.Drift != DriftDrifting {
		t.Fatalf("a private class's title: Drift: got %s (%q), want %s (its title never matched)", v.Drift, v.DriftReason, DriftDrifting)
	}
}

// TestRulesSeeCountersFoldedAndAsShown: a rule written for one reading of a
// ticking title matches every other, and a rule about the counter itself
// still sees the title as the window shows it.
func TestRulesSeeCountersFoldedAndAsShown(t *testing.T) {
	for _, c := range []struct {
		rule, title string
		want        bool
	}{
		{"firefox:(3) Inbox*", "(4) Inbox - Mail", true},
		{"firefox:(3) Inbox*", "Inbox - Mail", true}, // the badge is gone at zero
		{"firefox:Design doc 1", "Design doc 1041", true},
		{"firefox:*Build #12*", "CI: Build #13 failed", true},
		{"firefox:Design doc 1", "Design doc", false},
		{"firefox:*(1?)*", "(12) Inbox", true}, // the counter itself, as shown
		{"firefox:*(1?)*", "(3) Inbox", false},
		{"firefox:[0-9]*", "7 tabs", true},
		{"firefox:[12]*", "Inbox", false}, // a set is never folded away
		{"firefox:mp3 *", "mp4 player", false},
	} {
		r, err := ParseRule(c.rule)
		if err != nil {
			t.Fatalf("ParseRule(%q): got %v, want no error", c.rule, err)
		}
		w := Window{Class: "Firefox", Title: c.title, Available: true}
		if got := matches(r, w, FoldTitle(c.title)); got != c.want {
			t.Errorf("%q on %q: got %v, want %v", c.rule, c.title, got, c.want)
		}
	}
}

func TestDistractionBeatsAnAllowedClassAndNamesTheRule(t *testing.T) {
	h, _, _ := newDriftHarness(t, driftOpts{distractions: []string{"*:*reddit*", "*:*YouTube*", "steam"}})
	h.RecordWindow(docs)
	h.start(t, LevelWarn, "Firefox", "Steam")
	if v := h.View(); v.Drift != DriftOnTask || v.DriftReason != "Firefox is allowed in this session" {
		t.Fatalf("docs: got %s (%q), want %s (%q)", v.Drift, v.DriftReason, DriftOnTask, "Firefox is allowed in this session")
	}
	h.RecordWindow(youtube)
	h.settle()
	if v := h.View(); v.Drift != DriftDrifting || v.DriftReason != "matches distraction *:*YouTube*" {
		t.Fatalf("YouTube in an allowed browser: got %s (%q), want %s (%q)", v.Drift, v.DriftReason, DriftDrifting, "matches distraction *:*YouTube*")
	}
	h.RecordWindow(titled("5", "Steam", "Library"))
	if v := h.View(); v.Drift != DriftDrifting || v.DriftReason != "matches distraction steam" {
		t.Fatalf("an allowed class that is also a distraction: got %s (%q), want %s (%q)", v.Drift, v.DriftReason, DriftDrifting, "matches distraction steam")
	}
}

func TestNotADistractionExemptsTheWindowForTheSessionAndSurvivesRestart(t *testing.T) {
	h, _, n := newDriftHarness(t, driftOpts{distractions: []string{"*:*YouTube*"}})
	h.RecordWindow(docs)
	h.start(t, LevelBlock, "firefox:*GitHub*")
	h.RecordWindow(youtube)
	h.settle()
	shown, ids := n.history()
	if len(shown) != 1 || !reflect.DeepEqual(actionKeys(shown[0]), []string{"refocus", "allow", "not_distraction"}) || shown[0].Actions[2].Label != "Not a distraction" {
		t.Fatalf("nudges: got %+v, want one with actions refocus, allow, not_distraction, the third labelled %q", shown, "Not a distraction")
	}
	h.RecordWindow(docs) // the guard iconified it and handed focus back
	h.NotificationAction(ids[0], "not_distraction")
	h.settle()
	if len(n.onScreen()) != 0 {
		t.Fatalf("nudges on screen after Not a distraction: got %+v, want none", n.onScreen())
	}
	h.clock.Advance(time.Minute)
	h.RecordWindow(youtube)
	h.settle()
	if v := h.View(); v.Drift != DriftOnTask || v.DriftReason != "you marked this Firefox window as not a distraction" {
		t.Fatalf("back on the exempted window: got %s (%q), want %s (%q)", v.Drift, v.DriftReason, DriftOnTask, "you marked this Firefox window as not a distraction")
	}
	other := titled("43", "Firefox", "Dog videos - YouTube — Mozilla Firefox")
	h.RecordWindow(other)
	h.settle()
	if v := h.View(); v.Drift != DriftDrifting {
		t.Fatalf("another YouTube title: Drift: got %s, want %s (only the marked title is exempt)", v.Drift, DriftDrifting)
	}
	var marks []FocusEvent
	must(t, h.store.EachEvent(h.View().SessionID, func(e FocusEvent) {
		if e.Mark == MarkNotDistraction {
			marks = append(marks, e)
		}
	}))
	if len(marks) != 1 || marks[0].Class != "Firefox" || marks[0].Title != FoldTitle(youtube.Title) {
		t.Fatalf("raw log marks: got %+v, want one for Firefox titled %q", marks, FoldTitle(youtube.Title))
	}
	h.RecordWindow(youtube)
	live := h.View()
	r := h.restart(t) // the restored allowlist alone judges YouTube off task
	r.RecordWindow(other)
	if v := r.View(); v.Drift == DriftOnTask {
		t.Fatalf("after restart another title: Drift: got %s (%q), want anything but %s", v.Drift, v.DriftReason, DriftOnTask)
	}
	r.RecordWindow(youtube)
	if v := r.View(); v.Drift != DriftOnTask || v.DriftReason != "you marked this Firefox window as not a distraction" || v.MinimizeCount != live.MinimizeCount {
		t.Fatalf("after restart: Drift, DriftReason, MinimizeCount: got %s %q %d, want %s %q %d", v.Drift, v.DriftReason, v.MinimizeCount, DriftOnTask, "you marked this Firefox window as not a distraction", live.MinimizeCount)
	}
}

func TestNotADistractionIsRefusedAtLocked(t *testing.T) {
	h, _, n := newDriftHarness(t, driftOpts{})
	h.RecordWindow(docs)
	h.start(t, LevelLocked, "Editor")
	h.settle()
	shown, ids := n.history()
	if len(shown) != 1 || !reflect.DeepEqual(actionKeys(shown[0]), []string{"refocus"}) {
		t.Fatalf("locked nudges: got %+v, want one with only the action refocus", shown)
	}
	h.NotificationAction(ids[0], "not_distraction") // a stale or forged action
	if v := h.View(); v.Drift != DriftDrifting {
		t.Fatalf("locked after Not a distraction: Drift: got %s, want %s (the action is not obeyed)", v.Drift, DriftDrifting)
	}
	if err := h.notDistraction("Firefox", FoldTitle(docs.Title)); err == nil || !strings.Contains(err.Error(), "Allow is not permitted") {
		t.Fatalf("notDistraction at locked: got %v, want a refusal saying Allow is not permitted", err)
	}
}

func TestATabThatTurnsIntoADistractionIsIconifiedNotRaisedAgain(t *testing.T) {
	h, g, _ := newDriftHarness(t, driftOpts{distractions: []string{"*:*YouTube*"}})
	h.RecordWindow(docs)
	h.start(t, LevelBlock, "Firefox")
	h.RecordWindow(titled(docs.ID, "Firefox", youtube.Title)) // the same window, another tab
	h.settle()
	if m, a := g.calls(); !reflect.DeepEqual(m, []string{docs.ID}) || len(a) != 0 {
		t.Fatalf("guard calls: got minimized %v, activated %v, want [%s] iconified and nothing raised", m, a, docs.ID)
	}
}
