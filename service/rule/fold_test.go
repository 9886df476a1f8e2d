package rule

import (
	"math/rand/v2"
	"strconv"
	"strings"
	"testing"
)

func TestFoldTitle(t *testing.T) {
	for _, c := range []struct{ in, want string }{
		{"Inbox - Mail", "Inbox - Mail"},
		{"(3) Inbox - Mail", "Inbox - Mail"},
		{"(12) Inbox - Mail", "Inbox - Mail"},
		{"Inbox [99+] | Slack", "Inbox | Slack"},
		{"Design doc 1", "Design doc #"},
		{"Design doc 1041", "Design doc #"},
		{"Build #1234 passed", "Build # passed"},
		{"mpv - movie.mkv 12:30 / 1:45:00", "mpv - movie.mkv # / #"},
		{"Downloading 45% of file", "Downloading # of file"},
		{"Step 3/10", "Step #"},
		{"Python 3.5 docs", "Python # docs"},
		{"version -1.2.3 released", "version # released"},
		{"Notes 2026-12-01", "Notes #"},
		{"1,234 messages", "# messages"},
		{"tab-3", "tab-#"},
		{"  spaced   out  ", "spaced out"},
		{"song.mp3 — h264 on Win11, the 3rd, 10k views", "song.mp3 — h264 on Win11, the 3rd, 10k views"},
		{"12:30", "#"},
		{"(3)", ""},
		{"", ""},
	} {
		if got := FoldTitle(c.in); got != c.want {
			t.Errorf("FoldTitle(%q) = %q, want %q", c.in, got, c.want)
		}
		if got := FoldTitle(FoldTitle(c.in)); got != c.want {
			t.Errorf("folding %q twice = %q, want %q", c.in, got, c.want)
		}
	}
}

// TestCountersFoldToOneTitle is the promise: two titles that differ only in
// their counters are one title. Random titles of words, separators and
// counters of every kind are built twice with different numbers.
func TestCountersFoldToOneTitle(t *testing.T) {
	words := []string{"Inbox", "Design", "doc", "mp3", "Mozilla Firefox", "—", "|", "·", "é", "Build"}
	counters := []func(r *rand.Rand) string{
		func(r *rand.Rand) string { return strconv.Itoa(r.IntN(100000)) },
		func(r *rand.Rand) string { return "(" + strconv.Itoa(r.IntN(1000)) + ")" },
		func(r *rand.Rand) string { return "[" + strconv.Itoa(r.IntN(1000)) + "+]" },
		func(r *rand.Rand) string { return strconv.Itoa(r.IntN(101)) + "%" },
		func(r *rand.Rand) string { return strconv.Itoa(r.IntN(24)) + ":" + strconv.Itoa(r.IntN(60)) },
		func(r *rand.Rand) string { return "#" + strconv.Itoa(r.IntN(9999)) },
		func(r *rand.Rand) string { return strconv.Itoa(r.IntN(10)) + "/" + strconv.Itoa(r.IntN(10)) },
	}
	r := rand.New(rand.NewPCG(5, 6))
	for range 50_000 {
		n := r.IntN(6) + 1
		kinds := make([]int, n) // -1: a word; else the counter kind
		picks := make([]int, n)
		for i := range kinds {
			kinds[i], picks[i] = -1, r.IntN(len(words))
			if r.IntN(2) == 0 {
				kinds[i] = r.IntN(len(counters))
			}
		}
		build := func(seed uint64) string {
			rr := rand.New(rand.NewPCG(seed, 7))
			parts := make([]string, n)
			for i := range parts {
				if kinds[i] < 0 {
					parts[i] = words[picks[i]]
				} else {
					parts[i] = counters[kinds[i]](rr)
				}
			}
			return strings.Join(parts, " ")
		}
		a, b := build(r.Uint64()), build(r.Uint64())
		if FoldTitle(a) != FoldTitle(b) {
			t.Fatalf("FoldTitle(%q): got %q, want %q, the fold of %q (only the counters differ)", b, FoldTitle(b), FoldTitle(a), a)
		}
	}
}

// TestFoldingIsIdempotent: a folded title is already a bucket key, on
// random strings of the characters that matter.
func TestFoldingIsIdempotent(t *testing.T) {
	alpha := []string{"0", "1", "9", ":", ".", ",", "/", "%", "-", "+", "#", "(", ")", "[", "]", " ", "  ", "a", "é", "\t", "\u00a0", "\xff"}
	r := rand.New(rand.NewPCG(1, 2))
	for range 200_000 {
		var sb strings.Builder
		for range r.IntN(14) {
			sb.WriteString(alpha[r.IntN(len(alpha))])
		}
		s := sb.String()
		once := FoldTitle(s)
		if twice := FoldTitle(once); twice != once {
			t.Fatalf("FoldTitle(FoldTitle(%q)): got %q, want %q, the first fold", s, twice, once)
		}
	}
}

func BenchmarkFoldTitle(b *testing.B) {
	for _, title := range []string{"notes on the review — Mozilla Firefox", "(3) Inbox - you@example.org - Mail — Mozilla Firefox"} {
		b.Run(strconv.Itoa(len(title)), func(b *testing.B) {
			for b.Loop() {
				FoldTitle(title)
			}
		})
	}
}
