package service

import (
	"net/url"
	"strings"
	"unicode"
	"unicode/utf8"
)

// Tabs. A browser's antidrift extension reports the active tab of its
// focused window through the native host (docs/browsers.md). The report is
// evidence about a window only where it fits: the window the trusted
// source says has focus is that browser's, and its title is the tab's
// title as the browser shows it (TabFits). A report that fits no focused
// window changes nothing: a forged one cannot change the verdict on a
// window that is not in front.

// Browser families a tab report names: the native host tells them apart by
// how the browser started it.
const (
	BrowserFirefox  = "firefox"
	BrowserChromium = "chromium"
)

// Tab is one browser's report of its focused window's active tab.
type Tab struct {
	Browser string // BrowserFirefox or BrowserChromium
	// Site is the page's address as antidrift keeps it (SiteOf): host and
	// path, never a query, a fragment or a password. "" with Private false
	// and Title "": the browser has no focused window.
	Site string
	// Title is the tab's title, used only to find the window it belongs
	// to; never recorded.
	Title string
	// Private: a private (incognito) tab, reported as nothing but that
	// unless the person opted in in that browser's extension.
	Private bool
}

// Limits of a tab report, checked where it enters the core.
const (
	MaxURLLen   = 8192 // bytes of the address as the browser sends it
	MaxSiteLen  = 512  // runes of host and path as kept
	maxTabTitle = 4096 // bytes of a tab's title
)

// SiteOf is the address antidrift keeps of a URL: for http and https the
// lower-cased host (no user, password or port) and the path ("/" alone
// dropped), joined as "github.com/antidrift/antidrift/pull/3"; for any
// other scheme only the scheme ("about:", "file:", "moz-extension:"), since
// a file's path is private and the rest names no site. The query and the
// fragment are dropped here, at the edge: they carry tokens, and nothing
// after this sees them.
func SiteOf(raw string) (string, bool) {
	u, err := url.Parse(raw)
	if err != nil || u.Scheme == "" {
		return "", false
	}
	scheme := strings.ToLower(u.Scheme)
	if scheme != "http" && scheme != "https" {
		return scheme + ":", true
	}
	host := strings.TrimSuffix(strings.ToLower(u.Hostname()), ".")
	if host == "" {
		return "", false
	}
	path := u.EscapedPath()
	if path == "/" {
		path = ""
	}
	return clip(host+path, MaxSiteLen), true
}

// SiteHost is the host of a site as SiteOf makes it: what a sealed
// summary, a report and the model judge (unless told otherwise) keep.
func SiteHost(site string) string {
	host, _, _ := strings.Cut(site, "/")
	return host
}

// cleanTab checks a tab report from outside and makes its Tab: the address
// reduced to a site at once (so no query or fragment goes further), a
// private tab's address and title dropped unless the extension was told to
// send them.
func cleanTab(browser, rawURL, title string, private bool) (Tab, *Error) {
	switch {
	case browser != BrowserFirefox && browser != BrowserChromium:
		return Tab{}, invalid("browser must be %s or %s; got %s", BrowserFirefox, BrowserChromium, Quote(browser))
	case len(rawURL) > MaxURLLen:
		return Tab{}, invalid("url is %d bytes; at most %d are allowed", len(rawURL), MaxURLLen)
	case len(title) > maxTabTitle:
		return Tab{}, invalid("title is %d bytes; at most %d are allowed", len(title), maxTabTitle)
	case !utf8.ValidString(rawURL) || !utf8.ValidString(title):
		return Tab{}, invalid("url and title must be valid UTF-8")
	case strings.IndexFunc(rawURL, unicode.IsControl) >= 0:
		return Tab{}, invalid("url must not contain control characters")
	}
	t := Tab{Browser: browser, Title: title, Private: private}
	if rawURL != "" {
		site, ok := SiteOf(rawURL)
		if !ok {
			return Tab{}, invalid("url %s is not an address (scheme://host/path)", Quote(clip(rawURL, 80)))
		}
		t.Site = site
	}
	if t.Site == "" && !private {
		t.Title = "" // no tab: nothing to match
	}
	return t, nil
}

// browserClassWords are what a browser family's windows carry in their
// class or instance: firefox-esr, Firefox, Navigator; chromium,
// Chromium-browser, google-chrome.
var browserClassWords = map[string][]string{
	BrowserFirefox:  {"firefox", "librewolf"},
	BrowserChromium: {"chromium", "chrome"},
}

// browserTitleSuffixes are what each family appends to the tab's title in
// its window's title. A window's title fits a tab when it is the tab's
// title exactly, or the tab's title and one of these.
var browserTitleSuffixes = map[string][]string{
	BrowserFirefox: {
		" — Mozilla Firefox", " - Mozilla Firefox",
		" — Mozilla Firefox Private Browsing", " - Mozilla Firefox Private Browsing",
		" — Firefox Developer Edition", " — Firefox Nightly", " — LibreWolf",
	},
	BrowserChromium: {" - Chromium", " - Google Chrome", " - Chromium (Incognito)", " - Google Chrome (Incognito)"},
}

// BrowserOf names the browser family window w belongs to, or "".
func BrowserOf(w Window) string {
	c, i := strings.ToLower(w.Class), strings.ToLower(w.Instance)
	for _, family := range [...]string{BrowserFirefox, BrowserChromium} {
		for _, word := range browserClassWords[family] {
			if strings.Contains(c, word) || strings.Contains(i, word) {
				return family
			}
		}
	}
	return ""
}

// TabFits reports whether tab t describes window w, whose raw title (before
// redaction) is title: w is a window of t's browser and its title is the
// tab's title as that browser shows it. A private tab carries no title
// unless the person opted in, so it fits nothing and its window is decided
// by the window alone.
func TabFits(t Tab, w Window, title string) bool {
	if !w.Available || t.Site == "" || BrowserOf(w) != t.Browser {
		return false
	}
	if title == t.Title {
		return true
	}
	rest, ok := strings.CutPrefix(title, t.Title)
	if !ok {
		return false
	}
	for _, suffix := range browserTitleSuffixes[t.Browser] {
		if rest == suffix || (t.Title == "" && rest == strings.TrimLeft(suffix, " —-")) {
			return true
		}
	}
	return false
}

// browserName is a family as a person reads it.
func browserName(family string) string {
	if family == BrowserChromium {
		return "Chromium"
	}
	return "Firefox"
}
