package service

import (
	"regexp"
	"strings"
)

// privacy keeps titles out of everything antidrift records. It is applied
// once, where a window enters the core, so the raw log, the buckets, the
// properties and the audit chain all see the same scrubbed window.
type privacy struct {
	classes []string         // these classes' titles are never recorded
	redact  []*regexp.Regexp // matches are replaced with "…"
}

// Redacted replaces each redaction match in a title.
const Redacted = "…"

// private reports whether w is of a private class: only its class is
// ever recorded, neither its title nor the page it shows.
func (p privacy) private(w Window) bool {
	return containsFold(p.classes, w.Class) || (w.Instance != "" && containsFold(p.classes, w.Instance))
}

func (p privacy) scrub(w Window) Window {
	if p.private(w) || privateBrowsing(BrowserOf(w), w.Title) {
		w.Title = ""
		return w
	}
	for _, re := range p.redact {
		w.Title = re.ReplaceAllLiteralString(w.Title, Redacted)
	}
	return w
}

// PrivateTitle is title as a record may show it under the given settings:
// empty for a private class, redaction matches replaced. A report applies
// today's settings to titles recorded under older ones.
func PrivateTitle(classes []string, redact []*regexp.Regexp, class, instance, title string) string {
	return privacy{classes: classes, redact: redact}.scrub(Window{Class: class, Instance: instance, Title: title}).Title
}

// privateTitleMarks are how a browser family marks a private window in its
// window's title: Firefox appends "Mozilla Firefox Private Browsing" (after
// " — " or " - ", or alone for an empty tab), Chromium and Google Chrome
// "(Incognito)" (where they mark it at all: Chromium on Linux titles most
// incognito windows as normal ones, and only its extension can tell).
var privateTitleMarks = map[string][]string{
	BrowserFirefox:  {"Mozilla Firefox Private Browsing", "Firefox Developer Edition Private Browsing", "Firefox Nightly Private Browsing", "LibreWolf Private Browsing"},
	BrowserChromium: {"(Incognito)"},
}

// privateBrowsing reports whether title, the raw title of a window of the
// browser family, marks it as a private window: then nothing of its title
// or its pages is recorded, as for a private class.
func privateBrowsing(family, title string) bool {
	for _, mark := range privateTitleMarks[family] {
		if strings.HasSuffix(title, mark) {
			return true
		}
	}
	return false
}
