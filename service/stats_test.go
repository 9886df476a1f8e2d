package service

import (
	"encoding/json"
	"math/rand/v2"
	"sort"
	"testing"
	"time"
)

// TestListedIsBoundedExactAndNamesTheBest checks the bounded list against
// a brute force on random credits: it names the TopBuckets longest
// buckets (kept as time is credited, or found afresh), each named class's
// remainder is its time not named, the list adds up to the total, and it
// is never longer than its bound.
func TestListedIsBoundedExactAndNamesTheBest(t *testing.T) {
	r := rand.New(rand.NewPCG(3, 4))
	for round := range 500 {
		kept := newStats()
		kept.best() // from now on credit keeps the top
		fresh := newStats()
		for range r.IntN(400) {
			k := bucketKey{class: string(rune('a' + r.IntN(6))), title: string(rune('a' + r.IntN(40)))}
			if r.IntN(10) == 0 {
				k = []bucketKey{awayKey, unavailableKey, suspendedKey}[r.IntN(3)]
			}
			d := time.Duration(1+r.IntN(5000)) * time.Millisecond
			kept.credit(k, d)
			fresh.credit(k, d)
		}
		all := make([]timed, 0, len(fresh.buckets))
		for k, d := range fresh.buckets {
			all = append(all, timed{k, d})
		}
		sort.Slice(all, func(i, j int) bool { return all[i].before(all[j]) })
		want := all[:min(len(all), TopBuckets)]
		for _, st := range []*stats{kept, fresh} {
			got := st.best()
			if len(got) != len(want) {
				t.Fatalf("round %d: %d named, want %d", round, len(got), len(want))
			}
			for i := range want {
				if got[i] != want[i] {
					t.Fatalf("round %d: named %d is %v, want %v", round, i, got[i], want[i])
				}
			}
			list, _ := st.listed(got, bucketKey{}, 0)
			if len(list) > 2*TopBuckets+5 {
				t.Fatalf("round %d: listed entries: got %d, want at most %d", round, len(list), 2*TopBuckets+5)
			}
			var sum time.Duration
			perClass := map[string]time.Duration{}
			for i, x := range list {
				sum += x.d
				if i > 0 && x.before(list[i-1]) {
					t.Fatalf("round %d: entry %d: got %+v before %+v, want them in order", round, i, list[i-1], x)
				}
				if !x.k.reserved() {
					perClass[x.k.class] += x.d
				}
			}
			if sum != st.total {
				t.Fatalf("round %d: the list adds up to: got %v, want the total %v", round, sum, st.total)
			}
			for c, d := range perClass {
				if d != st.byClass[c] {
					t.Fatalf("round %d: class %q listed: got %v, want all its %v", round, c, d, st.byClass[c])
				}
			}
		}
	}
}

// TestSummaryStaysSmallWhateverTheSessionSaw: 1,200 distinct titles
// (no counters to fold) seal a summary of a bounded number of buckets that
// still adds up to the session's time, per class and in all.
func TestSummaryStaysSmallWhateverTheSessionSaw(t *testing.T) {
	h := newHarness(t)
	h.start(t, LevelWarn)
	words := []string{"alpha", "beta", "gamma", "delta", "epsilon", "zeta", "eta", "theta", "iota", "kappa"}
	for i := range 1200 { // 20 minutes, the harness's timebox is 25
		title := words[i%10] + " " + words[i/10%10] + " " + words[i/100%10] + " " + words[i/1000%10]
		class := []string{"firefox", "Code"}[i%2]
		h.RecordWindow(win(class, title))
		h.clock.Advance(time.Second)
	}
	h.RecordWindow(win("Code", "alpha"))
	h.clock.Advance(time.Second)
	must(t, h.Complete())
	if v := h.View(); len(v.Buckets) > 2*TopBuckets+5 {
		t.Fatalf("buckets in the view: got %d, want at most %d", len(v.Buckets), 2*TopBuckets+5)
	}
	if _, err := h.End(); err != nil {
		t.Fatal(err)
	}
	sum := h.store.sealed()[0]
	if len(sum.Buckets) > 2*TopBuckets+5 {
		t.Fatalf("buckets in the summary: got %d, want at most %d", len(sum.Buckets), 2*TopBuckets+5)
	}
	var secs uint64
	perClass := map[string]uint64{}
	for _, b := range sum.Buckets {
		secs += b.Seconds
		perClass[b.Class] += b.Seconds
	}
	if secs != 1201 || perClass["firefox"]+perClass[""] < 600 {
		t.Fatalf("the summary adds up to: got %d s (%v), want 1201, at least 600 of them firefox or unnamed", secs, perClass)
	}
	if b, err := json.Marshal(sum); err != nil || len(b) > 4096 {
		t.Fatalf("the summary as JSON: got %d bytes (%v), want at most 4096", len(b), err)
	}
}

// A window with neither class nor title (a compositor may say so) is read
// live like any other, and the list still adds up.
func TestLiveBucketsOfAWindowWithoutClassOrTitle(t *testing.T) {
	h := newHarness(t)
	h.start(t, LevelWarn)
	for i := range TopBuckets + 3 {
		h.RecordWindow(win("App", string(rune('a'+i))))
		h.clock.Advance(time.Duration(1+i) * time.Second)
	}
	h.RecordWindow(Window{ID: "9", Available: true})
	h.clock.Advance(1500 * time.Millisecond)
	v := h.View()
	var sum uint64
	for _, b := range v.Buckets {
		sum += b.Seconds
	}
	if want := uint64((TopBuckets+3)*(TopBuckets+4)/2) + 2; sum < want-2 || sum > want || v.ChangesIn <= 0 {
		t.Fatalf("buckets add up to %d s, want about %d; ChangesIn %v: %+v", sum, want, v.ChangesIn, v.Buckets)
	}
}
