package main

import (
	"bytes"
	"encoding/binary"
	"io"
	"net/url"
	"strings"
	"sync"
	"testing"

	"github.com/antidrift/antidrift/internal/nativemsg"
)

// fakeDaemon records what the host passes on.
type fakeDaemon struct {
	mu      sync.Mutex
	reports []report
	forgot  int
}

func (f *fakeDaemon) ReportTab(_ string, r report) error {
	f.mu.Lock()
	defer f.mu.Unlock()
	f.reports = append(f.reports, r)
	return nil
}

func (f *fakeDaemon) ForgetTabs(string) error {
	f.mu.Lock()
	defer f.mu.Unlock()
	f.forgot++
	return nil
}

func framed(msgs ...string) []byte {
	var buf bytes.Buffer
	for _, m := range msgs {
		if err := nativemsg.Write(&buf, []byte(m)); err != nil {
			panic(err)
		}
	}
	return buf.Bytes()
}

func TestTheHostPassesTabsOnWithoutQueryOrFragment(t *testing.T) {
	d := &fakeDaemon{}
	var log bytes.Buffer
	h := &host{browser: "firefox", d: d, log: &log, out: io.Discard}
	in := framed(
		`{"type":"tab","url":"https://me:pw@github.com/a/b?token=SECRET#SECRET","title":"PR"}`,
		`not json`,
		`{"type":"tab","url":"https://www.youtube.com/watch?v=SECRET","title":"Cats","private":true}`,
		`{"type":"tab","url":"https://example.com/x?SECRET","title":"Opted","private":true,"private_opt_in":true}`,
		`{"type":"surprise"}`,
		`{"type":"none"}`,
	)
	if err := h.run(bytes.NewReader(in)); err != nil {
		t.Fatal(err)
	}
	want := []report{
		{URL: "https://github.com/a/b", Title: "PR"},
		{Private: true},
		{URL: "https://example.com/x", Title: "Opted", Private: true},
		{},
	}
	if len(d.reports) != len(want) {
		t.Fatalf("reports: got %+v, want %+v", d.reports, want)
	}
	for i := range want {
		if d.reports[i] != want[i] {
			t.Errorf("report %d = %+v, want %+v", i, d.reports[i], want[i])
		}
	}
	if d.forgot != 1 {
		t.Errorf("ForgetTabs called %d times at the end of the stream, want 1", d.forgot)
	}
	if !strings.Contains(log.String(), "not a JSON message") || !strings.Contains(log.String(), `unknown message type "surprise"`) {
		t.Errorf("the log: got\n%s\nwant it to name the skipped messages (%q, %q)", log.String(), "not a JSON message", `unknown message type "surprise"`)
	}
}

func TestTheHostEndsOnAMessageOver1MiB(t *testing.T) {
	d := &fakeDaemon{}
	h := &host{browser: "chromium", d: d, log: io.Discard, out: io.Discard}
	in := binary.NativeEndian.AppendUint32(nil, nativemsg.MaxIn+1)
	if err := h.run(bytes.NewReader(in)); err == nil || !strings.Contains(err.Error(), "over 1 MiB") {
		t.Fatalf("run = %v", err)
	}
	if d.forgot != 1 {
		t.Fatal("the daemon was not told the browser is gone")
	}
}

func TestBrowserOfTellsChromiumFromFirefox(t *testing.T) {
	if b := browserOf([]string{"chrome-extension://abcdefghijklmnopabcdefghijklmnop/", "--parent-window=0"}); b != "chromium" {
		t.Errorf("Chromium's arguments: got %s, want chromium", b)
	}
	if b := browserOf([]string{"/home/me/.mozilla/native-messaging-hosts/org.antidrift.native_host.json", "browser@antidrift.github.io"}); b != "firefox" {
		t.Errorf("Firefox's arguments: got %s, want firefox", b)
	}
}

// FuzzHost: whatever the browser writes, the host neither panics nor passes
// on a query, a fragment, a password, or a private tab's address unasked.
func FuzzHost(f *testing.F) {
	f.Add(framed(`{"type":"tab","url":"https://a.example/p?q=1#f","title":"t"}`))
	f.Add(framed(`{"type":"tab","url":"https://a.example/","title":"t","private":true}`))
	f.Add(framed(`{"type":"tab","url":"::","title":1}`, `{"type":"none"}`))
	f.Add(framed(`{"type":"tab","url":"https://u:p@h/%3F?x"}`))
	f.Add([]byte{0xff, 0xff, 0xff, 0x7f})
	f.Add(framed(`[`, `null`, `{"type":"tab","url":"javascript:alert(1)?x"}`))
	f.Fuzz(func(t *testing.T, in []byte) {
		d := &fakeDaemon{}
		h := &host{browser: "firefox", d: d, log: io.Discard, out: io.Discard}
		_ = h.run(bytes.NewReader(in))
		for _, r := range d.reports {
			if strings.ContainsAny(r.URL, "?#") {
				t.Fatalf("a reported URL: got %q, want no query or fragment", r.URL)
			}
			if u, err := url.Parse(r.URL); r.URL != "" && (err != nil || u.User != nil) {
				t.Fatalf("passed on a password, or no address: %q (%v)", r.URL, err)
			}
		}
		if d.forgot != 1 {
			t.Fatal("the end of the stream did not tell the daemon")
		}
	})
}
