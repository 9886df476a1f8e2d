package persist

import (
	"bytes"
	"errors"
	"io"
	"runtime"
	"slices"
	"sync"
)

// lineBlockSize is how much of a file eachLineInParallel hands a worker at
// once: large enough that handing over costs nothing next to the work on
// it, small enough that the blocks in flight (at most 2·workers+2) stay
// near a MiB.
const lineBlockSize = 128 << 10

// maxEmptyReads is how many reads in a row may return nothing before a
// reader counts as stuck, as bufio counts.
const maxEmptyReads = 100

// eachLineInParallel is eachLine for work that needs each line on its own
// (no line depends on the one before): it reads r in blocks of whole
// lines, has fn turn each line into a result on GOMAXPROCS goroutines, at
// most four (each with its own fn from newFn, so an fn may keep scratch
// state), and hands use every line's result in file order, on the calling
// goroutine. A line's complete is as for eachLine. fn must not keep line,
// and a result must not hold on to its bytes: they are reused. On a read
// error, use has seen every line before the block that failed.
func eachLineInParallel[T any](r io.Reader, newFn func() func(line []byte, complete bool) T, use func(T)) error {
	type block struct {
		data    []byte
		results chan []T
	}
	workers := min(runtime.GOMAXPROCS(0), 4)
	work := make(chan *block)
	inOrder := make(chan *block, 2*workers)
	free := make(chan []byte, 2*workers+2)

	var working sync.WaitGroup
	for range workers {
		fn := newFn()
		working.Add(1)
		go func() {
			defer working.Done()
			for b := range work {
				var results []T
				for data := b.data; len(data) > 0; {
					i := bytes.IndexByte(data, '\n')
					if i < 0 {
						results = append(results, fn(data, false))
						break
					}
					results = append(results, fn(data[:i], true))
					data = data[i+1:]
				}
				b.results <- results
			}
		}()
	}
	readErr := make(chan error, 1)
	go func() {
		defer close(inOrder)
		defer close(work)
		readErr <- readLineBlocks(r, free, func(data []byte) {
			b := &block{data: data, results: make(chan []T, 1)}
			inOrder <- b // first, so use sees blocks in the order read
			work <- b
		})
	}()
	// Should use panic, let the reader and the workers run out rather than
	// block forever; normally inOrder is drained and closed by then.
	defer func() {
		for b := range inOrder {
			<-b.results
		}
		working.Wait()
	}()
	for b := range inOrder {
		for _, v := range <-b.results {
			use(v)
		}
		if cap(b.data) == lineBlockSize { // a block grown for a long line is let go
			select {
			case free <- b.data:
			default:
			}
		}
	}
	return <-readErr
}

// readLineBlocks reads r to its end and calls emit with blocks that end
// at a "\n", except the last, which holds whatever follows the last "\n".
// A line longer than a block makes its block grow. Buffers come from free
// when it has one.
func readLineBlocks(r io.Reader, free <-chan []byte, emit func([]byte)) error {
	var carry []byte // the start of a line the previous block cut off
	empty := 0
	for {
		var buf []byte
		select {
		case buf = <-free:
		default:
			buf = make([]byte, 0, lineBlockSize)
		}
		buf = append(buf[:0], carry...)
		for {
			if len(buf) == cap(buf) {
				buf = slices.Grow(buf, cap(buf)) // no "\n" in a whole block
			}
			n, err := r.Read(buf[len(buf):cap(buf)])
			buf = buf[:len(buf)+n]
			if n > 0 {
				empty = 0
			} else {
				empty++
			}
			if errors.Is(err, io.EOF) {
				if len(buf) > 0 {
					emit(buf)
				}
				return nil
			}
			if err != nil {
				return err
			}
			if empty >= maxEmptyReads {
				return io.ErrNoProgress
			}
			if len(buf) < cap(buf) {
				continue
			}
			if i := bytes.LastIndexByte(buf, '\n'); i >= 0 {
				carry = append(carry[:0], buf[i+1:]...)
				emit(buf[:i+1])
				break
			}
		}
	}
}
