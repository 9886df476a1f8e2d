package caldav

import (
	"context"
	"crypto/tls"
	"crypto/x509"
	"errors"
	"fmt"
	"io"
	"net"
	"net/http"
	"net/url"
	"syscall"
	"time"

	"github.com/antidrift/antidrift/service"
)

// MaxReply bounds what antidrift reads of one reply: a task list of a few
// thousand tasks fits many times over; a server sending more is refused
// with a sentence, never read whole.
const MaxReply = 4 << 20

// DefaultTimeout is the deadline of a call whose context has none (the
// core always gives one; this is the floor for any other caller).
const DefaultTimeout = 15 * time.Second

// statusError is a reply with a status that is not 2xx, caught before
// go-webdav reads its body (which it would read whole).
type statusError struct{ code int }

func (e *statusError) Error() string { return fmt.Sprintf("HTTP %d", e.code) }

// errTooLarge is a reply longer than MaxReply.
var errTooLarge = errors.New("reply too large")

// doer is the HTTP client go-webdav and the write-back use: it adds the
// credentials, refuses a non-2xx status with *statusError (the body
// discarded unread), and bounds every body to MaxReply.
type doer struct {
	client *http.Client
	auth   func(ctx context.Context) (user, password string, err error)
}

func (d *doer) Do(req *http.Request) (*http.Response, error) {
	user, password, err := d.auth(req.Context())
	if err != nil {
		return nil, err
	}
	req.SetBasicAuth(user, password)
	resp, err := d.client.Do(req)
	if err != nil {
		return nil, err
	}
	if resp.StatusCode/100 != 2 {
		resp.Body.Close()
		return nil, &statusError{resp.StatusCode}
	}
	if resp.ContentLength > MaxReply {
		resp.Body.Close()
		return nil, errTooLarge
	}
	resp.Body = &boundedBody{rc: resp.Body, left: MaxReply}
	return resp, nil
}

// boundedBody fails with errTooLarge past its limit instead of quietly
// truncating (a cut-off multistatus would parse as garbage, or worse, as a
// shorter list).
type boundedBody struct {
	rc   io.ReadCloser
	left int64
}

func (b *boundedBody) Read(p []byte) (int, error) {
	if b.left <= 0 {
		// One more byte tells a body of exactly MaxReply from a longer one.
		var one [1]byte
		n, err := b.rc.Read(one[:])
		if n > 0 {
			return 0, errTooLarge
		}
		return 0, err
	}
	if int64(len(p)) > b.left {
		p = p[:b.left]
	}
	n, err := b.rc.Read(p)
	b.left -= int64(n)
	return n, err
}

func (b *boundedBody) Close() error { return b.rc.Close() }

// newHTTPClient is the client requests go through: the one given (tests,
// a proxy) or Go's default transport, which verifies TLS against the
// system's roots. Redirects are followed only to https or to loopback, so
// a redirect cannot send the password in clear across a network.
func newHTTPClient(given *http.Client) *http.Client {
	c := &http.Client{}
	if given != nil {
		*c = *given
	}
	c.CheckRedirect = func(req *http.Request, via []*http.Request) error {
		if len(via) >= 5 {
			return say("the CalDAV server redirected antidrift more than 5 times: check url in [tasks.caldav]")
		}
		if err := checkScheme(req.URL); err != nil {
			return say("the CalDAV server redirected antidrift to %s, plain http to another machine, so the password was not sent: use the https:// address in [tasks.caldav] url", req.URL.Redacted())
		}
		return nil
	}
	return c
}

// sentence is what a person reads for an error from the server or the
// network: what happened and, where there is one, what to do. It never
// holds the password (it is not in any error this package makes), nor a
// task's title.
func (s *Source) sentence(ctx context.Context, err error) error {
	var w *worded
	var changed *service.TaskChanged
	var se *statusError
	var tlsErr *tls.CertificateVerificationError
	var unknownAuthority x509.UnknownAuthorityError
	var hostname x509.HostnameError
	var opErr *net.OpError
	var dnsErr *net.DNSError
	var urlErr *url.Error
	host := s.url.Host
	switch {
	case err == nil:
		return nil
	case errors.As(err, &changed):
		return changed
	case errors.As(err, &w):
		return w
	case errors.Is(err, errUnreadableTask):
		return fmt.Errorf("the CalDAV list at %s holds a task that is not iCalendar antidrift can read, so the list could not be read: look at the list in your task app", host)
	case errors.Is(err, errTooLarge):
		return fmt.Errorf("the CalDAV server at %s sent a reply larger than %d MiB; antidrift did not read it", host, MaxReply>>20)
	case errors.As(err, &se):
		switch {
		case se.code == http.StatusUnauthorized:
			return errors.New("the CalDAV server refused the username or password")
		case se.code == http.StatusForbidden:
			return fmt.Errorf("the CalDAV server does not let %s use %s (HTTP 403)", s.username, s.url.Redacted())
		case se.code == http.StatusNotFound:
			return fmt.Errorf("the CalDAV server has no task list at %s (HTTP 404): check url in [tasks.caldav]", s.url.Redacted())
		case se.code >= 500:
			return fmt.Errorf("the CalDAV server at %s failed (HTTP %d); try again later", host, se.code)
		default:
			return fmt.Errorf("the CalDAV server at %s refused the request (HTTP %d)", host, se.code)
		}
	case errors.Is(err, context.DeadlineExceeded) || errors.Is(err, context.Canceled) || ctx.Err() != nil:
		return fmt.Errorf("the CalDAV server at %s did not answer in time", host)
	case errors.As(err, &tlsErr) || errors.As(err, &unknownAuthority) || errors.As(err, &hostname):
		return fmt.Errorf("the CalDAV server at %s showed a certificate that is not trusted, so antidrift did not send the password", host)
	case errors.Is(err, syscall.ECONNREFUSED):
		return fmt.Errorf("the CalDAV server at %s is not running (connection refused)", host)
	case errors.As(err, &dnsErr):
		return fmt.Errorf("cannot find the CalDAV server %s (%s)", s.url.Hostname(), dnsErr.Err)
	case errors.As(err, &opErr):
		return fmt.Errorf("cannot reach the CalDAV server at %s (%v)", host, opErr.Err)
	case errors.As(err, &urlErr):
		return fmt.Errorf("cannot talk to the CalDAV server at %s (%v)", host, urlErr.Err)
	default:
		return fmt.Errorf("the CalDAV server at %s sent a reply antidrift cannot read as a task list", host)
	}
}

// worded is an error this package has already put in a person's words
// (a credential problem, a task that cannot be written back): it is said
// as it is.
type worded struct{ msg string }

func (w *worded) Error() string { return w.msg }

func say(format string, args ...any) error { return &worded{fmt.Sprintf(format, args...)} }
