package rule

// A plain `go test` runs only the seeds of FuzzFoldTitle (the f.Add calls
// and testdata/fuzz/FuzzFoldTitle/); to search for longer:
//
//	go test -run '^$' -fuzz '^FuzzFoldTitle$' -fuzztime 5m ./service/rule/
//
// A failure the search finds is written to testdata/fuzz/FuzzFoldTitle/
// and from then on runs with every `go test`.

import (
	"strings"
	"testing"
	"unicode"
	"unicode/utf8"
)

// FoldTitle makes bucket keys, so it must be a fixed point (folding a
// folded title changes nothing: a key never splits into two), never grow
// a title, and leave single spaces between words and none around.
func FuzzFoldTitle(f *testing.F) {
	for _, s := range []string{
		"", " ", "Inbox - Mail", "mpv - movie.mkv 12:30 / 1:45:00", "Downloading 45% of file",
		"Python 3.5 docs", "version -1.2.3 released", "progress 99.5% done", "  spaced   out  ",
		"room 101 (single numbers stay)", "12:30", "\t\n\u00a0\u2003", "\xff\xfe broken", "1:2:3:4:5%",
		"--1.1", "1.1.1.1.1.1.1", "50%% off", "a%1.2", "１２:３０ full-width digits", "٣:٤ Arabic-Indic",
	} {
		f.Add(s)
	}
	f.Fuzz(func(t *testing.T, title string) {
		got := FoldTitle(title)
		if again := FoldTitle(got); again != got {
			t.Errorf("FoldTitle(FoldTitle(%q)): got %q, want %q, a fixed point", title, again, got)
		}
		if len(got) > len(title) {
			t.Errorf("FoldTitle(%q): got %q, want at most %d bytes", title, got, len(title))
		}
		if strings.HasPrefix(got, " ") || strings.HasSuffix(got, " ") || strings.Contains(got, "  ") {
			t.Errorf("FoldTitle(%q): got %q, want no spaces around or doubled", title, got)
		}
		for _, r := range got {
			if r != ' ' && unicode.IsSpace(r) {
				t.Errorf("FoldTitle(%q): got %q with whitespace %U, want only plain spaces", title, got, r)
			}
		}
		if utf8.ValidString(title) && !utf8.ValidString(got) {
			t.Errorf("FoldTitle(%q): got invalid UTF-8 %q, want valid UTF-8 like its input", title, got)
		}
	})
}
