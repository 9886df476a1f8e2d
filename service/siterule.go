package service

import (
	"errors"
	"fmt"
	"regexp"
	"strings"
)

// SiteRulePrefix starts a rule about the page in front of a browser
// window rather than about a window: url:*.youtube.com,
// url:github.com/antidrift/*.
const SiteRulePrefix = "url:"

// siteRule is a url: rule: a host glob and, optionally, a path glob,
// matched against a site as SiteOf makes it (host and path, never a
// query or a fragment).
type siteRule struct {
	host *regexp.Regexp // the whole host
	bare *regexp.Regexp // for *.example.com, example.com itself; else nil
	path *regexp.Regexp // the whole path after the host's /; nil: any path
}

// parseSiteRule checks and compiles the pattern after url:. Its error
// completes "it …" as ParseRule's do.
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
	r := &siteRule{}
	var err error
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
