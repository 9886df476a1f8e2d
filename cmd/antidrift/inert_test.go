package main

import (
	"encoding/json"
	"io"
	"regexp"
	"strings"
	"testing"
	"time"

	"github.com/godbus/dbus/v5"

	"github.com/antidrift/antidrift/internal/inert"
	"github.com/antidrift/antidrift/internal/testsupport/hostile"
)

// hostileStatus is a status whose every text from outside is text.
func hostileStatus(text, state string, now time.Time) *status {
	v := dbus.MakeVariant
	return decodeStatus(map[string]dbus.Variant{
		"State": v(state), "NextAction": v(text), "SuccessCondition": v(text), "Outcome": v(text),
		"Enforcement": v(text), "Drift": v("drifting"), "DriftReason": v(text), "CurrentClass": v(text),
		"CurrentTitle": v(text), "CurrentSite": v(text), "EvidenceAvailable": v(true), "TimeboxSeconds": v(uint64(1500)),
		"Deadline": v(now.Add(10 * time.Minute).Unix()), "AllowedClasses": v([]string{text, "Editor"}),
		"Problems": v([]string{text}), "SwitchCount": v(uint32(3)), "MinimizeCount": v(uint32(1)),
		"Buckets": v([]bucket{{text, text, 600}, {"Editor", "main.go", 60}}),
	})
}

// prefix is s's first n characters.
func prefix(s string, n int) string { return string([]rune(s)[:min(n, len([]rune(s)))]) }

// ourColours are the SGR sequences the CLI paints with itself.
var ourColours = regexp.MustCompile(`\x1b\[(1|32|33|1;31|0)m`)

// Every view of the status a terminal shows — status in colour and
// without, a confirmation, status --follow's text line — holds nothing of
// a hostile text that the terminal acts on, and shows that it was there.
func TestTerminalViewsOfTheStatusAreInert(t *testing.T) {
	now := time.Now()
	for _, h := range hostile.Texts {
		for _, state := range []string{"active", "review"} {
			s := hostileStatus(h.Text, state, now)
			shown := inert.Terminal(h.Text)
			views := map[string]string{
				"status":          statusText(s, now, textOpts{}),
				"status (colour)": ourColours.ReplaceAllString(statusText(s, now, textOpts{colour: true}), ""),
				"status --follow": statusLine("text", s, now),
				"start":           confirmation("Start", s, now),
				"allow":           confirmation("Allow", s, now),
				"complete":        confirmation("Complete", s, now),
			}
			for view, out := range views {
				if err := hostile.CheckTerminal(out); err != nil {
					t.Errorf("%s, %s: %s: got %q, want it inert: %v", h.Name, state, view, out, err)
				}
				if view != "complete" && !strings.Contains(out, prefix(shown, 20)) {
					t.Errorf("%s, %s: %s: got\n%s\nwant it to show %q", h.Name, state, view, out, shown)
				}
			}
			// Every row of status: the next action, done when, drift's
			// reason, enforcement's allowed classes, the window, the
			// chart, the problems.
			if state == "active" {
				text := views["status"]
				if n := strings.Count(text, prefix(shown, 15)); n < 10 {
					t.Errorf("%s: the text in status: got %d times, want it in every row (10):\n%s", h.Name, n, text)
				}
				plain := statusText(hostileStatus("plain", state, now), now, textOpts{})
				if strings.Count(text, "\n") != strings.Count(plain, "\n") {
					t.Errorf("%s: status: got %d lines, want %d, as of a plain text:\n%s", h.Name, strings.Count(text, "\n"), strings.Count(plain, "\n"), text)
				}
			}
		}
	}
}

// status --follow --format polybar: no formatting tag of the text's
// opens, and nothing a terminal would act on (polybar's line protocol
// breaks on a newline).
func TestPolybarLineOpensNoTag(t *testing.T) {
	now := time.Now()
	for _, h := range hostile.Texts {
		line := statusLine("polybar", hostileStatus(h.Text, "active", now), now)
		if strings.Contains(line, "%{") {
			t.Errorf("%s: polybar line: got %q, want no %%{ (a tag polybar reads)", h.Name, line)
		}
		if err := hostile.CheckTerminal(line); err != nil || strings.Contains(line, "\n") {
			t.Errorf("%s: polybar line: got %q, want one inert line: %v", h.Name, line, err)
		}
	}
}

// status --follow --format waybar: what waybar's Pango draws of text and
// tooltip is the text as status shows it, with no tag read.
func TestWaybarLineIsDrawnAsText(t *testing.T) {
	now := time.Now()
	for _, h := range hostile.Texts {
		s := hostileStatus(h.Text, "active", now)
		var obj struct{ Text, Tooltip string }
		line := statusLine("waybar", s, now)
		if err := json.Unmarshal([]byte(line), &obj); err != nil {
			t.Fatalf("%s: waybar line: got %s, want JSON: %v", h.Name, line, err)
		}
		for what, want := range map[string]string{obj.Text: panelText(s, now), obj.Tooltip: strings.TrimRight(statusText(s, now, textOpts{minutes: true}), "\n")} {
			drawn, elements := pango(t, what)
			if drawn != want || elements != 0 {
				t.Errorf("%s: what Pango draws: got %q with %d elements, want %q with none", h.Name, drawn, elements, want)
			}
			if err := hostile.CheckTerminal(drawn); err != nil {
				t.Errorf("%s: what Pango draws: got %q, want it inert: %v", h.Name, drawn, err)
			}
		}
	}
}

// pango is what Pango draws of markup, and how many elements it read.
func pango(t *testing.T, markup string) (string, int) {
	t.Helper()
	text, elements, err := hostile.Markup(markup)
	if err != nil {
		t.Fatalf("got %q, want markup Pango reads: %v", markup, err)
	}
	return text, elements
}

// --json and status --follow --format json keep the text exact.
func TestJSONKeepsTheTextExact(t *testing.T) {
	now := time.Now()
	for _, h := range hostile.Texts {
		var obj struct {
			CurrentTitle string `json:"current_title"`
			NextAction   string `json:"next_action"`
			Buckets      []struct{ Title string }
		}
		line := statusLine("json", hostileStatus(h.Text, "active", now), now)
		if err := json.Unmarshal([]byte(line), &obj); err != nil {
			t.Fatalf("%s: --format json: got %s, want JSON: %v", h.Name, line, err)
		}
		// Exact once decoded, and inert as printed: --json is read in a
		// terminal too, and encoding/json writes DEL, C1 and bidi raw.
		if err := hostile.CheckTerminal(line); err != nil {
			t.Errorf("%s: --format json: got %q, want it inert: %v", h.Name, line, err)
		}
		if obj.CurrentTitle != h.Text || obj.NextAction != h.Text || len(obj.Buckets) == 0 || obj.Buckets[0].Title != h.Text {
			t.Errorf("%s: JSON: got %+v, want current_title, next_action and the first bucket's title to be %q exactly", h.Name, obj, h.Text)
		}
	}
}

// history's table: one row per session, nothing a terminal acts on.
func TestHistoryTableIsInert(t *testing.T) {
	for _, h := range hostile.Texts {
		v := dbus.MakeVariant
		out := historyText([]map[string]dbus.Variant{{"device": v(h.Text), "seq": v(uint32(1)), "next_action": v(h.Text), "outcome": v(h.Text), "enforcement": v(h.Text)}})
		if err := hostile.CheckTerminal(out); err != nil {
			t.Errorf("%s: history table: got %q, want it inert: %v", h.Name, out, err)
		}
		if strings.Count(out, "\n") != 2 {
			t.Errorf("%s: history table: got %d lines, want 2 (header and one row):\n%s", h.Name, strings.Count(out, "\n"), out)
		}
	}
}

// A message on stderr (a refusal in the daemon's words, a path that was
// typed) keeps its lines and nothing else: here a state directory whose
// name is hostile, which report names as it is.
func TestMessagesAreInert(t *testing.T) {
	t.Setenv("XDG_CONFIG_HOME", t.TempDir())
	for _, h := range hostile.Texts {
		var stderr strings.Builder
		code := run([]string{"report", "--state-dir", "/nonexistent/" + h.Text}, io.Discard, &stderr)
		if code != exitUsage || !strings.Contains(stderr.String(), "/nonexistent/"+prefix(inert.Terminal(h.Text), 10)) {
			t.Errorf("%s: got exit %d:\n%s\nwant exit %d naming the directory", h.Name, code, stderr.String(), exitUsage)
		}
		if err := hostile.CheckTerminal(stderr.String()); err != nil {
			t.Errorf("%s: stderr: got %q, want it inert: %v", h.Name, stderr.String(), err)
		}
	}
}

// verify --journal names what the journal recorded and the file lacks, in
// the hashes and session ids found there, whatever they hold: one line each.
func TestMissingHeadsAreInert(t *testing.T) {
	for _, h := range hostile.Texts {
		journal := []journalHead{{Seq: 1, Hash: h.Text, SessionID: h.Text}, {Seq: 2, Hash: "ab" + h.Text, SessionID: h.Text}}
		for _, line := range missingHeads(journal, map[uint64]string{2: h.Text}) {
			if err := hostile.CheckTerminal(line); err != nil || strings.Contains(line, "\n") {
				t.Errorf("%s: missing head: got %q, want one inert line: %v", h.Name, line, err)
			}
		}
	}
}

// What was typed and is quoted back in a usage error (a duration, a flag's
// name) is one line of the message, made inert: a pasted argument with a
// newline forges no line of antidrift's own, and an escape reaches the
// terminal as text. No bus is needed: these are refused before any call.
func TestTypedTextInUsageErrorsForgesNoLine(t *testing.T) {
	const forged = "antidrift: all good"
	for _, h := range hostile.Texts {
		for _, args := range [][]string{
			{"extend", "5m\n" + forged + h.Text},
			{"start", "x", "--done-when", "y", "--for", "1\n" + forged + h.Text},
			{"status", "--fo\n" + forged + h.Text},
		} {
			var stderr strings.Builder
			code := run(args, io.Discard, &stderr)
			if code != exitUsage {
				t.Errorf("%s: %q: got exit %d, want %d:\n%s", h.Name, args, code, exitUsage, stderr.String())
			}
			if err := hostile.CheckTerminal(stderr.String()); err != nil {
				t.Errorf("%s: %q: stderr: got %q, want it inert: %v", h.Name, args, stderr.String(), err)
			}
			if strings.Contains(stderr.String(), "\n"+forged) {
				t.Errorf("%s: %q: stderr: got\n%s\nwant no line of its own started by a typed newline", h.Name, args, stderr.String())
			}
		}
	}
}
