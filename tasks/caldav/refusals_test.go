package caldav

import (
	"context"
	"io"
	"net/http"
	"net/http/httptest"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"
)

const standInPassword = "hunter2-Stand-In-Password"

// standIn is a server that answers every request with handler, and a
// source pointed at it with a 0600 password file.
func standIn(t *testing.T, handler http.HandlerFunc) *Source {
	t.Helper()
	srv := httptest.NewServer(handler)
	t.Cleanup(srv.Close)
	s, err := newSource(Options{URL: srv.URL + "/alice/tasks/", Username: "alice", PasswordFile: passwordFile(t, standInPassword)})
	if err != nil {
		t.Fatal(err)
	}
	return s
}

// A server that refuses, fails, sends garbage, far too much or nothing at
// all gives a sentence within the caller's deadline — never a hang, never
// a 10 MB read, never the password.
func TestBadServersAreSentences(t *testing.T) {
	big := strings.Repeat("<D:response>"+strings.Repeat("x", 1000)+"</D:response>", 10*1024)
	cases := []struct {
		name    string
		handler http.HandlerFunc
		want    string
	}{
		{"401", func(w http.ResponseWriter, r *http.Request) {
			w.Header().Set("WWW-Authenticate", `Basic realm="x"`)
			http.Error(w, "no", http.StatusUnauthorized)
		}, "the CalDAV server refused the username or password"},
		{"500", func(w http.ResponseWriter, r *http.Request) {
			http.Error(w, "Traceback (most recent call last): ...", http.StatusInternalServerError)
		}, "failed (HTTP 500); try again later"},
		{"404", func(w http.ResponseWriter, r *http.Request) { http.NotFound(w, r) }, "has no task list at"},
		{"garbage", func(w http.ResponseWriter, r *http.Request) {
			w.Header().Set("Content-Type", "application/xml")
			w.WriteHeader(http.StatusMultiStatus)
			w.Write([]byte("\x00\x01 this is not <xml"))
		}, "antidrift cannot read as a task list"},
		{"html", func(w http.ResponseWriter, r *http.Request) {
			w.Header().Set("Content-Type", "text/html")
			w.Write([]byte("<html><body>Welcome to nginx!</body></html>"))
		}, "antidrift cannot read as a task list"},
		{"malformed VTODO", func(w http.ResponseWriter, r *http.Request) {
			w.Header().Set("Content-Type", "application/xml")
			w.WriteHeader(http.StatusMultiStatus)
			w.Write([]byte(`<?xml version="1.0"?><D:multistatus xmlns:D="DAV:" xmlns:C="urn:ietf:params:xml:ns:caldav"><D:response><D:href>/alice/tasks/a.ics</D:href><D:propstat><D:prop><D:getetag>"1"</D:getetag><C:calendar-data>BEGIN:VCALENDAR
BEGIN:VTODO
SUMMARY;broken
END:VCALENDAR</C:calendar-data></D:prop><D:status>HTTP/1.1 200 OK</D:status></D:propstat></D:response></D:multistatus>`))
		}, "holds a task that is not iCalendar antidrift can read"},
		{"text the iCalendar decoder panics on", func(w http.ResponseWriter, r *http.Request) {
			w.Header().Set("Content-Type", "application/xml")
			w.WriteHeader(http.StatusMultiStatus)
			w.Write([]byte(`<?xml version="1.0"?><D:multistatus xmlns:D="DAV:" xmlns:C="urn:ietf:params:xml:ns:caldav"><D:response><D:href>/alice/tasks/a.ics</D:href><D:propstat><D:prop><D:getetag>"1"</D:getetag><C:calendar-data>0;0=</C:calendar-data></D:prop><D:status>HTTP/1.1 200 OK</D:status></D:propstat></D:response></D:multistatus>`))
		}, "holds a task that is not iCalendar antidrift can read"},
		{"10 MB, no length", func(w http.ResponseWriter, r *http.Request) {
			w.Header().Set("Content-Type", "application/xml")
			w.WriteHeader(http.StatusMultiStatus)
			w.Write([]byte(`<?xml version="1.0"?><D:multistatus xmlns:D="DAV:">`))
			w.(http.Flusher).Flush()
			w.Write([]byte(big))
		}, "larger than 4 MiB; antidrift did not read it"},
		{"10 MB, with length", func(w http.ResponseWriter, r *http.Request) {
			w.Header().Set("Content-Length", "10485760")
			w.WriteHeader(http.StatusMultiStatus)
			w.Write([]byte(big[:1<<20]))
		}, "larger than 4 MiB; antidrift did not read it"},
		{"hanging", func(w http.ResponseWriter, r *http.Request) {
			io.Copy(io.Discard, r.Body) // so the server notices the client hang up
			select {
			case <-r.Context().Done():
			case <-time.After(30 * time.Second):
			}
		}, "did not answer in time"},
		{"hanging mid-body", func(w http.ResponseWriter, r *http.Request) {
			w.WriteHeader(http.StatusMultiStatus)
			w.Write([]byte(`<?xml version="1.0"?><D:multistatus xmlns:D="DAV:">`))
			w.(http.Flusher).Flush()
			select {
			case <-r.Context().Done():
			case <-time.After(30 * time.Second):
			}
		}, "did not answer in time"},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			s := standIn(t, c.handler)
			ctx, cancel := context.WithTimeout(context.Background(), 2*time.Second)
			defer cancel()
			_, err := s.List(ctx)
			if err == nil || !strings.Contains(err.Error(), c.want) {
				t.Fatalf("got %v, want a sentence with %q", err, c.want)
			}
			if strings.Contains(err.Error(), standInPassword) {
				t.Errorf("the error holds the password: %v", err)
			}
			_, err = s.Get(ctx, "a")
			if err == nil || strings.Contains(err.Error(), standInPassword) {
				t.Errorf("Get: got %v, want a sentence without the password", err)
			}
		})
	}
}

// The body bound counts what is read, not what is promised: exactly
// MaxReply passes, one byte more is refused.
func TestBoundedBodyIsExact(t *testing.T) {
	for _, n := range []int{MaxReply, MaxReply + 1} {
		b := &boundedBody{rc: nopCloser{strings.NewReader(strings.Repeat("a", n))}, left: MaxReply}
		buf := make([]byte, 64<<10)
		total, err := 0, error(nil)
		for err == nil {
			var k int
			k, err = b.Read(buf)
			total += k
		}
		if n == MaxReply && (err.Error() != "EOF" || total != n) {
			t.Errorf("%d bytes: got %d read, %v; want all of it, EOF", n, total, err)
		}
		if n > MaxReply && err != errTooLarge {
			t.Errorf("%d bytes: got %v, want errTooLarge", n, err)
		}
	}
}

type nopCloser struct{ *strings.Reader }

func (nopCloser) Close() error { return nil }

// The password travels only as basic auth to the configured server, and
// the redirect rule keeps it off plain http to another machine.
func TestPasswordGoesOnlyAsBasicAuth(t *testing.T) {
	var gotUser, gotPass string
	s := standIn(t, func(w http.ResponseWriter, r *http.Request) {
		gotUser, gotPass, _ = r.BasicAuth()
		http.Error(w, "x", http.StatusInternalServerError)
	})
	s.List(ctx5(t))
	if gotUser != "alice" || gotPass != standInPassword {
		t.Errorf("basic auth: got %q/%q, want alice and the file's password (its trailing newline not part of it)", gotUser, gotPass)
	}
	redirect := standIn(t, func(w http.ResponseWriter, r *http.Request) {
		http.Redirect(w, r, "http://192.0.2.1/steal", http.StatusTemporaryRedirect)
	})
	_, err := redirect.List(ctx5(t))
	if err == nil || !strings.Contains(err.Error(), "plain http to another machine") {
		t.Errorf("a redirect to plain http elsewhere: got %v, want it refused", err)
	}
}

// The URL's rules: https anywhere, http only to loopback, no credentials
// or query in it, a username.
func TestNewRefusesUnsafeURLs(t *testing.T) {
	for _, c := range []struct{ url, user, want string }{
		{"http://dav.example.com/alice/tasks/", "alice", "plain http to another machine"},
		{"http://192.168.1.5:5232/alice/tasks/", "alice", "plain http to another machine"},
		{"https://alice:pw@dav.example.com/tasks/", "alice", "must not carry a user or password"},
		{"https://dav.example.com/tasks/?x=1", "alice", "must not have a query"},
		{"ftp://dav.example.com/tasks/", "alice", "is not an https:// address"},
		{"", "alice", "url is missing"},
		{"ftp://alice:pw@dav.example.com/tasks/", "alice", "is not an https:// address"},
		{"https://alice:pw@dav example.com/tasks/", "alice", "is not an https:// address"},
		{"https://dav.example.com/tasks/?token=s3cret", "alice", "must not have a query"},
		{"https://dav.example.com/tasks/", "", "username is missing"},
	} {
		_, err := New(Options{URL: c.url, Username: c.user})
		if err == nil || !strings.Contains(err.Error(), c.want) {
			t.Errorf("New(%q, %q): got %v, want %q", c.url, c.user, err, c.want)
		}
		if err != nil && (strings.Contains(err.Error(), "pw@") || strings.Contains(err.Error(), "s3cret")) {
			t.Errorf("New(%q): the error holds the password: %v", c.url, err)
		}
	}
	for _, ok := range []string{"https://dav.example.com/remote.php/dav/calendars/alice/tasks/", "http://127.0.0.1:5232/alice/tasks", "http://localhost:5232/alice/tasks/", "http://[::1]:5232/a/"} {
		if _, err := New(Options{URL: ok, Username: "alice"}); err != nil {
			t.Errorf("New(%q): %v", ok, err)
		}
	}
}

// password_file is refused, naming the file and what to do, when others
// can read it, when it is a symlink, missing or empty; never showing its
// content.
func TestPasswordFileRules(t *testing.T) {
	dir := t.TempDir()
	good := filepath.Join(dir, "good")
	os.WriteFile(good, []byte("pw-in-file\r\n"), 0o600)
	if p, err := readPasswordFile(good); err != nil || p != "pw-in-file" {
		t.Errorf("a 0600 file: got %q, %v; want the password without its line end", p, err)
	}
	open := filepath.Join(dir, "open")
	os.WriteFile(open, []byte("pw-readable"), 0o600)
	os.Chmod(open, 0o644)
	link := filepath.Join(dir, "link")
	os.Symlink(good, link)
	empty := filepath.Join(dir, "empty")
	os.WriteFile(empty, nil, 0o600)
	group := filepath.Join(dir, "group")
	os.WriteFile(group, []byte("pw-group"), 0o600)
	os.Chmod(group, 0o640)
	for path, want := range map[string]string{
		open:                         "password_file " + open + " can be read by others (mode 0644): run chmod 600 " + open,
		group:                        "run chmod 600 " + group,
		link:                         "password_file " + link + " is a symlink",
		empty:                        "is empty",
		filepath.Join(dir, "absent"): "does not exist",
		dir:                          "not a regular file",
	} {
		p, err := readPasswordFile(path)
		if err == nil || !strings.Contains(err.Error(), want) {
			t.Errorf("%s: got %q, %v; want %q", path, p, err, want)
			continue
		}
		if strings.Contains(err.Error(), "pw-") {
			t.Errorf("%s: the error holds the password: %v", path, err)
		}
	}
}

// A server that refuses the prop-filter is asked again for every VTODO
// (go-webdav's query), and the open ones are picked here.
func TestServerWithoutPropFiltersStillLists(t *testing.T) {
	var filtered, plain int
	s := standIn(t, func(w http.ResponseWriter, r *http.Request) {
		body, _ := io.ReadAll(r.Body)
		if strings.Contains(string(body), "prop-filter") {
			filtered++
			http.Error(w, "supported-filter", http.StatusForbidden)
			return
		}
		plain++
		w.Header().Set("Content-Type", "application/xml")
		w.WriteHeader(http.StatusMultiStatus)
		obj := func(href, uid, extra string) string {
			return `<D:response><D:href>` + href + `</D:href><D:propstat><D:prop><D:getetag>"e-` + uid + `"</D:getetag><C:calendar-data>BEGIN:VCALENDAR&#13;
VERSION:2.0&#13;
PRODID:x&#13;
BEGIN:VTODO&#13;
UID:` + uid + `&#13;
DTSTAMP:20261201T100000Z&#13;
SUMMARY:task ` + uid + `&#13;
` + extra + `END:VTODO&#13;
END:VCALENDAR&#13;
</C:calendar-data></D:prop><D:status>HTTP/1.1 200 OK</D:status></D:propstat></D:response>`
		}
		w.Write([]byte(`<?xml version="1.0"?><D:multistatus xmlns:D="DAV:" xmlns:C="urn:ietf:params:xml:ns:caldav">` +
			obj("/alice/tasks/a.ics", "a", "") + obj("/alice/tasks/b.ics", "b", "STATUS:COMPLETED&#13;\n") + `</D:multistatus>`))
	})
	items, err := s.List(ctx5(t))
	if err != nil {
		t.Fatal(err)
	}
	if len(items) != 1 || items[0].ID != "a" || items[0].Version != "e-a" {
		t.Fatalf("got %+v, want the open task a with version e-a", items)
	}
	if filtered != 1 || plain != 1 {
		t.Errorf("got %d filtered and %d plain queries, want one of each", filtered, plain)
	}
}

// TLS is verified: a server whose certificate the system does not trust
// gets no request at all (so no password), and the person is told why.
func TestUntrustedCertificateIsRefused(t *testing.T) {
	asked := false
	srv := httptest.NewTLSServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) { asked = true }))
	t.Cleanup(srv.Close)
	s, err := newSource(Options{URL: srv.URL + "/alice/tasks/", Username: "alice", PasswordFile: passwordFile(t, standInPassword)})
	if err != nil {
		t.Fatal(err)
	}
	_, err = s.List(ctx5(t))
	if err == nil || !strings.Contains(err.Error(), "certificate that is not trusted") {
		t.Fatalf("got %v, want a sentence saying the certificate is not trusted", err)
	}
	if asked {
		t.Error("the server got a request through an untrusted certificate")
	}
	// The same server with its certificate trusted (a Client the caller
	// gives, as for a private CA) is asked.
	s, _ = newSource(Options{URL: srv.URL + "/alice/tasks/", Username: "alice", PasswordFile: passwordFile(t, standInPassword), Client: srv.Client()})
	s.List(ctx5(t))
	if !asked {
		t.Error("the server with a trusted certificate was not asked")
	}
}
