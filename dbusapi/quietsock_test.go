package dbusapi

import (
	"bytes"
	"crypto/rand"
	"encoding/binary"
	"errors"
	"io"
	"net"
	"os"
	"strings"
	"syscall"
	"testing"

	"github.com/godbus/dbus/v5"
)

// socketPair is a connected pair of unix stream sockets, one end quiet.
func socketPair(t *testing.T) (*quietSocket, net.Conn) {
	t.Helper()
	fds, err := syscall.Socketpair(syscall.AF_UNIX, syscall.SOCK_STREAM, 0)
	if err != nil {
		t.Fatal(err)
	}
	conn := func(fd int) net.Conn {
		f := os.NewFile(uintptr(fd), "socketpair")
		defer f.Close()
		c, err := net.FileConn(f)
		if err != nil {
			t.Fatal(err)
		}
		t.Cleanup(func() { c.Close() })
		return c
	}
	q, err := newQuietSocket(conn(fds[0]).(*net.UnixConn))
	if err != nil {
		t.Fatal(err)
	}
	return q, conn(fds[1])
}

// A write far bigger than the socket's buffer waits in the poller until
// the peer reads, and arrives whole; the peer closing reads as EOF.
func TestQuietSocketMovesBigMessagesAndSeesEOF(t *testing.T) {
	q, peer := socketPair(t)
	big := make([]byte, 8<<20)
	rand.Read(big)
	got := make(chan []byte)
	go func() {
		b, _ := io.ReadAll(io.LimitReader(peer, int64(len(big))))
		got <- b
	}()
	if n, err := q.Write(big); n != len(big) || err != nil {
		t.Fatalf("Write = %d, %v", n, err)
	}
	if !bytes.Equal(<-got, big) {
		t.Fatal("the peer read other bytes than were written")
	}

	if _, err := peer.Write([]byte("reply")); err != nil {
		t.Fatal(err)
	}
	buf := make([]byte, 64)
	if n, err := q.Read(buf); n != 5 || err != nil || string(buf[:n]) != "reply" {
		t.Fatalf("Read = %d %q, %v", n, buf[:n], err)
	}
	peer.Close()
	if n, err := q.Read(buf); n != 0 || !errors.Is(err, io.EOF) {
		t.Fatalf("Read after the peer closed = %d, %v; want EOF", n, err)
	}
	q.Close()
	if _, err := q.Write([]byte("x")); err == nil {
		t.Fatal("Write on a closed socket succeeded")
	}
}

// A message far bigger than the read buffer passes through the tap whole,
// and its buffer is given back once the next message is read: under the
// daemon's memory limit one big message must not stay resident.
func TestTapGivesBackABigMessagesBuffer(t *testing.T) {
	q, peer := socketPair(t)
	tp := &tap{sock: q}
	tp.began.Store(true)
	call := func(arg string) []byte {
		msg := &dbus.Message{Type: dbus.TypeMethodCall, Headers: map[dbus.HeaderField]dbus.Variant{
			dbus.FieldPath:      dbus.MakeVariant(dbus.ObjectPath("/x")),
			dbus.FieldMember:    dbus.MakeVariant("Big"),
			dbus.FieldSignature: dbus.MakeVariant(dbus.SignatureOf(arg)),
		}, Body: []any{arg}}
		var buf bytes.Buffer
		if err := msg.EncodeTo(&buf, binary.LittleEndian); err != nil {
			t.Fatal(err)
		}
		return buf.Bytes()
	}
	big, small := call(strings.Repeat("x", 4<<20)), call("y")
	go func() {
		peer.Write(big)
		peer.Write(small)
	}()
	for _, want := range [][]byte{big, small} {
		got := make([]byte, len(want))
		if _, err := io.ReadFull(tp, got); err != nil || !bytes.Equal(got, want) {
			t.Fatalf("read %d bytes through the tap (%v), not the message sent", len(got), err)
		}
	}
	if len(tp.buf) > readBuffer {
		t.Fatalf("after the big message the tap still holds a %d-byte buffer", len(tp.buf))
	}
}
