package persist

import (
	"bufio"
	"errors"
	"io"
)

// eachLine calls fn with every line of r, without its "\n", in order.
// complete is false only for trailing bytes after the last "\n": a line the
// writer never finished (a crash mid-append). Lines of any length are
// handled. fn must not keep line; its bytes are reused.
func eachLine(r io.Reader, fn func(line []byte, complete bool) error) error {
	br := bufio.NewReaderSize(r, 1<<20)
	var long []byte // a line longer than br's buffer, gathered across reads
	for {
		chunk, err := br.ReadSlice('\n')
		if errors.Is(err, bufio.ErrBufferFull) {
			long = append(long, chunk...)
			continue
		}
		line := chunk
		if len(long) > 0 {
			long = append(long, chunk...)
			line = long
		}
		switch {
		case err == nil:
			if err := fn(line[:len(line)-1], true); err != nil {
				return err
			}
			long = long[:0]
		case errors.Is(err, io.EOF):
			if len(line) == 0 {
				return nil
			}
			return fn(line, false)
		default:
			return err
		}
	}
}
