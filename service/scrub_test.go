package service

import "testing"

func TestScrubTitle(t *testing.T) {
	for _, c := range []struct{ in, want string }{
		{"Inbox - Mail", "Inbox - Mail"},
		{"mpv - movie.mkv 12:30 / 1:45:00", "mpv - movie.mkv /"},
		{"Downloading 45% of file", "Downloading of file"},
		{"Python 3.5 docs", "Python docs"},
		{"version -1.2.3 released", "version released"},
		{"progress 99.5% done", "progress done"},
		{"  spaced   out  ", "spaced out"},
		{"room 101 (single numbers stay)", "room 101 (single numbers stay)"},
		{"12:30", ""},
		{"", ""},
	} {
		if got := ScrubTitle(c.in); got != c.want {
			t.Errorf("ScrubTitle(%q) = %q, want %q", c.in, got, c.want)
		}
	}
}
