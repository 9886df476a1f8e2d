package dist

import (
	"os"
	"path/filepath"
	"regexp"
	"strings"
	"testing"
)

// Text from outside (a window title, a class, the next action, a model's
// drift reason, the daemon's error messages) reaches the panels a shell
// loads. Qt's Text, Label and Heading read it as rich text by default
// (Text.AutoText), which loads an <img src> and draws an <a href>; so every
// one of them in the Plasma applet is plain text, and so is its tooltip.
func TestPlasmaAppletShowsEveryTextAsPlainText(t *testing.T) {
	ui := filepath.Join("plasma", "org.antidrift.panel", "contents", "ui")
	files, err := filepath.Glob(filepath.Join(ui, "*.qml"))
	if err != nil || len(files) == 0 {
		t.Fatalf("no QML in %s: %v", ui, err)
	}
	textItem := regexp.MustCompile(`\b(PlasmaComponents\.Label|QQC2\.Label|Kirigami\.Heading|Kirigami\.Label|Text|Label|Heading|PlasmaExtras\.Heading)\s*\{`)
	labels := 0
	for _, f := range files {
		src, err := os.ReadFile(f)
		if err != nil {
			t.Fatal(err)
		}
		for _, at := range textItem.FindAllIndex(src, -1) {
			labels++
			body := block(src[at[1]-1:])
			if !regexp.MustCompile(`(?m)^\s*textFormat:\s*Text\.PlainText\s*$`).Match(body) {
				line := strings.Count(string(src[:at[0]]), "\n") + 1
				t.Errorf("%s:%d: got a %s without textFormat, want textFormat: Text.PlainText", f, line, strings.TrimSpace(string(src[at[0]:at[1]-1])))
			}
		}
		if filepath.Base(f) == "main.qml" && !regexp.MustCompile(`(?m)^\s*toolTipTextFormat:\s*Text\.PlainText\s*$`).Match(src) {
			t.Errorf("%s: the tooltip (toolTipMainText: the next action): got no toolTipTextFormat: Text.PlainText, want it", f)
		}
	}
	if labels < 10 {
		t.Errorf("labels found in the applet: got %d, want at least 10 (fewer: the pattern no longer finds them)", labels)
	}
}

// block is the {…} that src opens with its first byte, braces balanced,
// without the blocks nested in it (a nested label is checked on its own).
func block(src []byte) []byte {
	var own []byte
	depth := 0
	for i, c := range src {
		switch c {
		case '{':
			depth++
		case '}':
			depth--
			if depth == 0 {
				return append(own, src[i])
			}
		}
		if depth == 1 || (depth == 2 && c == '{') {
			own = append(own, c)
		}
	}
	return own
}

// The GNOME Shell extension shows such text through St.Label's text (plain:
// Clutter reads markup only when told to) and its errors through
// Main.notifyError (a MessageTray notification, whose body is escaped
// unless useBodyMarkup is set). Nothing in it may turn markup on.
func TestGnomeExtensionNeverReadsMarkup(t *testing.T) {
	files, err := filepath.Glob(filepath.Join("gnome-shell", "antidrift@antidrift.github.io", "*.js"))
	if err != nil || len(files) == 0 {
		t.Fatalf("no extension sources: %v", err)
	}
	markup := regexp.MustCompile(`use_markup|useMarkup|set_markup|setMarkup|useBodyMarkup|bannerMarkup|parse_markup|clutter_text\.markup`)
	for _, f := range files {
		src, err := os.ReadFile(f)
		if err != nil {
			t.Fatal(err)
		}
		for _, at := range markup.FindAllIndex(src, -1) {
			t.Errorf("%s:%d: got %s, want no text read as markup", f, strings.Count(string(src[:at[0]]), "\n")+1, src[at[0]:at[1]])
		}
	}
}
