package docs_test

import (
	"os"
	"path/filepath"
	"regexp"
	"strings"
	"testing"
)

// Every relative link of README.md and docs/*.md goes to a file that
// exists, and every #anchor to a heading of that file, as GitHub makes
// anchors: the README moved most of its text here, and a page that moves
// again must take its links along.
func TestLinksResolve(t *testing.T) {
	pages, _ := filepath.Glob("*.md")
	pages = append(pages, filepath.Join("..", "README.md"))
	if len(pages) < 10 {
		t.Fatalf("pages: got %d (%v), want at least 10", len(pages), pages)
	}
	link := regexp.MustCompile(`\]\(([^)\s]+)\)`)
	checked := 0
	for _, page := range pages {
		data, err := os.ReadFile(page)
		if err != nil {
			t.Fatal(err)
		}
		for _, m := range link.FindAllStringSubmatch(stripCode(string(data)), -1) {
			target := m[1]
			if strings.Contains(target, "://") || strings.HasPrefix(target, "mailto:") {
				continue
			}
			file, anchor, _ := strings.Cut(target, "#")
			path := page
			if file != "" {
				path = filepath.Join(filepath.Dir(page), file)
			}
			body, err := os.ReadFile(path)
			if err != nil {
				t.Errorf("%s links to %s: got %v, want the file to exist", page, target, err)
				continue
			}
			checked++
			if anchor != "" && !anchors(string(body))[anchor] {
				t.Errorf("%s links to %s: got no heading with that anchor in %s, want one", page, target, path)
			}
		}
	}
	if checked < 30 {
		t.Errorf("links checked: got %d, want at least 30", checked)
	}
}

// stripCode removes fenced code blocks, whose brackets are not links.
func stripCode(md string) string {
	return regexp.MustCompile("(?s)```.*?```").ReplaceAllString(md, "")
}

// anchors are the anchors GitHub gives the headings of md: lower case,
// punctuation dropped, spaces to hyphens.
func anchors(md string) map[string]bool {
	out := map[string]bool{}
	for _, m := range regexp.MustCompile(`(?m)^#{1,6} (.+)$`).FindAllStringSubmatch(stripCode(md), -1) {
		a := strings.Map(func(r rune) rune {
			switch {
			case r == ' ':
				return '-'
			case r == '-' || r == '_' || r >= '0' && r <= '9' || r >= 'a' && r <= 'z' || r > 127 && r != '–' && r != '—':
				return r
			}
			return -1
		}, strings.ToLower(strings.TrimSpace(m[1])))
		out[a] = true
	}
	return out
}
