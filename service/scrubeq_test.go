package service

import (
	"math/rand/v2"
	"testing"
	"time"
)

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
