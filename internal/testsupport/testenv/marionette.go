package testenv

import (
	"bufio"
	"encoding/json"
	"fmt"
	"io"
	"net"
	"strconv"
	"strings"
	"testing"
	"time"
)

// Marionette is a connection to Firefox's remote-control protocol
// (firefox --marionette, on the port of the marionette.port preference):
// what geckodriver speaks, here only to do what a person does in
// about:debugging.
type Marionette struct {
	conn net.Conn
	r    *bufio.Reader
	id   int
}

// DialMarionette connects to the Firefox listening on 127.0.0.1:port,
// waiting up to a minute for it to start, and opens a session.
func DialMarionette(t testing.TB, port int) *Marionette {
	t.Helper()
	var m *Marionette
	var last error
	WaitUntil(t, time.Minute, fmt.Sprintf("Firefox's Marionette on port %d", port), func() bool {
		conn, err := net.DialTimeout("tcp", "127.0.0.1:"+strconv.Itoa(port), time.Second)
		if err != nil {
			last = err
			return false
		}
		m = &Marionette{conn: conn, r: bufio.NewReader(conn)}
		conn.SetDeadline(time.Now().Add(10 * time.Second))
		if _, err := m.read(); err != nil { // the server's hello
			last = err
			conn.Close()
			return false
		}
		return true
	})
	if m == nil {
		t.Fatalf("Marionette: %v", last)
	}
	t.Cleanup(func() { m.conn.Close() })
	m.Call(t, "WebDriver:NewSession", map[string]any{"capabilities": map[string]any{}})
	return m
}

// read reads one message: its length in decimal, a colon, then the JSON.
func (m *Marionette) read() (json.RawMessage, error) {
	n, err := m.r.ReadString(':')
	if err != nil {
		return nil, err
	}
	size, err := strconv.Atoi(strings.TrimSuffix(n, ":"))
	if err != nil || size <= 0 || size > 16<<20 {
		return nil, fmt.Errorf("a message length of %q", n)
	}
	buf := make([]byte, size)
	if _, err := io.ReadFull(m.r, buf); err != nil {
		return nil, err
	}
	return buf, nil
}

// Call sends the command name with params and returns its result; an
// error reply fails the test.
func (m *Marionette) Call(t testing.TB, name string, params map[string]any) json.RawMessage {
	t.Helper()
	m.id++
	msg, _ := json.Marshal([]any{0, m.id, name, params})
	m.conn.SetDeadline(time.Now().Add(time.Minute))
	if _, err := fmt.Fprintf(m.conn, "%d:%s", len(msg), msg); err != nil {
		t.Fatalf("Marionette %s: %v", name, err)
	}
	for {
		raw, err := m.read()
		if err != nil {
			t.Fatalf("Marionette %s: %v", name, err)
		}
		var reply []json.RawMessage
		if err := json.Unmarshal(raw, &reply); err != nil || len(reply) != 4 {
			t.Fatalf("Marionette %s: got the reply %s, want [1, id, error, result]", name, raw)
		}
		var id int
		json.Unmarshal(reply[1], &id)
		if id != m.id {
			continue
		}
		if string(reply[2]) != "null" {
			t.Fatalf("Marionette %s: got the error %s", name, reply[2])
		}
		return reply[3]
	}
}

// InstallTemporaryAddon loads the extension at path (an .xpi or a folder)
// as about:debugging's "Load Temporary Add-on…" does: any Firefox takes it,
// signed or not, until it quits.
func (m *Marionette) InstallTemporaryAddon(t testing.TB, path string) string {
	t.Helper()
	var r struct {
		Value string `json:"value"`
	}
	json.Unmarshal(m.Call(t, "Addon:Install", map[string]any{"path": path, "temporary": true}), &r)
	return r.Value
}
