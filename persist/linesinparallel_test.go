package persist

import (
	"errors"
	"fmt"
	"io"
	"slices"
	"strings"
	"testing"
	"testing/iotest"
)

// seenLine is one call of a line callback, kept.
type seenLine struct {
	text     string
	complete bool
}

// linesInParallel runs eachLineInParallel over r with an fn that records
// each line.
func linesInParallel(r io.Reader) ([]seenLine, error) {
	var got []seenLine
	err := eachLineInParallel(r, func() func([]byte, bool) seenLine {
		return func(line []byte, complete bool) seenLine { return seenLine{string(line), complete} }
	}, func(l seenLine) { got = append(got, l) })
	return got, err
}

// eachLineInParallel must see exactly the lines eachLine sees, in the same
// order: blocks cut mid-line, lines longer than a block, a file that ends
// on a block's edge, an unfinished last line, empty lines, and readers
// that return a byte or half a buffer at a time.
func TestEachLineInParallelSeesWhatEachLineSees(t *testing.T) {
	var many strings.Builder
	for i := range 20_000 {
		fmt.Fprintf(&many, "line %d %s\n", i, strings.Repeat("x", i%97))
	}
	edge := strings.Repeat(strings.Repeat("y", 1023)+"\n", 2*lineBlockSize/1024)
	files := map[string]string{
		"empty":                    "",
		"one unfinished":           "no newline",
		"empty lines":              "\n\n\n",
		"many lines":               many.String(),
		"many, unfinished tail":    many.String() + "torn",
		"ends on a block's edge":   edge,
		"a line of three blocks":   "a\n" + strings.Repeat("z", 3*lineBlockSize+7) + "\nb\n",
		"a long unfinished line":   "a\n" + strings.Repeat("z", 2*lineBlockSize+1),
		"a long line, then blocks": strings.Repeat("z", lineBlockSize+1) + "\n" + many.String(),
	}
	readers := map[string]func(string) io.Reader{
		"whole":       func(s string) io.Reader { return strings.NewReader(s) },
		"byte a time": func(s string) io.Reader { return iotest.OneByteReader(strings.NewReader(s)) },
		"half reads":  func(s string) io.Reader { return iotest.HalfReader(strings.NewReader(s)) },
		"EOF w/ data": func(s string) io.Reader { return iotest.DataErrReader(strings.NewReader(s)) },
	}
	for name, content := range files {
		var want []seenLine
		if err := eachLine(strings.NewReader(content), func(line []byte, complete bool) error {
			want = append(want, seenLine{string(line), complete})
			return nil
		}); err != nil {
			t.Fatal(err)
		}
		for how, reader := range readers {
			if how == "byte a time" && len(content) > 100_000 {
				continue // the long files a byte at a time take seconds and show nothing new
			}
			got, err := linesInParallel(reader(content))
			if err != nil {
				t.Errorf("%s, %s: got %v, want no error", name, how, err)
			}
			if !slices.Equal(got, want) {
				t.Errorf("%s, %s: eachLineInParallel: got %d lines, want %d as eachLine reads them; first difference at %d", name, how, len(got), len(want), firstDifference(got, want))
			}
		}
	}
}

// A read error ends the walk with that error, after some whole lines, all
// of them in order.
func TestEachLineInParallelStopsAtAReadError(t *testing.T) {
	var content strings.Builder
	for i := range 200_000 {
		fmt.Fprintf(&content, "%d\n", i)
	}
	broken := errors.New("the disk went away")
	r := io.MultiReader(strings.NewReader(content.String()[:3*lineBlockSize+5]), iotest.ErrReader(broken))
	got, err := linesInParallel(r)
	if !errors.Is(err, broken) {
		t.Fatalf("eachLineInParallel: got %v, want the read error", err)
	}
	if len(got) == 0 {
		t.Fatal("lines before the read error: got none, want some")
	}
	for i, l := range got {
		if want := (seenLine{fmt.Sprint(i), true}); l != want {
			t.Fatalf("line %d: got %+v, want %+v", i, l, want)
		}
	}
}

// A reader that keeps returning nothing is given up on, as bufio does,
// rather than read forever.
func TestEachLineInParallelGivesUpOnAStuckReader(t *testing.T) {
	_, err := linesInParallel(io.MultiReader(strings.NewReader("a\nb\n"), stuckReader{}))
	if !errors.Is(err, io.ErrNoProgress) {
		t.Fatalf("eachLineInParallel on a reader stuck at (0, nil): got %v, want io.ErrNoProgress", err)
	}
}

type stuckReader struct{}

func (stuckReader) Read([]byte) (int, error) { return 0, nil }

func firstDifference(a, b []seenLine) int {
	for i := range min(len(a), len(b)) {
		if a[i] != b[i] {
			return i
		}
	}
	return min(len(a), len(b))
}
