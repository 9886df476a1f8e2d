// Package caldav is a task source behind the core's task port: the VTODOs
// of one CalDAV collection (Radicale, Nextcloud, Baïkal, …: the lists
// GNOME's Endeavour through Evolution Data Server, Planify, Errands,
// Thunderbird and Tasks.org through DAVx⁵ show).
//
// What it reads: the collection's VTODOs without a COMPLETED date (a
// calendar-query REPORT with that prop-filter, report.go; a server that
// refuses the filter is asked for all), of which those with STATUS
// COMPLETED or CANCELLED are left out here, since a text-match filter on
// STATUS would also drop the tasks that have no STATUS. What it writes: on Complete only,
// STATUS:COMPLETED, COMPLETED, PERCENT-COMPLETE:100 (and LAST-MODIFIED,
// DTSTAMP), with If-Match on the ETag the session read, so a task another
// client changed or deleted meanwhile is never overwritten nor recreated:
// that is a *service.TaskChanged saying what changed. Started and Stopped
// write nothing.
//
// Credentials: the password from a 0600 password_file, else from the
// Secret Service; never logged, never in an error. TLS is verified (Go's
// default transport); plain http:// only to loopback. Every request runs
// under a deadline and every reply is bounded (MaxReply).
package caldav

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"net/http"
	"net/url"
	"strconv"
	"strings"
	"sync"
	"time"

	"github.com/emersion/go-webdav/caldav"

	"github.com/antidrift/antidrift/internal/endpoint"
	"github.com/antidrift/antidrift/service"
)

// SourceName is the source's name in task refs ("caldav:<uid>").
const SourceName = "caldav"

// Options configure the source: [tasks.caldav] in config.toml.
type Options struct {
	URL          string       // the task collection, e.g. https://dav.example.com/user/tasks/
	Username     string       // the account's user name
	PasswordFile string       // a 0600 file holding the password; "" asks the Secret Service
	Client       *http.Client // nil: Go's default transport (TLS verified)
}

// Source is the CalDAV task source.
type Source struct {
	url          *url.URL
	rawURL       string // as configured: the Secret Service attribute
	username     string
	passwordFile string
	http         *http.Client
	cal          *caldav.Client
	now          func() time.Time

	mu     sync.Mutex
	cached string // a password the Secret Service gave; "" none
}

// New checks the options; it does no I/O (the password is read when the
// server is first asked, so a keyring locked at login is no error yet).
func New(o Options) (service.TaskSource, error) {
	return newSource(o)
}

func newSource(o Options) (*Source, error) {
	raw := strings.TrimSpace(o.URL)
	if raw == "" {
		return nil, errors.New("url is missing: give the address of the task list (its collection)")
	}
	// The url is never quoted whole in an error: it may carry a password
	// or a token (the refusals below), and its error reaches status.
	u, err := url.Parse(raw)
	if err != nil || u.Host == "" || (u.Scheme != "https" && u.Scheme != "http") {
		return nil, errors.New("url is not an https:// address of a task list")
	}
	if u.User != nil {
		return nil, errors.New("url must not carry a user or password: give username, and the password in password_file or the Secret Service")
	}
	if u.RawQuery != "" || u.Fragment != "" {
		return nil, fmt.Errorf("url %s must not have a query or fragment", (&url.URL{Scheme: u.Scheme, Host: u.Host, Path: u.Path}).String())
	}
	if err := checkScheme(u); err != nil {
		return nil, err
	}
	if strings.TrimSpace(o.Username) == "" {
		return nil, errors.New("username is missing")
	}
	if !strings.HasSuffix(u.Path, "/") {
		u.Path += "/" // a collection
	}
	s := &Source{
		url:          u,
		rawURL:       raw,
		username:     o.Username,
		passwordFile: o.PasswordFile,
		http:         newHTTPClient(o.Client),
		now:          time.Now,
	}
	root := &url.URL{Scheme: u.Scheme, Host: u.Host, Path: "/"}
	s.cal, err = caldav.NewClient(&doer{client: s.http, auth: s.credentials}, root.String())
	if err != nil {
		return nil, fmt.Errorf("url %s: %v", root.String(), err)
	}
	return s, nil
}

// checkScheme allows https anywhere and http only to this machine: the
// password goes with every request.
func checkScheme(u *url.URL) error {
	switch {
	case u.Scheme == "https":
		return nil
	case u.Scheme == "http" && endpoint.IsLoopback(u.Hostname()):
		return nil
	default:
		return fmt.Errorf("url %s is plain http to another machine, which would send the password in clear: use https://", u.Redacted())
	}
}

// credentials is the username and password for a request: password_file
// when set (read each time, so a changed file is picked up), else the
// Secret Service (asked once, then kept until the server refuses it).
func (s *Source) credentials(ctx context.Context) (string, string, error) {
	if s.passwordFile != "" {
		p, err := readPasswordFile(s.passwordFile)
		return s.username, p, err
	}
	s.mu.Lock()
	p := s.cached
	s.mu.Unlock()
	if p != "" {
		return s.username, p, nil
	}
	p, err := secretServicePassword(ctx, s.rawURL, s.username)
	if err != nil {
		return "", "", err
	}
	s.mu.Lock()
	s.cached = p
	s.mu.Unlock()
	return s.username, p, nil
}

// refused forgets a cached password the server refused, so the next call
// asks the Secret Service again (the person may have stored a new one).
func (s *Source) refused(err error) {
	var se *statusError
	if errors.As(err, &se) && se.code == http.StatusUnauthorized {
		s.mu.Lock()
		s.cached = ""
		s.mu.Unlock()
	}
}

// Name is the source's name: "caldav".
func (s *Source) Name() string { return SourceName }

// withDeadline gives ctx a deadline when it has none.
func withDeadline(ctx context.Context) (context.Context, context.CancelFunc) {
	if _, ok := ctx.Deadline(); ok {
		return context.WithCancel(ctx)
	}
	return context.WithTimeout(ctx, DefaultTimeout)
}

// fail turns an error into the sentence the person reads.
func (s *Source) fail(ctx context.Context, err error) error {
	s.refused(err)
	return s.sentence(ctx, err)
}

// List is the open tasks of the collection.
func (s *Source) List(ctx context.Context) ([]service.TaskItem, error) {
	ctx, cancel := withDeadline(ctx)
	defer cancel()
	all, err := s.report(ctx, filter{open: true})
	if err != nil {
		return nil, s.fail(ctx, err)
	}
	var open []service.TaskItem
	for _, t := range all {
		if !t.item.Done {
			open = append(open, t.item)
		}
	}
	return open, nil
}

// find is the task with UID id, or nil.
func (s *Source) find(ctx context.Context, id string) (*todo, error) {
	all, err := s.report(ctx, filter{uid: id})
	if err != nil {
		return nil, err
	}
	for i := range all {
		if all[i].item.ID == id {
			return &all[i], nil
		}
	}
	return nil, nil
}

// Get is the task with UID id, open or done; *service.TaskNotFound when
// the collection has none.
func (s *Source) Get(ctx context.Context, id string) (service.TaskItem, error) {
	ctx, cancel := withDeadline(ctx)
	defer cancel()
	t, err := s.find(ctx, id)
	if err != nil {
		return service.TaskItem{}, s.fail(ctx, err)
	}
	if t == nil {
		return service.TaskItem{}, &service.TaskNotFound{Source: SourceName, ID: id}
	}
	return t.item, nil
}

// Started writes nothing: task apps show IN-PROCESS as "in progress" and
// some sort or filter by it, so a session's start is not worth a write
// that could race another client; the task's state is antidrift's to keep.
func (s *Source) Started(ctx context.Context, t service.TaskItem) error { return nil }

// Stopped writes nothing (Started wrote nothing to undo).
func (s *Source) Stopped(ctx context.Context, t service.TaskItem) error { return nil }

// doNext is what the person can do when the write-back was refused.
const doNext = "look at it in your task app and tick it off there if it is done"

// The deletion said in TaskChanged's words, and what to do then.
const (
	wasDeleted  = "it was deleted from the CalDAV list"
	doIfDeleted = "if it still matters, add it again in your task app"
)

// Complete marks the task done if it is still as t.Version (the ETag the
// session read) says. Otherwise, or when it is gone, *service.TaskChanged
// says what changed; nothing is written. A task already completed by
// another client is no error when nothing else changed.
func (s *Source) Complete(ctx context.Context, t service.TaskItem) error {
	ctx, cancel := withDeadline(ctx)
	defer cancel()
	cur, err := s.find(ctx, t.ID)
	if err != nil {
		return s.fail(ctx, err)
	}
	if cur == nil {
		return s.changed(t, wasDeleted, doIfDeleted)
	}
	version := t.Version
	if version == "" {
		version = cur.etag // no session read it: the copy read just now
	}
	if cur.etag != version {
		return s.changed(t, whatChanged(t, cur.item), doNext)
	}
	if cur.item.Done {
		return nil // done already, and nothing else changed
	}
	if cur.comp.Props.Get("RRULE") != nil {
		return say("the CalDAV task repeats (RRULE), and antidrift ticks off only single tasks, so it was left as it is: tick this occurrence off in your task app")
	}
	markCompleted(cur.comp, s.now())
	body, err := encodeCalendar(cur.cal)
	if err != nil {
		return err
	}
	if err := s.put(ctx, cur.path, body, version); err != nil {
		var se *statusError
		if errors.As(err, &se) && se.code == http.StatusPreconditionFailed {
			return s.changed(t, s.whatChangedNow(ctx, t), doNext)
		}
		if errors.As(err, &se) && se.code == http.StatusNotFound {
			return s.changed(t, wasDeleted, doIfDeleted)
		}
		return s.fail(ctx, err)
	}
	return nil
}

// put writes a calendar object with If-Match, so it never replaces a copy
// another client wrote nor recreates a deleted one (RFC 7232: If-Match on
// a missing resource is 412).
func (s *Source) put(ctx context.Context, path string, body []byte, etag string) error {
	u := &url.URL{Scheme: s.url.Scheme, Host: s.url.Host, Path: path}
	req, err := http.NewRequestWithContext(ctx, http.MethodPut, u.String(), bytes.NewReader(body))
	if err != nil {
		return err
	}
	req.Header.Set("Content-Type", "text/calendar; charset=utf-8")
	req.Header.Set("If-Match", strconv.Quote(etag))
	resp, err := (&doer{client: s.http, auth: s.credentials}).Do(req)
	if err != nil {
		return err
	}
	return resp.Body.Close()
}

func (s *Source) changed(t service.TaskItem, what, do string) error {
	return &service.TaskChanged{Source: SourceName, ID: t.ID, What: what, Do: do}
}

// whatChangedNow reads the task again after a 412 to say what changed.
func (s *Source) whatChangedNow(ctx context.Context, t service.TaskItem) string {
	cur, err := s.find(ctx, t.ID)
	switch {
	case err != nil:
		return "" // TaskChanged's own words say enough
	case cur == nil:
		return wasDeleted
	default:
		return whatChanged(t, cur.item)
	}
}

// whatChanged names what differs between the task as the session read it
// and as the server has it now (from what the session kept of it), in the words TaskChanged.Error puts after
// its own ("… so it was left as it is: it was renamed"). The title is not
// repeated (it is private, and the person knows which task it is).
func whatChanged(was, now service.TaskItem) string {
	var what []string
	if now.Done && !was.Done {
		what = append(what, "it was marked done or cancelled")
	}
	if now.Title != was.Title {
		what = append(what, "it was renamed")
	}
	// Due and priority only when the session kept them (a core that
	// records only the title and version passes them zero).
	if !was.Due.IsZero() && !now.Due.Equal(was.Due) {
		what = append(what, "its due date changed")
	}
	if was.Priority != 0 && now.Priority != was.Priority {
		what = append(what, "its priority changed")
	}
	if len(what) == 0 {
		return "it was edited"
	}
	return strings.Join(what, ", ")
}
