package apps

import "testing"

func TestLabelShowsTheClassOnlyWhenItSaysMore(t *testing.T) {
	for _, c := range []struct{ class, name, want string }{
		{"org.mozilla.firefox", "Firefox", "Firefox"},
		{"firefox-esr", "Firefox ESR", "Firefox ESR"},
		{"Emacs", "GNU Emacs", "GNU Emacs"},
		{"jetbrains-idea", "IntelliJ IDEA", "IntelliJ IDEA (jetbrains-idea)"},
		{"org.gnome.Nautilus", "Dateien", "Dateien (org.gnome.Nautilus)"},
		{"XTerm", "", "XTerm"},
		{"", "Orphan", "Orphan"},
		{"kitty", "!!!", "!!! (kitty)"},
	} {
		if got := Label(c.class, c.name); got != c.want {
			t.Errorf("Label(%q, %q): got %q, want %q", c.class, c.name, got, c.want)
		}
	}
}
