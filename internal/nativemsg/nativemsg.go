// Package nativemsg is the browsers' native messaging framing: on a native
// host's stdin and stdout, each message is a 32-bit length in the
// machine's own byte order followed by that many bytes of UTF-8 JSON
// (Firefox and Chromium frame alike).
//
// The browsers would send a host far more than antidrift's extension ever
// does (a tab's address and title); Read refuses anything over MaxIn before
// reading it, so a runaway length never makes the host allocate it.
package nativemsg

import (
	"encoding/binary"
	"errors"
	"fmt"
	"io"
)

// MaxIn is the largest message the host reads from the browser: 1 MiB.
// A tab report is a few KiB at most.
const MaxIn = 1 << 20

// MaxOut is the largest message a browser takes from a native host
// (Chromium and Firefox both refuse more than 1 MB).
const MaxOut = 1 << 20

// ErrTooLarge is Read's answer to a length over MaxIn. The stream cannot be
// resynchronised after it (the body is not read), so the host ends.
var ErrTooLarge = errors.New("nativemsg: the browser sent a message over 1 MiB")

// Read reads one message. It returns io.EOF at a clean end of the stream
// (the browser closed the port), io.ErrUnexpectedEOF when it ends inside a
// message, and ErrTooLarge for a length over MaxIn.
func Read(r io.Reader) ([]byte, error) {
	var head [4]byte
	if _, err := io.ReadFull(r, head[:]); err != nil {
		return nil, err // io.EOF before the first byte, else ErrUnexpectedEOF
	}
	n := binary.NativeEndian.Uint32(head[:])
	if n > MaxIn {
		return nil, fmt.Errorf("%w (%d bytes)", ErrTooLarge, n)
	}
	msg := make([]byte, n)
	if _, err := io.ReadFull(r, msg); err != nil {
		if errors.Is(err, io.EOF) {
			err = io.ErrUnexpectedEOF
		}
		return nil, err
	}
	return msg, nil
}

// Write writes one message, framed, in one write.
func Write(w io.Writer, msg []byte) error {
	if len(msg) > MaxOut {
		return fmt.Errorf("nativemsg: a message of %d bytes is over the browser's 1 MB", len(msg))
	}
	buf := make([]byte, 4+len(msg))
	binary.NativeEndian.PutUint32(buf, uint32(len(msg)))
	copy(buf[4:], msg)
	_, err := w.Write(buf)
	return err
}
