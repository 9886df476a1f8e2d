package apps

import (
	"strings"
	"unicode"
)

// Label is how a window reads where a person sees it (the report, status):
// the app's name, with its class in parentheses only when the class says
// something the name does not — when neither, reduced to lowercase letters
// and digits, holds the other. So "Firefox" for org.mozilla.firefox,
// "Firefox ESR" for firefox-esr, "GNU Emacs" for Emacs; "IntelliJ IDEA
// (jetbrains-idea)". With no name it is the class as today. Both are
// outside text: neutralize the result for its reader.
func Label(class, name string) string {
	if name == "" {
		return class
	}
	c, n := folded(class), folded(name)
	if class == "" || (c != "" && n != "" && (strings.Contains(c, n) || strings.Contains(n, c))) {
		return name
	}
	return name + " (" + class + ")"
}

// folded is s in lowercase letters and digits only.
func folded(s string) string {
	return strings.Map(func(r rune) rune {
		if unicode.IsLetter(r) || unicode.IsDigit(r) {
			return unicode.ToLower(r)
		}
		return -1
	}, s)
}
