package rule

import (
	"errors"
	"fmt"
	"regexp"
	"strings"
	"unicode/utf8"
)

// SitePrefix starts a rule about the page in front of a browser
// window rather than about a window: url:*.youtube.com,
// url:github.com/antidrift/*.
const SitePrefix = "url:"

// siteRule is a url: rule: a host glob and, optionally, a path glob,
// matched against a site as SiteFromParts makes it (host and path, never a
// query or a fragment, uncut). A rule that could never match what a
// browser reports is refused with the reason: a port (a site has none), a
// host in Unicode (browsers report an IDN in punycode). A path's
// characters outside ASCII are matched as the browser writes them,
// percent-encoded in UTF-8 (pathPercentEncode).
type siteRule struct {
	host *regexp.Regexp // the whole host
	bare *regexp.Regexp // for *.example.com, example.com itself; else nil
	path *regexp.Regexp // the whole path after the host's /; nil: any path
}

// parseSiteRule checks and compiles the pattern after url:. Its error
// completes "it …" as Parse's do.
func parseSiteRule(pattern string) (*siteRule, error) {
	pattern = strings.TrimSpace(pattern)
	switch {
	case pattern == "":
		return nil, errors.New("the address after url: is empty (write url:*.example.com or url:example.com/path/*)")
	case strings.Contains(pattern, "://"):
		return nil, errors.New("it names a scheme: write the address without it (url:github.com/antidrift/*, not url:https://github.com/antidrift/*)")
	case strings.ContainsAny(pattern, "?#"):
		return nil, errors.New("it has a ? or #: antidrift never keeps a page's query or fragment, so a url: rule matches host and path only (use * for any text)")
	}
	hostPart, pathPart, _ := strings.Cut(pattern, "/")
	if hostPart == "" {
		return nil, errors.New("it has no host before its first / (write url:example.com/path, or url:*/path for any host)")
	}
	hostPart, err := checkRuleHost(hostPart)
	if err != nil {
		return nil, err
	}
	pathPart = pathPercentEncode(pathPart)
	r := &siteRule{}
	if r.host, _, err = compileGlob(hostPart); err != nil {
		return nil, fmt.Errorf("the host pattern %s", err)
	}
	if bare, ok := strings.CutPrefix(hostPart, "*."); ok && bare != "" {
		if r.bare, _, err = compileGlob(bare); err != nil {
			return nil, fmt.Errorf("the host pattern %s", err)
		}
	}
	if pathPart != "" && pathPart != "*" {
		if r.path, _, err = compileGlob(pathPart); err != nil {
			return nil, fmt.Errorf("the path pattern %s", err)
		}
	}
	return r, nil
}

// checkRuleHost refuses a rule's host that no site can have, and makes an
// IPv6 address in brackets ([::1]) literal, not a glob set.
func checkRuleHost(host string) (string, error) {
	if i := strings.IndexFunc(host, func(r rune) bool { return r >= utf8.RuneSelf }); i >= 0 {
		return "", fmt.Errorf("its host %s is written in Unicode: browsers report such a host (an IDN) in its ASCII form, xn--…, so this rule would never match; write that form (idn2 %s prints it)", Quote(host), ShellWord(host))
	}
	if v6, ok := strings.CutPrefix(host, "["); ok && strings.Contains(v6, ":") {
		addr, rest, closed := strings.Cut(v6, "]")
		if !closed {
			return "", fmt.Errorf("its IPv6 host %s has no closing ]", Quote(host))
		}
		if rest != "" {
			return "", fmt.Errorf("its host %s names a port (%s): antidrift keeps no port of a page, so this rule would never match; write the host alone (url:[%s])", Quote(host), Quote(rest), addr)
		}
		return `\[` + addr + `\]`, nil
	}
	if scheme, ok := strings.CutSuffix(host, ":"); ok && ValidScheme(strings.ToLower(scheme)) {
		return host, nil // a page of another scheme, kept as the scheme alone: url:about:
	}
	if h, port, ok := strings.Cut(host, ":"); ok {
		return "", fmt.Errorf("its host %s names a port (:%s): antidrift keeps no port of a page, so this rule would never match; write the host alone (url:%s)", Quote(host), port, h)
	}
	return host, nil
}

// pathPercentEncode writes a rule's path as a browser writes a page's: a
// character outside ASCII, a space and "<>`{} as %XX of their UTF-8 bytes
// (the WHATWG path percent-encode set), so url:ja.wikipedia.org/wiki/東京
// matches the page the browser reports as /wiki/%E6%9D%B1%E4%BA%AC.
func pathPercentEncode(path string) string {
	var b strings.Builder
	for i := 0; i < len(path); i++ {
		c := path[i]
		if c >= utf8.RuneSelf || strings.IndexByte(" \"<>`{}", c) >= 0 {
			fmt.Fprintf(&b, "%%%02X", c)
			continue
		}
		b.WriteByte(c)
	}
	return b.String()
}

// matches reports whether site (host and path) is covered.
func (r *siteRule) matches(site string) bool {
	host, path, _ := strings.Cut(site, "/")
	if !r.host.MatchString(host) && (r.bare == nil || !r.bare.MatchString(host)) {
		return false
	}
	return r.path == nil || r.path.MatchString(path)
}

// cutPrefixFold is strings.CutPrefix, case-insensitively.
func cutPrefixFold(s, prefix string) (string, bool) {
	if len(s) >= len(prefix) && strings.EqualFold(s[:len(prefix)], prefix) {
		return s[len(prefix):], true
	}
	return s, false
}

// MaxScheme is the longest URL scheme, in bytes, ValidScheme accepts.
const MaxScheme = 64

// ValidScheme: a URL scheme as RFC 3986 and WHATWG allow it (letter, then
// letters, digits, + - .). The core's sites (SiteFromParts) and a url:
// rule's host both go by it.
func ValidScheme(s string) bool {
	if s == "" || len(s) > MaxScheme || s[0] < 'a' || s[0] > 'z' {
		return false
	}
	for _, r := range s {
		if !(r >= 'a' && r <= 'z' || r >= '0' && r <= '9' || r == '+' || r == '-' || r == '.') {
			return false
		}
	}
	return true
}
