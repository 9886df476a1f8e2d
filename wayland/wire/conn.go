package wire

import (
	"bufio"
	"context"
	"errors"
	"fmt"
	"net"
	"path/filepath"
	"sync"
	"time"
)

// writeTimeout bounds a write when the caller's context has no deadline: a
// compositor that stops reading must not wedge its client.
const writeTimeout = 5 * time.Second

// SocketPath is where the compositor of display listens: display itself
// when it is an absolute path, else display under runtimeDir
// ($XDG_RUNTIME_DIR), as libwayland resolves WAYLAND_DISPLAY.
func SocketPath(display, runtimeDir string) (string, error) {
	switch {
	case display == "":
		return "", errors.New("no Wayland display: WAYLAND_DISPLAY is not set")
	case filepath.IsAbs(display):
		return display, nil
	case runtimeDir == "":
		return "", fmt.Errorf("cannot find the Wayland display %s: XDG_RUNTIME_DIR is not set", display)
	}
	return filepath.Join(runtimeDir, display), nil
}

// Conn is a client connection to a compositor. One goroutine reads
// (ReadMessage); any number may write (Send), one message at a time.
type Conn struct {
	c *net.UnixConn
	r *bufio.Reader

	wmu sync.Mutex
}

// Dial connects to the compositor listening at path.
func Dial(ctx context.Context, path string) (*Conn, error) {
	var d net.Dialer
	c, err := d.DialContext(ctx, "unix", path)
	if err != nil {
		return nil, err
	}
	uc := c.(*net.UnixConn)
	return &Conn{c: uc, r: bufio.NewReaderSize(uc, MaxMessageSize)}, nil
}

// ReadMessage reads the next message. It blocks until one arrives or the
// connection fails or is closed. See Read.
func (c *Conn) ReadMessage() (Message, error) { return Read(c.r) }

// Send writes framed messages (from Builder.Bytes) in one write, bounded by
// ctx's deadline or writeTimeout.
func (c *Conn) Send(ctx context.Context, msgs ...[]byte) error {
	var buf []byte
	if len(msgs) == 1 {
		buf = msgs[0]
	} else {
		for _, m := range msgs {
			buf = append(buf, m...)
		}
	}
	deadline, ok := ctx.Deadline()
	if !ok {
		deadline = time.Now().Add(writeTimeout)
	}
	c.wmu.Lock()
	defer c.wmu.Unlock()
	if err := c.c.SetWriteDeadline(deadline); err != nil {
		return err
	}
	_, err := c.c.Write(buf)
	return err
}

// Close closes the connection; a blocked ReadMessage returns.
func (c *Conn) Close() error { return c.c.Close() }

// Buffered is how many bytes have arrived but not been read as messages
// yet. A reader that sees 0 after a message has caught up with what the
// compositor sent in one go, and can act on a burst once.
func (c *Conn) Buffered() int { return c.r.Buffered() }
