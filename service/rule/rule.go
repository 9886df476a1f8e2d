package rule

import (
	"errors"
	"fmt"
	"regexp"
	"regexp/syntax"
	"strings"
	"unicode"
	"unicode/utf8"
)

// Syntax is the one-line description of a rule that every refusal of one
// ends with, so a person who got a pattern wrong sees how to write it.
const Syntax = "an entry is CLASS or CLASS:TITLE-GLOB, where * matches any text, ? one character, [abc] one of a set and \\ escapes the next character; or url:HOST[/PATH] for the page in front of a browser (url:*.youtube.com); or app:DESKTOP-ID for an app's windows (app:*firefox*)"

// Rule is one entry of an allowlist or of the distractions: a window class,
// or a class narrowed to titles (CLASS:TITLE-GLOB, e.g. firefox:*GitHub*,
// *:*YouTube*). Both halves are globs matched case-insensitively; the class
// half against the window's class or instance, the title half against the
// redacted title — as the window shows it, or folded (FoldTitle) with the
// glob's own counters folded alike, so a rule written for "(3) Inbox"
// matches "(4) Inbox" while a pattern about the counter itself ("*(1?)*")
// still sees it. Never the title before redaction. It is a value: compiled
// once where it enters the core, matched many times.
type Rule struct {
	Text   string         // as written, for DriftReason
	class  *regexp.Regexp // matches the whole class or instance
	title  *regexp.Regexp // matches the whole redacted title; nil: any title
	folded *regexp.Regexp // the glob folded, matched against the folded title
	site   *siteRule      // a url: rule: it matches the page in front, not the window
	app    *regexp.Regexp // an app: rule: matches the whole desktop id of the window's entry
}

// AppPrefix begins a rule that names an app by its desktop entry's id
// (app:org.mozilla.firefox): a glob like the class half, matched
// case-insensitively against the id without ".desktop" (a ".desktop"
// written at the end is ignored). A window with no desktop entry matches
// no app: rule. A class named "app" narrowed to titles is written
// [a]pp:TITLE-GLOB.
const AppPrefix = "app:"

// MaxLen is the most characters a rule may have (the core's MaxClassLen).
const MaxLen = 256

// Parse checks and compiles one entry. Its error says what is wrong
// with the pattern, without naming the entry: the caller knows its name.
func Parse(text string) (Rule, error) {
	text = strings.TrimSpace(text)
	n := utf8.RuneCountInString(text)
	switch {
	case !utf8.ValidString(text):
		return Rule{}, errors.New("it is not valid UTF-8")
	case n == 0:
		return Rule{}, errors.New("it is empty")
	case n > MaxLen:
		return Rule{}, fmt.Errorf("it is %d characters; at most %d are allowed", n, MaxLen)
	case strings.IndexFunc(text, unicode.IsControl) >= 0:
		return Rule{}, errors.New("it contains control characters")
	}
	if pattern, ok := cutPrefixFold(text, SitePrefix); ok {
		site, err := parseSiteRule(pattern)
		if err != nil {
			return Rule{}, err
		}
		return Rule{Text: text, site: site}, nil
	}
	if pattern, ok := cutPrefixFold(text, AppPrefix); ok {
		pattern = strings.TrimSpace(pattern)
		pattern, _ = cutSuffixFold(pattern, ".desktop")
		if pattern == "" {
			return Rule{}, errors.New("the desktop id after app: is empty (e.g. app:org.mozilla.firefox)")
		}
		re, _, err := compileGlob(pattern)
		if err != nil {
			return Rule{}, fmt.Errorf("the desktop id pattern %s", err)
		}
		return Rule{Text: text, app: re}, nil
	}
	classPart, titlePart, narrowed := cutRule(text)
	r := Rule{Text: text}
	var err error
	switch {
	case strings.TrimSpace(classPart) == "":
		return Rule{}, errors.New("the class before ':' is empty (use * for any class)")
	case narrowed && titlePart == "":
		return Rule{}, errors.New("the title pattern after ':' is empty (leave out the ':' to match every title)")
	}
	if r.class, _, err = compileGlob(strings.TrimSpace(classPart)); err != nil {
		return Rule{}, fmt.Errorf("the class pattern %s", err)
	}
	if narrowed {
		if r.title, r.folded, err = compileGlob(titlePart); err != nil {
			return Rule{}, fmt.Errorf("the title pattern %s", err)
		}
	}
	return r, nil
}

// cutRule splits an entry at its first ':' that no \ escapes, so a class
// that holds a ':' can be written (Literal). Only a rule that did not
// parse before reads differently: its class half ended in a lone \.
func cutRule(text string) (class, title string, narrowed bool) {
	for i := 0; i < len(text); i++ {
		switch text[i] {
		case '\\':
			i++
		case ':':
			return text[:i], text[i+1:], true
		}
	}
	return text, "", false
}

// Literal is the entry that allows class itself, whatever it spells. A
// window's class is its program's choice: "Allow" on a nudge must not read
// a class of "*" as every class, or "a:b" as class a narrowed to titles b.
// Every character the syntax reads (\ * ? [ :) is escaped, and white space
// at either end, which Parse trims, is written as a set of itself.
func Literal(class string) string {
	var b strings.Builder
	for i, r := range class {
		switch {
		case strings.ContainsRune(`\*?[:`, r):
			b.WriteByte('\\')
			b.WriteRune(r)
		case unicode.IsSpace(r) && (i == 0 || strings.TrimRightFunc(class[i:], unicode.IsSpace) == ""):
			b.WriteString("[" + string(r) + "]")
		default:
			b.WriteRune(r)
		}
	}
	return b.String()
}

func cutSuffixFold(s, suffix string) (string, bool) {
	if len(s) >= len(suffix) && strings.EqualFold(s[len(s)-len(suffix):], suffix) {
		return s[:len(s)-len(suffix)], true
	}
	return s, false
}

// Narrowed reports whether the rule names titles or pages, not just a
// class.
func (r Rule) Narrowed() bool { return r.title != nil || r.site != nil }

// Site reports whether the rule is a url: rule.
func (r Rule) Site() bool { return r.site != nil }

// App reports whether the rule is an app: rule.
func (r Rule) App() bool { return r.app != nil }

// Subject is what a rule is matched against: a window as the core sees it
// (its title redacted, never the raw one), flattened to text so this
// package needs none of the core's types.
type Subject struct {
	Class, Instance string
	App             string // the desktop id of the window's entry; "": none
	Site            string // host and path of the page in front (SiteFromParts); "": none
	Title           string // redacted, as the window shows it
}

// MatchesClass reports whether the class half matches s. A url: rule has
// none: it names pages, whichever browser shows them.
func (r Rule) MatchesClass(s Subject) bool {
	if r.site != nil {
		return false
	}
	if r.app != nil {
		return s.App != "" && r.app.MatchString(s.App)
	}
	return r.class.MatchString(s.Class) || (s.Instance != "" && r.class.MatchString(s.Instance))
}

// Matches reports whether the rule covers s whose folded title
// (FoldTitle of s.Title) is folded.
func (r Rule) Matches(s Subject, folded string) bool {
	if r.site != nil {
		return s.Site != "" && r.site.matches(s.Site)
	}
	return r.MatchesClass(s) && (r.title == nil || r.folded.MatchString(folded) || r.title.MatchString(s.Title))
}

// compileGlob turns a glob into an anchored, case-insensitive regexp, and
// into a second one for folded titles: the glob with its literal text
// folded as a title is (FoldTitle), so "(3) Inbox" matches "(4) Inbox" and
// "Design doc 7" every numbered design doc. The error completes the
// sentence "the ... pattern".
func compileGlob(glob string) (raw, folded *regexp.Regexp, err error) {
	toks, err := globTokens(glob)
	if err != nil {
		return nil, nil, err
	}
	if raw, err = tokensRegexp(toks); err != nil {
		return nil, nil, err
	}
	ftoks, ok := foldTokens(toks)
	if !ok {
		return raw, raw, nil
	}
	if folded, err = tokensRegexp(ftoks); err != nil {
		return nil, nil, err
	}
	return raw, folded, nil
}

// globToken is a literal character (re == "") or a wildcard or set, as the
// regexp it stands for.
type globToken struct {
	lit rune
	re  string
}

func globTokens(glob string) ([]globToken, error) {
	var toks []globToken
	for i := 0; i < len(glob); {
		r, size := utf8.DecodeRuneInString(glob[i:])
		i += size
		switch r {
		case '*':
			toks = append(toks, globToken{re: ".*"})
		case '?':
			toks = append(toks, globToken{re: "."})
		case '\\':
			if i == len(glob) {
				return nil, errors.New(`ends in a lone \ (it escapes the character after it, e.g. \*)`)
			}
			r, size = utf8.DecodeRuneInString(glob[i:])
			i += size
			toks = append(toks, globToken{lit: r})
		case '[':
			set, next, err := globSet(glob, i)
			if err != nil {
				return nil, err
			}
			toks = append(toks, globToken{re: set})
			i = next
		default:
			toks = append(toks, globToken{lit: r})
		}
	}
	return toks, nil
}

func tokensRegexp(toks []globToken) (*regexp.Regexp, error) {
	var b strings.Builder
	b.WriteString(`(?is)\A`)
	for _, t := range toks {
		if t.re != "" {
			b.WriteString(t.re)
		} else {
			b.WriteString(regexp.QuoteMeta(string(t.lit)))
		}
	}
	b.WriteString(`\z`)
	re, err := regexp.Compile(b.String())
	if err != nil {
		var se *syntax.Error
		if errors.As(err, &se) && se.Code == syntax.ErrInvalidCharRange {
			return nil, errors.New("has a backwards range in a [set] (write [a-z], not [z-a])")
		}
		return nil, fmt.Errorf("is not a valid glob (%v)", err)
	}
	return re, nil
}

// wildcardBase is where the private-use runes that stand for wildcards
// and sets while a glob's literal text is folded begin: they are neither
// letters, digits nor space, so they bound a number as punctuation does.
const wildcardBase = 0xF0000

// foldTokens folds the literal text of a glob as FoldTitle folds a title,
// the wildcards and sets standing where they are. ok is false when folding
// changes nothing (or the glob holds the stand-in runes itself).
func foldTokens(toks []globToken) ([]globToken, bool) {
	var b strings.Builder
	for i, t := range toks {
		switch {
		case t.re != "":
			b.WriteRune(rune(wildcardBase + i))
		case t.lit >= wildcardBase:
			return nil, false
		default:
			b.WriteRune(t.lit)
		}
	}
	plain := b.String()
	folded := FoldTitle(plain)
	if folded == plain {
		return nil, false
	}
	out := make([]globToken, 0, len(toks))
	for _, r := range folded {
		if r >= wildcardBase {
			out = append(out, toks[r-wildcardBase])
		} else {
			out = append(out, globToken{lit: r})
		}
	}
	return out, true
}

// globSet translates the [set] whose contents start at glob[i] (just after
// the '['): a leading ! or ^ negates it, a ] right at the start is a member,
// a-z is a range and \ escapes. It returns the regexp class and where the
// glob continues.
func globSet(glob string, i int) (string, int, error) {
	var b strings.Builder
	b.WriteByte('[')
	if i < len(glob) && (glob[i] == '!' || glob[i] == '^') {
		b.WriteByte('^')
		i++
	}
	first := true
	for i < len(glob) {
		r, size := utf8.DecodeRuneInString(glob[i:])
		i += size
		switch {
		case r == ']' && !first:
			return b.String() + "]", i, nil
		case r == '-' && !first && i < len(glob) && glob[i] != ']':
			b.WriteByte('-')
		case r == '\\':
			if i == len(glob) {
				return "", 0, errors.New(`ends in a lone \ (it escapes the character after it, e.g. \*)`)
			}
			r, size = utf8.DecodeRuneInString(glob[i:])
			i += size
			fmt.Fprintf(&b, `\x{%x}`, r)
		default:
			fmt.Fprintf(&b, `\x{%x}`, r)
		}
		first = false
	}
	return "", 0, errors.New(`has a [ that is never closed (write \[ for a literal bracket)`)
}
