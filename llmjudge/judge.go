package llmjudge

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"io"
	"log/slog"
	"net"
	"net/http"
	"net/url"
	"sync"
	"syscall"
	"time"

	"github.com/antidrift/antidrift/internal/endpoint"
	"github.com/antidrift/antidrift/service"
)

// Backoff after a failure: first retry after minBackoff, doubling while
// the server keeps failing. Past maxBackoff the judge stops retrying on its
// own (an idle daemon must not poll a server that is gone for the day);
// the next window that needs judging asks again.
const (
	minBackoff = 2 * time.Second
	maxBackoff = 5 * time.Minute
)

// DefaultTimeout bounds one request when the config does not say.
const DefaultTimeout = 3 * time.Second

// Config configures a Judge.
type Config struct {
	Endpoint    string        // base URL, e.g. http://127.0.0.1:8080/v1
	Model       string        // passed through; "" for servers that serve one model
	Timeout     time.Duration // per request; 0 means DefaultTimeout
	AllowRemote bool          // permit an endpoint that is not loopback
	Logger      *slog.Logger
}

// Judge is the model judge. Close it when done.
type Judge struct {
	url     string
	model   string
	timeout time.Duration
	client  *http.Client
	log     *slog.Logger
	ctx     context.Context // cancelled by Close: ends a request in flight
	cancel  context.CancelFunc
	worker  sync.WaitGroup
	backoff time.Duration // the first backoff; tests shorten it

	mu       sync.Mutex
	busy     bool   // the worker is running
	inflight *call  // being asked now
	waiting  *call  // asked next; a newer question replaces it
	failures int    // consecutive failures; 0 when the server answers
	down     string // why the server failed, for the reason; "" when up
	retryAt  time.Time
	retry    *time.Timer // asks the newest question again once the backoff is over
	retryQ   *call       // that question
	closed   bool
}

// call is one question and everyone waiting for its verdict.
type call struct {
	q       service.Question
	deliver []func(service.Verdict)
}

// New checks cfg and returns a Judge. It makes no request: a server that is
// not up yet is fine until a window needs judging.
func New(cfg Config) (*Judge, error) {
	url, client, err := newClient(cfg.Endpoint, cfg.AllowRemote)
	if err != nil {
		return nil, err
	}
	if cfg.Timeout <= 0 {
		cfg.Timeout = DefaultTimeout
	}
	if cfg.Logger == nil {
		cfg.Logger = slog.Default()
	}
	ctx, cancel := context.WithCancel(context.Background())
	return &Judge{
		url:     url,
		model:   cfg.Model,
		timeout: cfg.Timeout,
		client:  client,
		log:     cfg.Logger,
		ctx:     ctx,
		cancel:  cancel,
		backoff: minBackoff,
	}, nil
}

// newClient checks the endpoint against the privacy rule (loopback unless
// allowRemote) and returns its chat completions URL and the client the
// judge and the coach ask it with.
func newClient(base string, allowRemote bool) (string, *http.Client, error) {
	u, err := endpoint.Check(base, allowRemote)
	if err != nil {
		return "", nil, err
	}
	transport := http.DefaultTransport.(*http.Transport).Clone()
	if !allowRemote {
		transport.Proxy = nil // a proxy would carry titles off this machine
	}
	// No idle connections: a kept-alive one is a goroutine and a timer, and
	// the server closing it later wakes the daemon for nothing. A verdict
	// is asked once per window; a loopback connect per verdict costs less
	// than a millisecond next to the model's time.
	transport.DisableKeepAlives = true
	return u.JoinPath("chat", "completions").String(), &http.Client{
		Transport: transport,
		// A redirect could lead anywhere; an OpenAI-compatible server
		// has no reason to send one.
		CheckRedirect: func(*http.Request, []*http.Request) error { return errors.New("the judge endpoint redirected") },
	}, nil
}

// Judge implements service.Judge. It answers at once only while the server
// is in backoff (unknown, with why); otherwise the verdict comes later.
func (j *Judge) Judge(q service.Question, deliver func(service.Verdict)) (service.Verdict, bool) {
	j.mu.Lock()
	defer j.mu.Unlock()
	switch {
	case j.closed:
		return service.Verdict{Task: service.TaskUnknown, Reason: "the judge has stopped"}, true
	case j.inflight != nil && j.inflight.q == q:
		j.inflight.deliver = append(j.inflight.deliver, deliver)
		return service.Verdict{}, false
	case j.waiting != nil && j.waiting.q == q:
		j.waiting.deliver = append(j.waiting.deliver, deliver)
		return service.Verdict{}, false
	case j.down != "" && time.Now().Before(j.retryAt):
		// Not per focus event: the newest question is asked once the
		// backoff is over, and its verdict delivered then.
		j.retryQ = &call{q: q, deliver: []func(service.Verdict){deliver}}
		return j.unreachable(), true
	}
	j.waiting = &call{q: q, deliver: []func(service.Verdict){deliver}}
	j.startLocked()
	return service.Verdict{}, false
}

// unreachable is the verdict while the server is failing.
func (j *Judge) unreachable() service.Verdict {
	return service.Verdict{Task: service.TaskUnknown, Reason: j.down}
}

func (j *Judge) startLocked() {
	if j.busy || j.waiting == nil {
		return
	}
	j.busy = true
	j.worker.Add(1)
	go j.work()
}

// work asks the waiting questions, one at a time, until none is left.
func (j *Judge) work() {
	defer j.worker.Done()
	j.mu.Lock()
	for j.waiting != nil && !j.closed {
		c := j.waiting
		j.inflight, j.waiting = c, nil
		j.mu.Unlock()

		v, err := j.ask(c.q)

		j.mu.Lock()
		j.inflight = nil
		if err != nil {
			v = j.failedLocked(c, err)
		} else {
			j.recoveredLocked()
		}
		deliver := c.deliver
		j.mu.Unlock()
		for _, d := range deliver {
			d(v)
		}
		j.mu.Lock()
	}
	j.busy = false
	j.mu.Unlock()
}

// failedLocked records a failure: the outage is logged once, and the
// newest question is asked again after the backoff.
func (j *Judge) failedLocked(c *call, err error) service.Verdict {
	j.failures++
	reason := describe(err, j.timeout)
	if j.down == "" {
		j.log.Warn("the LLM judge failed; windows no rule decides read unknown until it answers", "endpoint", j.url, "err", reason)
	}
	j.down = reason
	backoff := j.backoff << min(j.failures-1, 20)
	j.retryAt = time.Now().Add(min(backoff, maxBackoff))
	if j.retryQ == nil {
		j.retryQ = &call{q: c.q, deliver: c.deliver}
	}
	if j.retry != nil {
		j.retry.Stop()
		j.retry = nil
	}
	if !j.closed && backoff <= maxBackoff {
		j.retry = time.AfterFunc(backoff, j.retryNow)
	}
	return j.unreachable()
}

// retryNow asks the newest question again once the backoff is over.
func (j *Judge) retryNow() {
	j.mu.Lock()
	defer j.mu.Unlock()
	if j.closed || j.retryQ == nil {
		return
	}
	if j.waiting == nil {
		j.waiting = j.retryQ
	}
	j.retryQ = nil
	j.startLocked()
}

func (j *Judge) recoveredLocked() {
	if j.down != "" {
		j.log.Info("the LLM judge answers again", "endpoint", j.url, "after_failures", j.failures)
	}
	j.failures, j.down, j.retryQ = 0, "", nil
	if j.retry != nil {
		j.retry.Stop()
		j.retry = nil
	}
}

// ask makes one request, bounded by the timeout.
func (j *Judge) ask(q service.Question) (service.Verdict, error) {
	body, err := newRequest(j.model, q)
	if err != nil {
		return service.Verdict{}, err
	}
	ctx, cancel := context.WithTimeout(j.ctx, j.timeout)
	defer cancel()
	req, err := http.NewRequestWithContext(ctx, http.MethodPost, j.url, bytes.NewReader(body))
	if err != nil {
		return service.Verdict{}, err
	}
	req.Header.Set("Content-Type", "application/json")
	resp, err := j.client.Do(req)
	if err != nil {
		return service.Verdict{}, err
	}
	defer resp.Body.Close()
	v, err := readReply(resp)
	_, _ = io.Copy(io.Discard, io.LimitReader(resp.Body, maxReply)) // keep the connection reusable
	return v, err
}

// describe is a failure in words a person understands, e.g. "judge
// unreachable: connection refused".
func describe(err error, timeout time.Duration) string {
	var ue *url.Error
	var ne net.Error
	var he httpError
	switch {
	case errors.Is(err, syscall.ECONNREFUSED):
		return "judge unreachable: connection refused"
	case errors.Is(err, context.DeadlineExceeded) || (errors.As(err, &ne) && ne.Timeout()):
		return fmt.Sprintf("judge too slow: no answer within %s", timeout)
	case errors.Is(err, errUnreadable):
		return "judge gave no usable answer: " + err.Error()
	case errors.As(err, &he):
		return "judge failed: " + he.Error()
	case errors.As(err, &ue):
		return "judge unreachable: " + rootCause(ue.Err)
	}
	return "judge unreachable: " + rootCause(err)
}

// rootCause is the innermost message of a wrapped network error: "no such
// host", "connection reset by peer", "EOF".
func rootCause(err error) string {
	for {
		next := errors.Unwrap(err)
		if next == nil {
			return err.Error()
		}
		err = next
	}
}

// Close stops the judge: a request in flight is cancelled, questions
// waiting are dropped, and no retry fires. It waits for the worker.
func (j *Judge) Close() {
	j.mu.Lock()
	j.closed = true
	if j.retry != nil {
		j.retry.Stop()
	}
	j.waiting, j.retryQ = nil, nil
	j.mu.Unlock()
	j.cancel()
	j.worker.Wait()
}
