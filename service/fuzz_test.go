package service

// Fuzz targets. A plain `go test` runs only their seeds (the f.Add calls
// and testdata/fuzz/<Target>/); to search for longer, one target at a time:
//
//	go test -run '^$' -fuzz '^FuzzStats$' -fuzztime 5m ./service/
//
// A failure the search finds is written to testdata/fuzz/<Target>/ and
// from then on runs with every `go test`.

import (
	"strings"
	"testing"
	"time"
	"unicode"
	"unicode/utf8"
)

// The text rule (next action, success condition, reasons): what it accepts
// is trimmed, valid UTF-8, free of control characters and at most 500
// characters, and accepting it again changes nothing.
func FuzzCleanText(f *testing.F) {
	for _, s := range []string{"", " ", "write the intro", " padded ", "a\nb", "\x1b[0m", "\u0085", "\u202e", "\xff", strings.Repeat("é", 500), strings.Repeat("é", 501), " " + strings.Repeat("x", 500) + " "} {
		f.Add(s, true)
		f.Add(s, false)
	}
	f.Fuzz(func(t *testing.T, in string, required bool) {
		out, err := cleanText("text", in, required)
		if err != nil {
			if err.Kind != InvalidArgument || !strings.Contains(err.Msg, "text") {
				t.Fatalf("%q refused as %v %q: want InvalidArgument naming the argument", in, err.Kind, err.Msg)
			}
			return
		}
		n := utf8.RuneCountInString(out)
		switch {
		case !utf8.ValidString(out):
			t.Errorf("cleanText(%q): got invalid UTF-8 %q, want valid UTF-8 or a refusal", in, out)
		case strings.TrimSpace(out) != out:
			t.Errorf("cleanText(%q): got %q, want it trimmed or a refusal", in, out)
		case strings.IndexFunc(out, unicode.IsControl) >= 0:
			t.Errorf("cleanText(%q): got %q with control characters, want none or a refusal", in, out)
		case n > MaxTextLen || (required && n == 0):
			t.Errorf("cleanText(%q, required %v): got %d characters, want 1 (0 if not required) to %d or a refusal", in, required, n, MaxTextLen)
		}
		if again, err := cleanText("text", out, required); err != nil || again != out {
			t.Errorf("cleanText(%q) is %q; cleaned again: got %q, %v, want it unchanged", in, out, again, err)
		}
		if r, err := cleanRule("entry", 0, in); err == nil {
			c := r.Text
			if c != strings.TrimSpace(c) || utf8.RuneCountInString(c) > MaxClassLen || c == "" || strings.IndexFunc(c, unicode.IsControl) >= 0 {
				t.Errorf("cleanRule(%q): got %q, want it trimmed, 1 to %d characters, no control characters, or a refusal", in, c, MaxClassLen)
			}
			matches(r, Window{Class: in, Title: in}, in) // never panics
		} else if err.Kind != InvalidArgument || !strings.Contains(err.Msg, "entry") {
			t.Fatalf("entry %q refused as %v %q: want InvalidArgument naming the entry", in, err.Kind, err.Msg)
		}
	})
}

// Accounting, fed any sequence of raw events (live, replayed, damaged):
// it never panics, the same events give the same stats, drift and away
// time are parts of the bucket time, the buckets hold no more time than
// the events span going forward, and the bucket keys stay bounded.
func FuzzStats(f *testing.F) {
	f.Add([]byte{0, 10, 1, 20, 2, 30, 3, 40, 4, 5, 6, 7})
	f.Add([]byte{1, 200, 1, 0, 0, 100, 5, 1, 1, 255})
	f.Add([]byte("a slightly longer sequence of bytes that becomes events"))
	f.Fuzz(func(t *testing.T, data []byte) {
		events := eventsOf(data)
		a, b := newStats(), newStats()
		for _, e := range events {
			a.apply(e)
			b.apply(e)
		}
		if a.total != b.total || a.switches != b.switches || a.drift != b.drift || a.away != b.away || a.minimizes != b.minimizes {
			t.Fatalf("stats of the same events, twice (total, switches, drift, away, minimizes): got %v %d %v %v %d and %v %d %v %v %d, want them the same",
				a.total, a.switches, a.drift, a.away, a.minimizes, b.total, b.switches, b.drift, b.away, b.minimizes)
		}
		var forward time.Duration
		focus := uint32(0)
		for i, e := range events {
			if i > 0 {
				forward += max(0, time.Duration(e.AtUnixMillis-events[i-1].AtUnixMillis)*time.Millisecond)
			}
			if e.Mark == "" {
				focus++
			}
		}
		total := a.total
		switch {
		case a.drift+a.away > total:
			t.Errorf("drift %v + away %v: got more than the buckets' %v, want at most it", a.drift, a.away, total)
		case total > forward:
			t.Errorf("the buckets hold: got %v, want at most the %v the events span going forward", total, forward)
		case a.switches > focus:
			t.Errorf("switches: got %d, want at most the %d focus events", a.switches, focus)
		case a.distinct > MaxBucketKeys:
			t.Errorf("distinct keys: got %d, want at most %d", a.distinct, MaxBucketKeys)
		}
		for k, d := range a.buckets {
			if d < 0 {
				t.Errorf("bucket %v: got %v, want at least 0", k, d)
			}
		}
	})
}

// eventsOf turns fuzz bytes into raw events, three bytes each: a time
// step (signed, so clocks step back too), a kind, and a window.
func eventsOf(data []byte) []FocusEvent {
	var out []FocusEvent
	at := int64(1_780_000_000_000)
	marks := []string{"", "", "", "", MarkPause, MarkVerdict, MarkMinimized, MarkAway, MarkBack}
	for len(data) >= 3 {
		step, kind, win := int8(data[0]), data[1], data[2]
		data = data[3:]
		at += int64(step) * 997
		e := FocusEvent{AtUnixMillis: at, Mark: marks[int(kind)%len(marks)], OffTask: kind&0x80 != 0}
		if e.Mark == "" {
			e.Available = win%5 != 0
			e.Class = string(rune('A' + win%7))
			e.Title = "title " + string(rune('a'+win%3)) + " 12:3" + string(rune('0'+win%10))
			if !e.Available {
				e.Class, e.Title, e.Reason = "", "", "no window has focus"
			}
		}
		if e.Mark == MarkAway && win%2 == 0 {
			e.Reason = AwaySuspended
		}
		out = append(out, e)
	}
	return out
}
