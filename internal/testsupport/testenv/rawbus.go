package testenv

import (
	"bufio"
	"encoding/binary"
	"fmt"
	"io"
	"net"
	"os"
	"strings"
	"testing"
	"time"
)

// RawConn is a bus connection spoken by hand: every message is built byte
// by byte, in either byte order, so a test can send what no D-Bus library
// would — a call of exactly 2^27 bytes, forged messages in a body, a call
// without an interface in big-endian.
type RawConn struct {
	Name   string // the unique name the bus gave it
	conn   net.Conn
	r      *bufio.Reader
	serial uint32
}

// DialRaw connects to the bus at address (a unix:path= address), signs in
// with EXTERNAL and says Hello.
func DialRaw(t testing.TB, address string) *RawConn {
	t.Helper()
	path, ok := strings.CutPrefix(address, "unix:path=")
	if !ok {
		t.Fatalf("DialRaw: %q is not a unix:path= address", address)
	}
	path, _, _ = strings.Cut(path, ",")
	conn, err := net.Dial("unix", path)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { conn.Close() })
	c := &RawConn{conn: conn, r: bufio.NewReaderSize(conn, 1<<16)}
	uid := fmt.Sprintf("%x", fmt.Sprint(os.Geteuid()))
	if _, err := fmt.Fprintf(conn, "\x00AUTH EXTERNAL %s\r\n", uid); err != nil {
		t.Fatal(err)
	}
	line, err := c.r.ReadString('\n')
	if err != nil || !strings.HasPrefix(line, "OK ") {
		t.Fatalf("EXTERNAL auth: %q, %v", line, err)
	}
	if _, err := io.WriteString(conn, "BEGIN\r\n"); err != nil {
		t.Fatal(err)
	}
	reply := c.Call(t, RawMessage{Order: binary.LittleEndian, Destination: "org.freedesktop.DBus",
		Path: "/org/freedesktop/DBus", Interface: "org.freedesktop.DBus", Member: "Hello"})
	if reply.ErrorName != "" || len(reply.Strings) != 1 {
		t.Fatalf("Hello: %+v", reply)
	}
	c.Name = reply.Strings[0]
	return c
}

// RawMessage is a message to encode, or one read back. Body is the body
// already encoded (see RawBody) in Order; Strings is, for a message read,
// the body's leading string arguments.
type RawMessage struct {
	Order                                                   binary.ByteOrder
	Type, Flags                                             byte // Type 0 means a method call
	Serial, ReplySerial                                     uint32
	Path, Interface, Member, ErrorName, Destination, Sender string
	Signature                                               string
	Body                                                    []byte
	Strings                                                 []string
	Raw                                                     []byte // a message read: all of it
}

// Header field codes and message types (D-Bus specification).
const (
	rawMethodCall = 1
	rawReturn     = 2
	rawError      = 3
)

// Encode returns the message's bytes. A Serial of 0 encodes as 1.
func (m RawMessage) Encode() []byte {
	if m.Type == 0 {
		m.Type = rawMethodCall
	}
	if m.Serial == 0 {
		m.Serial = 1
	}
	w := RawBody{Order: m.Order}
	mark := byte('l')
	if m.Order == binary.BigEndian {
		mark = 'B'
	}
	w.buf = append(w.buf, mark, m.Type, m.Flags, 1)
	w.Uint32(uint32(len(m.Body)))
	w.Uint32(m.Serial)
	w.Uint32(0) // header fields length, below
	field := func(code byte, sig string, put func()) {
		w.pad(8)
		w.buf = append(w.buf, code, 1, sig[0], 0)
		put()
	}
	str := func(code byte, sig, v string) {
		if v != "" {
			field(code, sig, func() { w.String(v) })
		}
	}
	str(1, "o", m.Path)
	str(2, "s", m.Interface)
	str(3, "s", m.Member)
	str(4, "s", m.ErrorName)
	if m.ReplySerial != 0 {
		field(5, "u", func() { w.Uint32(m.ReplySerial) })
	}
	str(6, "s", m.Destination)
	str(7, "s", m.Sender)
	if m.Signature != "" {
		field(8, "g", func() { w.buf = append(append(append(w.buf, byte(len(m.Signature))), m.Signature...), 0) })
	}
	m.Order.PutUint32(w.buf[12:16], uint32(len(w.buf)-16))
	w.pad(8)
	return append(w.buf, m.Body...)
}

// RawBody encodes a body, aligned as from the start of one (every body
// starts 8-aligned in its message).
type RawBody struct {
	Order binary.ByteOrder
	buf   []byte
}

func (b *RawBody) pad(to int) {
	for len(b.buf)%to != 0 {
		b.buf = append(b.buf, 0)
	}
}

func (b *RawBody) Uint32(v uint32) *RawBody {
	b.pad(4)
	b.buf = b.Order.(binary.AppendByteOrder).AppendUint32(b.buf, v)
	return b
}

func (b *RawBody) Int32(v int32) *RawBody { return b.Uint32(uint32(v)) }

func (b *RawBody) String(s string) *RawBody {
	b.Uint32(uint32(len(s)))
	b.buf = append(append(b.buf, s...), 0)
	return b
}

// Bytes is an ay.
func (b *RawBody) Bytes(p []byte) *RawBody {
	b.Uint32(uint32(len(p)))
	b.buf = append(b.buf, p...)
	return b
}

func (b *RawBody) Encoded() []byte { return b.buf }

// Send writes a message, numbering it; it returns its serial.
func (c *RawConn) Send(t testing.TB, m RawMessage) uint32 {
	t.Helper()
	c.serial++
	m.Serial = c.serial
	c.Write(t, m.Encode())
	return m.Serial
}

// SendEncoded numbers an encoded message (see RawMessage.Encode) and writes
// it; it returns its serial.
func (c *RawConn) SendEncoded(t testing.TB, msg []byte) uint32 {
	t.Helper()
	c.serial++
	order := binary.ByteOrder(binary.LittleEndian)
	if msg[0] == 'B' {
		order = binary.BigEndian
	}
	order.PutUint32(msg[8:12], c.serial)
	c.Write(t, msg)
	return c.serial
}

// Write writes bytes as they are.
func (c *RawConn) Write(t testing.TB, b []byte) {
	t.Helper()
	if _, err := c.conn.Write(b); err != nil {
		t.Fatal(err)
	}
}

// Call sends m and reads until its reply (other messages are dropped).
func (c *RawConn) Call(t testing.TB, m RawMessage) RawMessage {
	t.Helper()
	serial := c.Send(t, m)
	return c.ReplyTo(t, serial, 25*time.Second)
}

// ReplyTo reads until the reply to serial comes, or fails after timeout.
func (c *RawConn) ReplyTo(t testing.TB, serial uint32, timeout time.Duration) RawMessage {
	t.Helper()
	c.conn.SetReadDeadline(time.Now().Add(timeout))
	defer c.conn.SetReadDeadline(time.Time{})
	for {
		m, err := c.Read()
		if err != nil {
			t.Fatalf("waiting for the reply to serial %d: %v", serial, err)
		}
		if (m.Type == rawReturn || m.Type == rawError) && m.ReplySerial == serial {
			return m
		}
	}
}

// Read reads the next message: its header, and the strings leading its body.
func (c *RawConn) Read() (RawMessage, error) {
	head := make([]byte, 16)
	if _, err := io.ReadFull(c.r, head); err != nil {
		return RawMessage{}, err
	}
	var m RawMessage
	switch head[0] {
	case 'l':
		m.Order = binary.LittleEndian
	case 'B':
		m.Order = binary.BigEndian
	default:
		return m, fmt.Errorf("endianness byte %#x", head[0])
	}
	m.Type, m.Flags = head[1], head[2]
	bodyLen := m.Order.Uint32(head[4:8])
	m.Serial = m.Order.Uint32(head[8:12])
	fieldsLen := int(m.Order.Uint32(head[12:16]))
	rest := make([]byte, (16+fieldsLen+7)&^7-16+int(bodyLen))
	if _, err := io.ReadFull(c.r, rest); err != nil {
		return m, err
	}
	msg := append(head, rest...)
	m.Raw = msg
	r := rawReader{b: msg[:16+fieldsLen], off: 16, order: m.Order}
	for r.off < len(r.b) && r.err == nil {
		r.pad(8)
		code := r.take(1)[0]
		sig := r.sig()
		switch sig {
		case "u":
			if v := r.uint32(); code == 5 {
				m.ReplySerial = v
			}
		case "g":
			if s := r.sig(); code == 8 {
				m.Signature = s
			}
		default:
			v := r.str()
			switch code {
			case 1:
				m.Path = v
			case 2:
				m.Interface = v
			case 3:
				m.Member = v
			case 4:
				m.ErrorName = v
			case 6:
				m.Destination = v
			case 7:
				m.Sender = v
			}
		}
	}
	if r.err != nil {
		return m, r.err
	}
	m.Body = msg[(16+fieldsLen+7)&^7:]
	body := rawReader{b: m.Body, order: m.Order}
	for _, c := range m.Signature {
		if c != 's' || body.err != nil {
			break
		}
		m.Strings = append(m.Strings, body.str())
	}
	return m, nil
}

// Err is the reply's error, "" for a method return.
func (m RawMessage) Err() string {
	if m.ErrorName == "" {
		return ""
	}
	return m.ErrorName + ": " + strings.Join(m.Strings, " ")
}

type rawReader struct {
	b     []byte
	off   int
	order binary.ByteOrder
	err   error
}

func (r *rawReader) take(n int) []byte {
	if r.err != nil || n < 0 || r.off+n > len(r.b) {
		if r.err == nil {
			r.err = io.ErrUnexpectedEOF
		}
		return make([]byte, 8) // enough for what the callers read before they check err
	}
	r.off += n
	return r.b[r.off-n : r.off]
}

func (r *rawReader) pad(to int) { r.take((to - r.off%to) % to) }

func (r *rawReader) uint32() uint32 {
	r.pad(4)
	return r.order.Uint32(r.take(4))
}

func (r *rawReader) str() string {
	n := int(r.uint32())
	b := r.take(n + 1)
	if r.err != nil {
		return ""
	}
	return string(b[:n])
}

func (r *rawReader) sig() string {
	n := int(r.take(1)[0])
	b := r.take(n + 1)
	if r.err != nil {
		return ""
	}
	return string(b[:n])
}
