package testenv

import (
	"fmt"
	"io"
	"net"
	"net/http"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"
)

func init() { aptPackages["radicale"] = "radicale" }

// Radicale is a real CalDAV server (Debian's radicale) on 127.0.0.1 with
// htpasswd basic auth and its collections in a temp dir. Its methods are
// the tests' second client: plain HTTP, nothing of antidrift's.
type Radicale struct {
	URL      string // http://127.0.0.1:PORT
	User     string
	Password string
	Dir      string
	config   string
	proc     *proc
}

const radicaleConfig = `[server]
hosts = 127.0.0.1:%s
[auth]
type = htpasswd
htpasswd_filename = %s
htpasswd_encryption = plain
delay = 0
[storage]
filesystem_folder = %s
[rights]
type = owner_only
[web]
type = none
[logging]
level = warning
`

// StartRadicale starts Radicale with one user and waits until it answers.
// It is stopped at the test's cleanup.
func StartRadicale(t testing.TB, user, password string) *Radicale {
	t.Helper()
	Need(t, "radicale")
	dir := tempDir(t)
	users := filepath.Join(dir, "users")
	if err := os.WriteFile(users, []byte(user+":"+password+"\n"), 0o600); err != nil {
		t.Fatal(err)
	}
	port := freePort(t)
	r := &Radicale{URL: "http://127.0.0.1:" + port, User: user, Password: password, Dir: dir, config: filepath.Join(dir, "config")}
	conf := fmt.Sprintf(radicaleConfig, port, users, filepath.Join(dir, "collections"))
	if err := os.WriteFile(r.config, []byte(conf), 0o600); err != nil {
		t.Fatal(err)
	}
	r.start(t)
	return r
}

func (r *Radicale) start(t testing.TB) {
	t.Helper()
	env := withEnv(os.Environ(), "HOME="+r.Dir)
	r.proc = start(t, r.Dir, env, nil, "radicale", "--config", r.config)
	host := strings.TrimPrefix(r.URL, "http://")
	WaitUntil(t, readyTimeout, "Radicale to listen on "+host, func() bool {
		if r.proc.exited() {
			t.Fatalf("radicale exited\n%s", r.proc.output())
		}
		c, err := net.DialTimeout("tcp", host, time.Second)
		if err == nil {
			c.Close()
		}
		return err == nil
	})
}

// Stop stops the server (its port then refuses connections).
func (r *Radicale) Stop() { r.proc.stop() }

// Output is what Radicale logged, for failure messages.
func (r *Radicale) Output() string { return r.proc.output() }

// Do sends one request as the user and returns the status, the ETag
// header (unquoted as sent) and the body.
func (r *Radicale) Do(t testing.TB, method, path, body string, header ...string) (status int, etag, reply string) {
	t.Helper()
	req, err := http.NewRequest(method, r.URL+path, strings.NewReader(body))
	if err != nil {
		t.Fatal(err)
	}
	req.SetBasicAuth(r.User, r.Password)
	for i := 0; i+1 < len(header); i += 2 {
		req.Header.Set(header[i], header[i+1])
	}
	resp, err := (&http.Client{Timeout: runTimeout}).Do(req)
	if err != nil {
		t.Fatalf("%s %s: %v\n%s", method, path, err, r.proc.output())
	}
	defer resp.Body.Close()
	b, err := io.ReadAll(resp.Body)
	if err != nil {
		t.Fatal(err)
	}
	return resp.StatusCode, resp.Header.Get("ETag"), string(b)
}

// MakeTaskList creates a calendar collection for VTODOs at path
// (e.g. "/alice/tasks/") and returns its full URL.
func (r *Radicale) MakeTaskList(t testing.TB, path string) string {
	t.Helper()
	const body = `<?xml version="1.0" encoding="utf-8"?>
<C:mkcalendar xmlns:D="DAV:" xmlns:C="urn:ietf:params:xml:ns:caldav"><D:set><D:prop>
<D:displayname>Tasks</D:displayname>
<C:supported-calendar-component-set><C:comp name="VTODO"/></C:supported-calendar-component-set>
</D:prop></D:set></C:mkcalendar>`
	if code, _, reply := r.Do(t, "MKCALENDAR", path, body, "Content-Type", "application/xml"); code != http.StatusCreated {
		t.Fatalf("MKCALENDAR %s: got HTTP %d, want 201\n%s", path, code, reply)
	}
	return r.URL + path
}

// Put stores a calendar object (iCalendar text; LF line ends become CRLF)
// and returns its ETag as the server sent it (quoted).
func (r *Radicale) Put(t testing.TB, path, ics string) string {
	t.Helper()
	ics = strings.ReplaceAll(strings.ReplaceAll(ics, "\r\n", "\n"), "\n", "\r\n")
	code, etag, reply := r.Do(t, http.MethodPut, path, ics, "Content-Type", "text/calendar; charset=utf-8")
	if code != http.StatusCreated && code != http.StatusNoContent && code != http.StatusOK {
		t.Fatalf("PUT %s: got HTTP %d, want 201 or 204\n%s", path, code, reply)
	}
	return etag
}

// Get reads a calendar object: its text and ETag (quoted); code 404 when
// it is gone.
func (r *Radicale) Get(t testing.TB, path string) (code int, ics, etag string) {
	t.Helper()
	code, etag, ics = r.Do(t, http.MethodGet, path, "")
	return code, ics, etag
}
