package service

import (
	"strings"
	"testing"
	"time"
)

// step is one stretch of a hand-made session: a window in front for secs,
// judged off task or not. Site is the page in front, for browsers.
type step struct {
	class string
	off   bool
	secs  int
	site  string
	mark  string // MarkNotDistraction (about the window in front), MarkAway
	title string // "" is "t"
}

// evidenceOf plays steps through the accounting, as a live session or a
// replay would, and ends it as the move to review does.
func evidenceOf(steps []step) ReviewEvidence {
	st := newStats()
	at := int64(1_700_000_000_000)
	for _, s := range steps {
		title := s.title
		if title == "" {
			title = "t"
		}
		switch s.mark {
		case MarkNotDistraction:
			st.apply(FocusEvent{AtUnixMillis: at, Mark: MarkNotDistraction, Class: s.class, Title: title})
			st.apply(FocusEvent{AtUnixMillis: at, Mark: MarkVerdict, OffTask: false})
		case "gap": // no window has focus
			st.apply(FocusEvent{AtUnixMillis: at, Reason: "no focus"})
		case MarkAway:
			st.apply(FocusEvent{AtUnixMillis: at, Mark: MarkAway, Reason: AwayIdle})
			at += int64(s.secs) * 1000
			st.apply(FocusEvent{AtUnixMillis: at, Mark: MarkBack})
			continue
		default:
			st.apply(FocusEvent{AtUnixMillis: at, Class: s.class, Title: title, Site: s.site, Available: true, OffTask: s.off})
		}
		at += int64(s.secs) * 1000
	}
	st.apply(FocusEvent{AtUnixMillis: at, Mark: MarkPause})
	return st.review.evidence()
}

func on(class string, secs int) step  { return step{class: class, secs: secs} }
func gap(secs int) step               { return step{secs: secs, mark: "gap"} }
func off(class string, secs int) step { return step{class: class, off: true, secs: secs} }

func rulesOf(t *testing.T, texts ...string) []Rule {
	var out []Rule
	for _, x := range texts {
		r, err := ParseRule(x)
		if err != nil {
			t.Fatal(err)
		}
		out = append(out, r)
	}
	return out
}

func TestProposals(t *testing.T) {
	warn := ReviewSettings{Level: LevelWarn, DefaultLevel: LevelWarn, Grace: 30 * time.Second, NudgeRepeat: 2 * time.Minute, Nudges: true}
	with := func(f func(*ReviewSettings)) ReviewSettings { s := warn; f(&s); return s }
	type want struct{ kind, change, reason string }
	lookups := []step{on("Emacs", 60), off("Zeal", 20), on("Emacs", 60), off("Zeal", 25), on("Emacs", 60), off("Zeal", 15), on("Emacs", 60)}
	youtube := func(secs int) step {
		return step{class: "firefox", off: true, secs: secs, site: "www.youtube.com/watch"}
	}
	for _, tc := range []struct {
		name  string
		steps []step
		set   ReviewSettings
		want  []want
	}{
		{"nothing happened", nil, warn, nil},
		{"all on task", []step{on("Emacs", 3600)}, warn, nil},
		{"a docs window looked up three times between on-task work", lookups, warn, []want{
			{ProposeAllow, `allowed_classes + "Zeal"`, "Zeal was judged drift for 1m0s in 3 visits, 3 of them a quick look (the longest 25s) followed straight by on-task work"},
		}},
		{"looked up, passing through a moment of no focus on the way back", []step{on("Emacs", 60), off("Zeal", 20), gap(1), on("Emacs", 60), off("Zeal", 25), gap(2), gap(1), on("Emacs", 60), off("Zeal", 15), gap(1), on("Emacs", 60)}, warn, []want{
			{ProposeAllow, `allowed_classes + "Zeal"`, "in 3 visits, 3 of them a quick look"},
		}},
		{"looked up, but then nothing had focus for long", []step{on("Emacs", 60), off("Zeal", 20), gap(11), on("Emacs", 60), off("Zeal", 25), gap(1), on("Emacs", 60), off("Zeal", 15), gap(1), on("Emacs", 60)}, warn, []want{
			{ProposeDistraction, `distractions + "Zeal"`, "in 3 visits (the longest 25s)"}, // two look-ups are not enough
		}},
		{"looked up, but went on to another off-task window after the gap", []step{on("Emacs", 60), off("Zeal", 20), gap(1), on("Emacs", 60), off("Zeal", 25), gap(1), on("Emacs", 60), off("Zeal", 15), gap(1), off("Chat", 5), on("Emacs", 60)}, warn, []want{
			{ProposeDistraction, `distractions + "Zeal"`, "1m0s of the session's 1m5s, in 3 visits"}, // two look-ups; Chat's one is not enough
		}},
		{"looked up only twice", lookups[:4], warn, nil},
		{"looked up, but once for four minutes", append(append([]step{}, lookups...), off("Zeal", 240), on("Emacs", 10)), warn, []want{
			{ProposeDistraction, `distractions + "Zeal"`, "Zeal drew the most drift: 5m0s of the session's 5m0s, in 4 visits (the longest 4m0s)"},
		}},
		{"looked up, but left to another off-task window each time", []step{on("Emacs", 60), off("Zeal", 20), off("Chat", 5), on("Emacs", 60), off("Zeal", 20), off("Chat", 5), on("Emacs", 60), off("Zeal", 20), off("Chat", 5), on("Emacs", 60)}, warn, []want{
			{ProposeAllow, `allowed_classes + "Chat"`, "3 of them a quick look"},
			{ProposeDistraction, `distractions + "Zeal"`, "Zeal drew the most drift: 1m0s of the session's 1m15s, in 3 visits (the longest 20s)"},
		}},
		{"the docs are already allowed", lookups, with(func(s *ReviewSettings) { s.Allowed = rulesOf(t, "zeal") }), nil},
		{"a title rule does not count as allowing the window", lookups, with(func(s *ReviewSettings) { s.Allowed = rulesOf(t, "zeal:*manual*") }), []want{
			{ProposeAllow, `allowed_classes + "Zeal"`, "3 visits"},
		}},
		{"answered not a distraction", []step{on("Emacs", 60), off("Okular", 40), {class: "Okular", secs: 300, mark: MarkNotDistraction}, on("Emacs", 60)}, warn, []want{
			{ProposeAllow, `allowed_classes + "Okular"`, `you answered "not a distraction" for Okular once; it held 5m0s on task and 40s judged drift`},
		}},
		{"answered not a distraction for one title while the class's other titles drifted", []step{on("Emacs", 60), {class: "Okular", off: true, secs: 40, title: "spec: v2 [draft].pdf"}, {class: "Okular", secs: 300, mark: MarkNotDistraction, title: "spec: v2 [draft].pdf"}, on("Emacs", 60), {class: "Okular", off: true, secs: 200, title: "novel.epub"}, on("Emacs", 60)}, warn, []want{
			{ProposeAllow, `allowed_classes + "Okular:spec\\: v2 \\[draft].pdf"`, "you answered \"not a distraction\" for this Okular title, and Okular's other titles drew 3m20s of drift after that: allow the title, not the whole class"},
		}},
		{"the answered title is allowed already", []step{on("Emacs", 60), {class: "Okular", off: true, secs: 40, title: "spec.pdf"}, {class: "Okular", secs: 300, mark: MarkNotDistraction, title: "spec.pdf"}, on("Emacs", 60), {class: "Okular", off: true, secs: 50, title: "novel.epub"}, on("Emacs", 60)},
			with(func(s *ReviewSettings) { s.Allowed = rulesOf(t, "okular:spec*") }), nil},
		{"allowed during the session", []step{on("Emacs", 60), off("Okular", 90), on("Okular", 300), on("Emacs", 60)},
			with(func(s *ReviewSettings) { s.AllowedDuring = []string{"Okular", "firefox:*Docs*"} }), []want{
				{ProposeAllow, `allowed_classes + "Okular"`, "you allowed Okular during this session; it held 5m0s on task: keep it for every session"},
				{ProposeAllow, `allowed_classes + "firefox:*Docs*"`, "you allowed firefox:*Docs* during this session: keep it for every session"},
			}},
		{"allowed during the session, and in the person's rules already", []step{on("Emacs", 60), on("Okular", 300)},
			with(func(s *ReviewSettings) { s.AllowedDuring = []string{"Okular"}; s.Allowed = rulesOf(t, "okular") }), nil},
		{"a page answered not a distraction is allowed as its site", []step{on("Emacs", 60), {class: "firefox", off: true, secs: 40, site: "docs.python.org/3/"}, {class: "firefox", secs: 100, mark: MarkNotDistraction}, on("Emacs", 60)}, warn, []want{
			{ProposeAllow, `allowed_classes + "url:docs.python.org"`, "for docs.python.org once; it held 1m40s on task and 40s judged drift"},
		}},
		{"the site that drew the most drift", []step{on("Emacs", 600), youtube(300), on("Emacs", 60), off("Chat", 90), on("Emacs", 60)}, warn, []want{
			{ProposeDistraction, `distractions + "url:www.youtube.com"`, "www.youtube.com drew the most drift: 5m0s of the session's 6m30s, in 1 visits (the longest 5m0s)"},
		}},
		{"less than a minute of drift", []step{on("Emacs", 600), youtube(50), on("Emacs", 60)}, warn, nil},
		{"the worst is already a distraction", []step{on("Emacs", 600), youtube(300), on("Emacs", 60), off("Chat", 90)}, with(func(s *ReviewSettings) { s.Distractions = rulesOf(t, "url:*.youtube.com") }), nil},
		{"a class with control characters is never proposed (the rules file could not hold it)", []step{on("Emacs", 60), off("evil\n[x]", 90), on("Emacs", 60), off("Chat", 70), on("Emacs", 60)}, warn, []want{
			{ProposeDistraction, `distractions + "Chat"`, "Chat drew the most drift: 1m10s of the session's 2m40s"},
		}},
		{"a class with a strange name is proposed literally", []step{on("Emacs", 60), off("a:b*", 90), on("Emacs", 60)}, warn, []want{
			{ProposeDistraction, `distractions + "a\\:b\\*"`, "a:b* drew the most drift"},
		}},
		{"most episodes just outlasted the grace", []step{on("Emacs", 60), off("Zeal", 12), on("Emacs", 60), off("Man", 14), on("Emacs", 60), off("Zeal", 25), on("Emacs", 60), off("Chat", 8), on("Emacs", 9), off("Chat", 40), on("Emacs", 9)},
			with(func(s *ReviewSettings) { s.Grace = 10 * time.Second }), []want{
				{ProposeGrace, `drift_grace = "30s"`, "3 of the 4 episodes that outlasted the grace of 10s did so by 15s or less (the longest 25s): a grace of 30s covers them"},
			}},
		{"hopping between off-task windows is one episode", []step{on("Emacs", 60), off("Zeal", 6), off("Man", 6), on("Emacs", 60), off("Zeal", 6), off("Man", 6), on("Emacs", 60), off("Zeal", 6), off("Man", 6), on("Emacs", 60)},
			with(func(s *ReviewSettings) { s.Grace = 10 * time.Second }), []want{
				{ProposeAllow, `allowed_classes + "Man"`, "3 of them a quick look (the longest 6s)"},
				{ProposeGrace, `drift_grace = "15s"`, "3 of the 3 episodes that outlasted the grace of 10s did so by 15s or less (the longest 12s)"},
			}},
		{"half the episodes just outlasted the grace", []step{on("Emacs", 60), off("Zeal", 12), on("Emacs", 60), off("Zeal", 14), on("Emacs", 60), off("Chat", 26), on("Emacs", 60), off("Chat", 27), on("Emacs", 9)},
			with(func(s *ReviewSettings) { s.Grace = 10 * time.Second }), nil},
		{"going away ends an episode", []step{on("Emacs", 60), off("Zeal", 12), {secs: 600, mark: MarkAway}, off("Zeal", 12), on("Emacs", 60), off("Zeal", 13), on("Emacs", 60)},
			with(func(s *ReviewSettings) { s.Grace = 10 * time.Second }), []want{
				{ProposeGrace, `drift_grace = "15s"`, "3 of the 3 episodes"},
			}},
		{"nudges ignored twice at warn", []step{on("Emacs", 60), off("Chat", 30+150), on("Emacs", 60), off("Game", 30+120), on("Emacs", 60)},
			with(func(s *ReviewSettings) { s.Distractions = rulesOf(t, "chat", "game") }), []want{
				{ProposeLevel, `enforcement = "block"`, "2 nudges were ignored: drift went on for a whole nudge repeat (2m0s) after them, the longest episode 3m0s"},
			}},
		{"a nudge ignored once", []step{on("Emacs", 60), off("Chat", 30+150), on("Emacs", 60), off("Game", 30+119), on("Emacs", 60)},
			with(func(s *ReviewSettings) { s.Distractions = rulesOf(t, "chat", "game") }), nil},
		{"ignored, but the session was at block", []step{on("Emacs", 60), off("Chat", 180), on("Emacs", 60), off("Game", 180)},
			with(func(s *ReviewSettings) { s.Level = LevelBlock; s.Distractions = rulesOf(t, "chat", "game") }), nil},
		{"ignored, but no nudge was shown", []step{on("Emacs", 60), off("Chat", 180), on("Emacs", 60), off("Game", 180)},
			with(func(s *ReviewSettings) { s.Nudges = false; s.Distractions = rulesOf(t, "chat", "game") }), nil},
		{"ignored, but the person's level is block already", []step{on("Emacs", 60), off("Chat", 180), on("Emacs", 60), off("Game", 180)},
			with(func(s *ReviewSettings) { s.DefaultLevel = LevelBlock; s.Distractions = rulesOf(t, "chat", "game") }), nil},
		{"the example of docs/plan-and-review.md", append(append([]step{}, lookups...), youtube(280), on("Emacs", 60), youtube(150), on("Emacs", 60)),
			with(func(s *ReviewSettings) { s.Grace = 5 * time.Second; s.Allowed = rulesOf(t, "Emacs") }), []want{
				{ProposeAllow, `allowed_classes + "Zeal"`, "Zeal was judged drift for 1m0s in 3 visits, 3 of them a quick look (the longest 25s) followed straight by on-task work: it looks part of the task"},
				{ProposeDistraction, `distractions + "url:www.youtube.com"`, "www.youtube.com drew the most drift: 7m10s of the session's 8m10s, in 2 visits (the longest 4m40s)"},
				{ProposeLevel, `enforcement = "block"`, "2 nudges were ignored: drift went on for a whole nudge repeat (2m0s) after them, the longest episode 4m40s; at block the drifting window is minimized"},
			}},
		{"every kind at once, in order", append(append([]step{}, lookups...), youtube(300), on("Emacs", 60), off("Chat", 200), on("Emacs", 60)), warn, []want{
			{ProposeAllow, `allowed_classes + "Zeal"`, "3 visits"},
			{ProposeDistraction, `distractions + "url:www.youtube.com"`, "5m0s of the session's 9m20s"},
			{ProposeLevel, `enforcement = "block"`, "2 nudges were ignored"},
		}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			got := Proposals(evidenceOf(tc.steps), tc.set)
			if len(got) != len(tc.want) {
				t.Fatalf("got %d proposals %+v, want %d %+v", len(got), got, len(tc.want), tc.want)
			}
			for i, w := range tc.want {
				g := got[i]
				if g.Number != uint32(i+1) || g.Kind != w.kind || g.Change != w.change || !strings.Contains(g.Reason, w.reason) {
					t.Errorf("proposal %d: got %d %s %s %q, want %d %s %s with %q", i+1, g.Number, g.Kind, g.Change, g.Reason, i+1, w.kind, w.change, w.reason)
				}
			}
			if again := Proposals(evidenceOf(tc.steps), tc.set); len(again) != len(got) || (len(got) > 0 && again[0] != got[0]) {
				t.Errorf("not deterministic: got %+v, then %+v", got, again)
			}
		})
	}
}
