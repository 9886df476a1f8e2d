package main

import (
	"encoding/json"
	"maps"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"

	"github.com/antidrift/antidrift/internal/inert"
	"github.com/antidrift/antidrift/internal/testsupport/hostile"
)

// On a real (virtual) desktop, a window renamed to each hostile text — an
// xterm retitled with xdotool, as any program retitles itself — and a next
// action and success condition pasted with polybar tags, markup and a
// bidirectional override: status, status --follow in text, polybar and
// waybar, report and history write nothing a terminal acts on (read byte
// by byte), polybar reads no tag and waybar's Pango no markup. The daemon
// keeps each title exact (--json), and a rule matches the real title.
func TestHostileTitlesAndTasksStayText(t *testing.T) {
	x, _, browser, s := onDesktop(t, "Browser", "a page")
	next := "%{A1:touch /tmp/P:}XXXXX%{A} <b>x</b> & y \u202egnp.exe"
	done := "<img src=\"http://127.0.0.1:9/x.png\"> \u2066isolated\u2069 %{F#f00}red"
	// The rule names the title with the override in it as one character
	// (?): it matches the real title, never the escaped one.
	s.ok(t, "start", next, "--done-when", done, "--for", "10m", "--allow", "Editor", "--allow", "Browser:invoice?fdp.exe", "--enforce", "observe")

	env := s.d.Bus.Env()
	text := startFollow(t, env, "--format", "text")
	polybar := startFollow(t, env, "--format", "polybar")
	waybar := startFollow(t, env, "--format", "waybar")
	jsonF := startFollow(t, env, "--format", "json")
	terminal := func(what, out string) {
		t.Helper()
		if err := hostile.CheckTerminal(out); err != nil {
			t.Errorf("%s: got\n%s\nwant it inert: %v", what, out, err)
		}
	}
	// Polybar's line: the next action, its tags written "% {".
	line := polybar.next(t, "polybar's first line", func(string) bool { return true })
	terminal("status --follow --format polybar", line)
	if strings.Contains(line, "%{") || !strings.Contains(line, "% {A1:touch /tmp/P:}XXXXX% {A}") {
		t.Errorf("polybar line: got %q, want the next action's tags written \"%% {\"", line)
	}

	x.Activate(t, browser)
	for _, h := range hostile.Texts {
		x.SetTitle(t, browser, h.Text)
		s.waitForStatus(t, "antidriftd to see the title "+h.Name, map[string]any{"current_class": "Browser", "current_title": h.Text}) // exact
		shown := "Browser: " + prefix(inert.Terminal(h.Text), 40)
		out := s.ok(t, "status")
		terminal("status with "+h.Name, out)
		contains(t, "status with "+h.Name, out, "window       "+shown, inert.Terminal(next))

		line := text.next(t, "the text line with "+h.Name, func(l string) bool {
			terminal("status --follow --format text", l)
			return strings.Contains(l, shown)
		})
		contains(t, "status --follow --format text", line, inert.Terminal(next))
		waybar.next(t, "waybar's line with "+h.Name, func(l string) bool {
			var obj struct{ Text, Tooltip string }
			if err := json.Unmarshal([]byte(l), &obj); err != nil {
				t.Fatalf("waybar's line: got %s (%v), want JSON", l, err)
			}
			drawn := map[string]string{}
			for name, markup := range map[string]string{"text": obj.Text, "tooltip": obj.Tooltip} {
				var elements int
				drawn[name], elements = pango(t, markup)
				terminal("waybar's "+name, drawn[name])
				if elements != 0 {
					t.Errorf("waybar's %s %q: got %d elements as Pango reads it, want 0", name, markup, elements)
				}
			}
			return strings.Contains(drawn["tooltip"], shown)
		})
		jsonF.next(t, "the JSON line with "+h.Name, func(l string) bool {
			var st map[string]any
			return json.Unmarshal([]byte(l), &st) == nil && st["current_title"] == h.Text // exact
		})
	}

	// The rule matched the real title: with the override in it, the
	// window is on task.
	x.SetTitle(t, browser, "invoice\u202efdp.exe")
	s.waitForStatus(t, "the title with the override to be on task", map[string]any{"current_title": "invoice\u202efdp.exe", "drift": "on_task"})

	s.ok(t, "complete")
	s.ok(t, "end")
	report := s.ok(t, "report", "--today", "--state-dir", s.d.StateDir)
	terminal("report", report)
	contains(t, "report", report, prefix(inert.Terminal(next), 40), "Browser", `“\x1b`) // a title with an escape, shown
	// The raw log keeps every title as it came.
	raw := map[string]bool{}
	logs, _ := filepath.Glob(filepath.Join(s.d.StateDir, "sessions", "*.jsonl"))
	for _, log := range logs {
		data, err := os.ReadFile(log)
		if err != nil {
			t.Fatal(err)
		}
		for _, line := range strings.Split(string(data), "\n") {
			var e struct{ Title string }
			if json.Unmarshal([]byte(line), &e) == nil {
				raw[e.Title] = true
			}
		}
	}
	for _, h := range hostile.Texts {
		if !raw[h.Text] {
			t.Errorf("titles in the raw log (%s): got %v, want the title %s exactly among them", logs, slices.Collect(maps.Keys(raw)), h.Name)
		}
	}
	history := s.ok(t, "history")
	terminal("history", history)
	contains(t, "history", history, prefix(inert.Terminal(next), 40))
	t.Logf("report:\n%s\nhistory:\n%s", report, history)
}
