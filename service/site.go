package service

import (
	"strings"
	"unicode"
	"unicode/utf8"

	"github.com/antidrift/antidrift/service/rule"
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
	// ID is the browser's own id of the tab: what a block names, so the
	// extension replaces that very tab and never re-derives an address.
	// NoTabID when the report named none (no tab, or an older extension).
	ID int64
	// Site is the page's address as antidrift matches it (SiteFromParts):
	// host and path, uncut, never a query, a fragment or a password. ""
	// with Private false and Title "": the browser has no focused window.
	// It is cut for display and storage only (DisplaySite).
	Site string
	// Title is the tab's title, used only to find the window it belongs
	// to; never recorded.
	Title string
	// Private: a private (incognito) tab, reported as nothing but that
	// unless the person opted in in that browser's extension.
	Private bool
}

// NoTabID is a report's tab id when it names no tab (tabs.TAB_ID_NONE of
// the WebExtension API).
const NoTabID = -1

// TabReport is what a native host says of its browser's focused window's
// active tab. The address comes as the browser's own URL parser split it
// (WHATWG URL: protocol without its ":", hostname, pathname), never as a
// string for antidrift to parse again: Go's parser and the browser's
// disagree on addresses a browser shows (a bare % in the path, |, ^, IPv6
// hosts), and the site must be the one the browser means. An empty Scheme,
// not private, says none of the browser's windows has focus.
type TabReport struct {
	TabID              int64
	Scheme, Host, Path string
	Title              string
	Private            bool
}

// Limits of a tab report, checked where it enters the core.
const (
	MaxURLLen   = 8192           // bytes of host and path as the browser sends them
	MaxSiteLen  = 512            // runes of a site as stored and shown (DisplaySite)
	maxTabTitle = 4096           // bytes of a tab's title
	maxScheme   = rule.MaxScheme // bytes of a scheme
)

// SiteFromParts is the one place a site is made, from the address as the
// browser parsed it: for http and https the lower-cased host without a
// trailing dot (IPv6 in its brackets, an IDN in punycode, as the browser
// gives them) and the path ("/" alone dropped), joined as
// "github.com/antidrift/antidrift/pull/3"; for any other scheme only the
// scheme ("about:", "file:", "moz-extension:"), since a file's path is
// private and the rest names no site. A browser's hostname and pathname
// never hold a query, a fragment, a user or a port, and parts that do are
// refused: nothing after this sees them. The site is not cut: a url: rule
// matches it whole (DisplaySite cuts it for a person and the disk).
func SiteFromParts(scheme, host, path string) (string, bool) {
	scheme = strings.ToLower(scheme)
	if !rule.ValidScheme(scheme) {
		return "", false
	}
	if scheme != "http" && scheme != "https" {
		return scheme + ":", true
	}
	host = strings.TrimSuffix(strings.ToLower(host), ".")
	if host == "" || strings.ContainsAny(host, "/?#@ \\") || strings.ContainsAny(path, "?#") ||
		(path != "" && !strings.HasPrefix(path, "/")) {
		return "", false
	}
	if strings.IndexFunc(host, func(r rune) bool { return r >= utf8.RuneSelf }) >= 0 {
		return "", false // a browser gives an internationalized name in punycode (xn--…), as url: rules name it
	}
	if strings.Contains(host, ":") && !(strings.HasPrefix(host, "[") && strings.HasSuffix(host, "]")) {
		return "", false // a port, or an IPv6 address without its brackets: not a hostname
	}
	if path == "/" {
		path = ""
	}
	return host + path, true
}

// DisplaySite is a site as a person is shown it and the disk keeps it: cut
// to MaxSiteLen runes, the last "…" when cut. Never matched against.
func DisplaySite(site string) string { return clip(site, MaxSiteLen) }

// SiteHost is the host of a site as SiteFromParts makes it: what a sealed
// summary, a report and the model judge (unless told otherwise) keep.
func SiteHost(site string) string {
	host, _, _ := strings.Cut(site, "/")
	return host
}

// cleanTab checks a tab report from outside and makes its Tab: the site
// made at once (SiteFromParts), a private tab's address and title dropped
// unless the extension was told to send them.
func cleanTab(browser string, r TabReport) (Tab, *Error) {
	switch {
	case browser != BrowserFirefox && browser != BrowserChromium:
		return Tab{}, invalid("browser must be %s or %s; got %s", BrowserFirefox, BrowserChromium, Quote(browser))
	case len(r.Host)+len(r.Path) > MaxURLLen:
		return Tab{}, invalid("host and path are %d bytes; at most %d are allowed", len(r.Host)+len(r.Path), MaxURLLen)
	case len(r.Scheme) > maxScheme:
		return Tab{}, invalid("scheme is %d bytes; at most %d are allowed", len(r.Scheme), maxScheme)
	case len(r.Title) > maxTabTitle:
		return Tab{}, invalid("title is %d bytes; at most %d are allowed", len(r.Title), maxTabTitle)
	case !utf8.ValidString(r.Scheme) || !utf8.ValidString(r.Host) || !utf8.ValidString(r.Path) || !utf8.ValidString(r.Title):
		return Tab{}, invalid("scheme, host, path and title must be valid UTF-8")
	case strings.IndexFunc(r.Host+r.Path, unicode.IsControl) >= 0:
		return Tab{}, invalid("host and path must not contain control characters")
	case r.TabID < NoTabID:
		return Tab{}, invalid("tab_id must be a browser's tab id, or %d for none; got %d", NoTabID, r.TabID)
	}
	t := Tab{Browser: browser, ID: r.TabID, Title: r.Title, Private: r.Private}
	if r.Scheme != "" {
		site, ok := SiteFromParts(r.Scheme, r.Host, r.Path)
		if !ok {
			return Tab{}, invalid("scheme %s, host %s and path %s are not an address as a browser parses one", Quote(clip(r.Scheme, 20)), Quote(clip(r.Host, 80)), Quote(clip(r.Path, 80)))
		}
		t.Site = site
	}
	if t.Site == "" && !r.Private {
		t.Title, t.ID = "", NoTabID // no tab: nothing to match
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
