package service

import (
	"math/rand/v2"
	"regexp"
	"strings"
	"testing"
	"time"
)

// volatileNumbers is the rule ScrubTitle implements (see scrub.go).
var volatileNumbers = regexp.MustCompile(`-?\d+(([:.]\d+)+%?|%)`)

// TestScrubTitleMatchesTheRegexp checks the scanner against the regexp rule
// it replaces, on random titles made of the characters that matter.
func TestScrubTitleMatchesTheRegexp(t *testing.T) {
	alpha := []string{"0", "1", "9", ":", ".", "%", "-", " ", "  ", "a", "é", "\t", "\u00a0", "\xff"}
	r := rand.New(rand.NewPCG(1, 2))
	for range 200_000 {
		var sb strings.Builder
		for range r.IntN(14) {
			sb.WriteString(alpha[r.IntN(len(alpha))])
		}
		s := sb.String()
		want := strings.Join(strings.Fields(volatileNumbers.ReplaceAllString(s, " ")), " ")
		if got := ScrubTitle(s); got != want {
			t.Fatalf("ScrubTitle(%q) = %q, the regexp says %q", s, got, want)
		}
	}
}

// TestTopNIsSortedsHead checks topN against sorted on random buckets.
func TestTopNIsSortedsHead(t *testing.T) {
	r := rand.New(rand.NewPCG(3, 4))
	for range 2000 {
		s := newStats()
		for range r.IntN(60) {
			s.credit(bucketKey{class: string(rune('a' + r.IntN(5))), title: string(rune('a' + r.IntN(9)))}, time.Duration(r.IntN(4))*time.Second)
		}
		a, b := s.sorted(), s.topN(TopBuckets)
		a = a[:min(len(a), TopBuckets)]
		if len(a) != len(b) {
			t.Fatalf("len %d vs %d", len(a), len(b))
		}
		for i := range a {
			if a[i] != b[i] {
				t.Fatalf("%d: sorted %v, topN %v", i, a, b)
			}
		}
	}
}
