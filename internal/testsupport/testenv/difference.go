package testenv

import "strings"

// FirstDifference is the first line where got and want differ: its number
// (from 1) and that line of each, "(end of text)" past the end of one; 0
// when they are the same. A test comparing a whole text with the one it
// keeps (a golden file, the help) names the line that changed instead of
// leaving a person to compare two texts.
func FirstDifference(got, want string) (line int, g, w string) {
	gl, wl := strings.Split(got, "\n"), strings.Split(want, "\n")
	at := func(lines []string, i int) string {
		if i < len(lines) {
			return lines[i]
		}
		return "(end of text)"
	}
	for i := range max(len(gl), len(wl)) {
		if g, w = at(gl, i), at(wl, i); g != w {
			return i + 1, g, w
		}
	}
	return 0, "", ""
}
