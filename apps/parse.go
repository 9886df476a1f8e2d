package apps

import (
	"bytes"
	"os"
	"strings"
	"unicode/utf8"
)

// Caps on what one desktop entry may hold. A file past MaxFileSize is not
// read at all; a value past these is cut (Name) or dropped (the others),
// so an entry kept in memory is small whatever the file says.
const (
	MaxFileSize     = 256 << 10 // bytes of one .desktop file
	MaxNameRunes    = 256       // Name is cut here, with "…"
	MaxIconLen      = 4096      // an Icon= longer than a path can be is dropped
	MaxWMClassLen   = 1024      // a StartupWMClass= longer than this is dropped
	maxDesktopIDLen = 1024
)

// parsed is what the index keeps of one desktop entry.
type parsed struct {
	name, icon, wmClass string
	noDisplay, hidden   bool
}

// parseEntry reads the [Desktop Entry] group of a desktop entry file
// (https://specifications.freedesktop.org/desktop-entry-spec/latest/):
// Name localized by langs (most specific first, as localeVariants gives
// them), Icon, StartupWMClass, NoDisplay and Hidden. ok is false when the
// file is not an application's entry (no such group, Type is not
// Application, no Name). It never fails on bad input: a line it cannot
// read is skipped, as GLib's key-file reader would refuse the file and the
// entry would not be there at all — we are more lenient, never less safe.
func parseEntry(data []byte, langs []string) (p parsed, ok bool) {
	if len(data) > MaxFileSize {
		return parsed{}, false
	}
	var (
		inGroup, seenGroup bool
		typ                string
		names              = map[string]string{}
		haveType           bool
	)
	for len(data) > 0 {
		var line []byte
		if i := bytes.IndexByte(data, '\n'); i >= 0 {
			line, data = data[:i], data[i+1:]
		} else {
			line, data = data, nil
		}
		line = bytes.TrimRight(line, "\r")
		line = bytes.TrimLeft(line, " \t")
		if len(line) == 0 || line[0] == '#' {
			continue
		}
		if line[0] == '[' {
			if seenGroup && inGroup {
				break // the main group ended; later groups are actions
			}
			inGroup = string(bytes.TrimRight(line, " \t")) == "[Desktop Entry]"
			seenGroup = seenGroup || inGroup
			continue
		}
		if !inGroup {
			continue
		}
		eq := bytes.IndexByte(line, '=')
		if eq <= 0 {
			continue
		}
		key := string(bytes.TrimRight(line[:eq], " \t"))
		val := string(bytes.TrimLeft(line[eq+1:], " \t"))
		base, loc := key, ""
		if i := strings.IndexByte(key, '['); i > 0 && strings.HasSuffix(key, "]") {
			base, loc = key[:i], key[i+1:len(key)-1]
		}
		switch base {
		case "Type":
			if loc == "" && !haveType {
				typ, haveType = val, true
			}
		case "Name":
			if _, dup := names[loc]; !dup && (loc == "" || wanted(loc, langs)) {
				names[loc] = val
			}
		case "Icon":
			if loc == "" && p.icon == "" {
				p.icon = val
			}
		case "StartupWMClass":
			if loc == "" && p.wmClass == "" {
				p.wmClass = val
			}
		case "NoDisplay":
			if loc == "" {
				p.noDisplay = val == "true"
			}
		case "Hidden":
			if loc == "" {
				p.hidden = val == "true"
			}
		}
	}
	if !seenGroup {
		return parsed{}, false
	}
	if p.hidden { // deleted: it still hides the same id in later dirs
		return parsed{hidden: true}, true
	}
	if typ != "Application" {
		return parsed{}, false
	}
	name, found := "", false
	for _, l := range langs {
		if name, found = names[l]; found {
			break
		}
	}
	if !found {
		name = names[""]
	}
	p.name = cutName(unescape(name))
	p.icon = unescape(p.icon)
	if len(p.icon) > MaxIconLen || !utf8.ValidString(p.icon) {
		p.icon = ""
	}
	p.wmClass = unescape(p.wmClass)
	if len(p.wmClass) > MaxWMClassLen || !utf8.ValidString(p.wmClass) {
		p.wmClass = ""
	}
	if p.name == "" {
		return parsed{}, false
	}
	return p, true
}

func wanted(loc string, langs []string) bool {
	for _, l := range langs {
		if l == loc {
			return true
		}
	}
	return false
}

// cutName makes a Name fit to show and to send on the bus: valid UTF-8 (a
// bad byte becomes U+FFFD) and at most MaxNameRunes runes. It is
// otherwise exact: whoever renders it neutralizes it (internal/inert).
func cutName(s string) string {
	s = strings.ToValidUTF8(s, "\uFFFD")
	if utf8.RuneCountInString(s) <= MaxNameRunes {
		return s
	}
	n := 0
	for i := range s {
		if n == MaxNameRunes-1 {
			return s[:i] + "…"
		}
		n++
	}
	return s
}

// unescape undoes the spec's escapes of string values: \s \n \t \r \\.
func unescape(s string) string {
	if !strings.Contains(s, `\`) {
		return s
	}
	var b strings.Builder
	for i := 0; i < len(s); i++ {
		if s[i] != '\\' || i+1 == len(s) {
			b.WriteByte(s[i])
			continue
		}
		i++
		switch s[i] {
		case 's':
			b.WriteByte(' ')
		case 'n':
			b.WriteByte('\n')
		case 't':
			b.WriteByte('\t')
		case 'r':
			b.WriteByte('\r')
		case '\\':
			b.WriteByte('\\')
		default:
			b.WriteByte('\\')
			b.WriteByte(s[i])
		}
	}
	return b.String()
}

// localeVariants lists the Name[...] keys that fit a POSIX locale
// (lang_COUNTRY.ENCODING@MODIFIER), most specific first, as the desktop
// entry spec orders them: lang_COUNTRY@MODIFIER, lang_COUNTRY,
// lang@MODIFIER, lang. The encoding is ignored; "C" and "POSIX" (and "")
// want the unlocalized Name.
func localeVariants(locale string) []string {
	if i := strings.IndexByte(locale, ':'); i >= 0 { // a LANGUAGE-style list: its first
		locale = locale[:i]
	}
	rest, mod, _ := strings.Cut(locale, "@")
	rest, _, _ = strings.Cut(rest, ".")
	lang, country, _ := strings.Cut(rest, "_")
	if lang == "" || lang == "C" || lang == "POSIX" {
		return nil
	}
	var out []string
	if country != "" && mod != "" {
		out = append(out, lang+"_"+country+"@"+mod)
	}
	if country != "" {
		out = append(out, lang+"_"+country)
	}
	if mod != "" {
		out = append(out, lang+"@"+mod)
	}
	return append(out, lang)
}

// envLocale is the locale messages are shown in: LC_ALL, else
// LC_MESSAGES, else LANG (the first one set and not empty).
func envLocale() string {
	for _, k := range []string{"LC_ALL", "LC_MESSAGES", "LANG"} {
		if v := os.Getenv(k); v != "" {
			return v
		}
	}
	return ""
}
