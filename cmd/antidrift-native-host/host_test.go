package main

import (
	"bytes"
	"encoding/binary"
	"encoding/json"
	"io"
	"slices"
	"strings"
	"sync"
	"testing"

	"github.com/antidrift/antidrift/internal/nativemsg"
	"github.com/antidrift/antidrift/internal/testsupport/sitevectors"
)

// fakeDaemon records what the host passes on.
type fakeDaemon struct {
	mu      sync.Mutex
	reports []report
	blocked []int64
	forgot  int
}

func (f *fakeDaemon) TabBlocked(_ string, id int64) error {
	f.mu.Lock()
	defer f.mu.Unlock()
	f.blocked = append(f.blocked, id)
	return nil
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

func TestTheHostPassesTheBrowsersPartsOnAsTheyAre(t *testing.T) {
	d := &fakeDaemon{}
	var log bytes.Buffer
	h := &host{browser: "firefox", d: d, log: &log, out: io.Discard}
	in := framed(
		`{"type":"tab","tab_id":7,"scheme":"https","host":"github.com","path":"/a/b","title":"PR"}`,
		`not json`,
		`{"type":"tab","tab_id":8,"scheme":"https","host":"www.youtube.com","path":"/watch","title":"Cats","private":true}`,
		`{"type":"tab","tab_id":9,"scheme":"https","host":"example.com","path":"/x","title":"Opted","private":true,"private_opt_in":true}`,
		`{"type":"tab","url":"https://old.example/extension?SECRET","title":"Old"}`,
		`{"type":"tab","tab_id":10,"scheme":"https","host":"example.com","path":"/x?SECRET","title":"Forged"}`,
		`{"type":"surprise"}`,
		`{"type":"blocked","tab_id":8}`,
		`{"type":"blocked"}`,
		`{"type":"none"}`,
	)
	if err := h.run(bytes.NewReader(in)); err != nil {
		t.Fatal(err)
	}
	want := []report{
		{TabID: 7, Scheme: "https", Host: "github.com", Path: "/a/b", Title: "PR"},
		{TabID: noTabID, Private: true},
		{TabID: 9, Scheme: "https", Host: "example.com", Path: "/x", Title: "Opted", Private: true},
		{TabID: noTabID},
	}
	if !slices.Equal(d.reports, want) {
		t.Fatalf("reports: got %+v, want %+v", d.reports, want)
	}
	if !slices.Equal(d.blocked, []int64{8}) {
		t.Errorf("confirmations: got %v, want [8]", d.blocked)
	}
	if d.forgot != 1 {
		t.Errorf("ForgetTabs called %d times at the end of the stream, want 1", d.forgot)
	}
	for _, said := range []string{"not a JSON message", `unknown message type "surprise"`, "older than this host", "query or a fragment", "without a tab id"} {
		if !strings.Contains(log.String(), said) {
			t.Errorf("the log: got\n%s\nwant it to name the skipped message (%q)", log.String(), said)
		}
	}
}

// The shared vectors (testdata/site-vectors.json): what the extension
// sends of each address reaches the daemon unchanged, for the daemon to
// make the site of; the host parses no address itself.
func TestTheHostPassesEveryVectorOnUnchanged(t *testing.T) {
	for _, v := range sitevectors.Load(t) {
		t.Run(v.Name, func(t *testing.T) {
			d := &fakeDaemon{}
			h := &host{browser: "chromium", d: d, log: io.Discard, out: io.Discard}
			msg, err := json.Marshal(map[string]any{"type": "tab", "tab_id": 42, "scheme": v.Scheme, "host": v.Host, "path": v.Path, "title": "t"})
			if err != nil {
				t.Fatal(err)
			}
			if err := h.run(bytes.NewReader(framed(string(msg)))); err != nil {
				t.Fatal(err)
			}
			want := report{TabID: 42, Scheme: v.Scheme, Host: v.Host, Path: v.Path, Title: "t"}
			if len(d.reports) != 1 || d.reports[0] != want {
				t.Fatalf("passed on %+v, want [%+v]", d.reports, want)
			}
		})
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
// on a query, a fragment, or a private tab's address unasked.
func FuzzHost(f *testing.F) {
	f.Add(framed(`{"type":"tab","tab_id":1,"scheme":"https","host":"a.example","path":"/p?q=1#f","title":"t"}`))
	f.Add(framed(`{"type":"tab","tab_id":2,"scheme":"https","host":"a.example","path":"/","title":"t","private":true}`))
	f.Add(framed(`{"type":"tab","scheme":"::","title":1}`, `{"type":"none"}`))
	f.Add(framed(`{"type":"blocked","tab_id":-5}`, `{"type":"blocked","tab_id":3}`))
	f.Add([]byte{0xff, 0xff, 0xff, 0x7f})
	f.Add(framed(`[`, `null`, `{"type":"tab","url":"javascript:alert(1)?x"}`))
	f.Fuzz(func(t *testing.T, in []byte) {
		d := &fakeDaemon{}
		h := &host{browser: "firefox", d: d, log: io.Discard, out: io.Discard}
		_ = h.run(bytes.NewReader(in))
		for _, r := range d.reports {
			if strings.ContainsAny(r.Scheme+r.Host+r.Path, "?#") {
				t.Fatalf("a reported address: got %+v, want no query or fragment", r)
			}
			if r.Private && (r.Host != "" || r.Path != "" || r.Title != "") && !strings.Contains(string(in), "private_opt_in") {
				t.Fatalf("passed on a private tab's page unasked: %+v", r)
			}
		}
		if d.forgot != 1 {
			t.Fatal("the end of the stream did not tell the daemon")
		}
	})
}
