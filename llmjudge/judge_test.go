package llmjudge

import (
	"bytes"
	"encoding/json"
	"fmt"
	"io"
	"log/slog"
	"net"
	"net/http"
	"net/http/httptest"
	"reflect"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/antidrift/antidrift/service"
)

// These are the decision logic's unit tests, against a test double
// server; realserver_test.go runs the same judge against llama-server.

var question = service.Question{
	NextAction:       "write the intro",
	SuccessCondition: "intro is committed",
	Class:            "Firefox",
	Title:            "Cat videos - YouTube — Mozilla Firefox",
}

// reply is a chat completion whose message content is content.
func reply(content, finish string) string {
	b, _ := json.Marshal(map[string]any{"choices": []any{map[string]any{
		"index": 0, "finish_reason": finish, "message": map[string]any{"role": "assistant", "content": content},
	}}})
	return string(b)
}

// verdicts collects what a judge delivers.
type verdicts chan service.Verdict

func (v verdicts) deliver(x service.Verdict) { v <- x }

// deliveryBound only keeps a judge that never delivers from hanging the
// test: every judge here promises a verdict within its own timeout (at
// most realTimeout, a minute), and a busy machine may take all of it.
const deliveryBound = 2 * realTimeout

func (v verdicts) next(t *testing.T) service.Verdict {
	t.Helper()
	select {
	case x := <-v:
		return x
	case <-time.After(deliveryBound):
		t.Fatalf("a verdict delivered: got none within %v, want one", deliveryBound)
		return service.Verdict{}
	}
}

func newJudge(t *testing.T, endpoint string, timeout time.Duration, log *slog.Logger) *Judge {
	t.Helper()
	if log == nil {
		log = slog.New(slog.NewTextHandler(io.Discard, nil))
	}
	j, err := New(Config{Endpoint: endpoint, Model: "tiny", Timeout: timeout, Logger: log})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(j.Close)
	return j
}

// judgeLate asks q and waits for the late verdict.
func judgeLate(t *testing.T, j *Judge, q service.Question) service.Verdict {
	t.Helper()
	got := make(verdicts, 4)
	if v, ok := j.Judge(q, got.deliver); ok {
		return v
	}
	return got.next(t)
}

func TestTheRequestCarriesTheCommitmentClassAndTitleUnderASchema(t *testing.T) {
	var seen struct {
		path string
		body map[string]any
	}
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		seen.path = r.URL.Path
		_ = json.NewDecoder(r.Body).Decode(&seen.body)
		fmt.Fprint(w, reply(`{"on_task": false, "reason": "a video site, not the intro"}`, "stop"))
	}))
	t.Cleanup(srv.Close)
	j := newJudge(t, srv.URL+"/v1/", time.Second, nil)
	v := judgeLate(t, j, question)
	if v != (service.Verdict{Task: service.TaskOff, Reason: "a video site, not the intro"}) {
		t.Fatalf("verdict: got %+v, want off task, \"a video site, not the intro\"", v)
	}
	if seen.path != "/v1/chat/completions" || seen.body["model"] != "tiny" || seen.body["stream"] != false || seen.body["temperature"] != 0.0 {
		t.Fatalf("request: got %s %v, want /v1/chat/completions with model tiny, stream false, temperature 0", seen.path, seen.body)
	}
	format := seen.body["response_format"].(map[string]any)
	schema := format["json_schema"].(map[string]any)["schema"].(map[string]any)
	if format["type"] != "json_schema" || !reflect.DeepEqual(schema["required"], []any{"on_task", "reason"}) || schema["additionalProperties"] != false {
		t.Fatalf("response_format: got %v, want a json_schema requiring on_task and reason, no additional properties", format)
	}
	msgs := seen.body["messages"].([]any)
	var facts map[string]any
	must(t, json.Unmarshal([]byte(msgs[1].(map[string]any)["content"].(string)), &facts))
	want := map[string]any{"next_action": "write the intro", "success_condition": "intro is committed", "window_class": "Firefox", "window_title": "Cat videos - YouTube — Mozilla Firefox"}
	if !reflect.DeepEqual(facts, want) {
		t.Fatalf("the model was told %v, want exactly %v", facts, want)
	}
}

func TestOnlySchemaValidRepliesAreVerdicts(t *testing.T) {
	for _, c := range []struct {
		name, body string
		want       service.Verdict
	}{
		{"on task", reply(`{"on_task":true,"reason":"the project's docs"}`, "stop"), service.Verdict{Task: service.TaskOn, Reason: "the project's docs"}},
		{"empty reason", reply(`{"on_task":false,"reason":""}`, "stop"), service.Verdict{Task: service.TaskOff, Reason: "the judge found it off task"}},
		{"extra field", reply(`{"on_task":false,"reason":"x","confidence":0.9}`, "stop"), unusable},
		{"missing on_task", reply(`{"reason":"x"}`, "stop"), unusable},
		{"a string for a bool", reply(`{"on_task":"false","reason":"x"}`, "stop"), unusable},
		{"trailing text", reply(`{"on_task":true,"reason":"x"} I hope this helps`, "stop"), unusable},
		{"prose", reply(`Sure! The window is on task.`, "stop"), unusable},
		{"cut off", reply(`{"on_task":true,"reason":"x"}`, "length"), unusable},
		{"not a completion", `<html>hello</html>`, unusable},
		{"no choices", `{"choices":[]}`, unusable},
	} {
		t.Run(c.name, func(t *testing.T) {
			srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) { fmt.Fprint(w, c.body) }))
			t.Cleanup(srv.Close)
			v := judgeLate(t, newJudge(t, srv.URL, time.Second, nil), question)
			if c.want == unusable {
				if v.Task != service.TaskUnknown || !strings.HasPrefix(v.Reason, "judge gave no usable answer") {
					t.Fatalf("%q: %+v, want unknown", c.body, v)
				}
				return
			}
			if v != c.want {
				t.Fatalf("%+v, want %+v", v, c.want)
			}
		})
	}
}

var unusable = service.Verdict{Reason: "unusable"}

func TestFailuresReadUnknownInWordsAndAreLoggedOncePerOutage(t *testing.T) {
	l, err := net.Listen("tcp", "127.0.0.1:0")
	must(t, err)
	dead := "http://" + l.Addr().String() + "/v1"
	l.Close() // nothing listens there now
	slow := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		select {
		case <-r.Context().Done():
		case <-time.After(5 * time.Second):
		}
	}))
	t.Cleanup(slow.Close)
	broken := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		http.Error(w, "model not loaded", http.StatusServiceUnavailable)
	}))
	t.Cleanup(broken.Close)
	for _, c := range []struct{ endpoint, want string }{
		{dead, "judge unreachable: connection refused"},
		{slow.URL, "judge too slow: no answer within 200ms"},
		{broken.URL, "judge failed: HTTP 503 Service Unavailable"},
	} {
		var logs bytes.Buffer
		j := newJudge(t, c.endpoint, 200*time.Millisecond, slog.New(slog.NewTextHandler(&logs, nil)))
		j.backoff = time.Hour // no retry during the test
		if v := judgeLate(t, j, question); v != (service.Verdict{Task: service.TaskUnknown, Reason: c.want}) {
			t.Fatalf("%s: %+v, want %q", c.endpoint, v, c.want)
		}
		// In the backoff, focus events ask no one: the answer is at once.
		for i := 0; i < 5; i++ {
			q := question
			q.Title = fmt.Sprint("tab ", i)
			v, ok := j.Judge(q, func(v service.Verdict) { t.Errorf("during the backoff: got %+v delivered, want nothing", v) })
			if !ok || v.Task != service.TaskUnknown || v.Reason != c.want {
				t.Fatalf("during the backoff: got %+v %v, want unknown, %q, at once", v, ok, c.want)
			}
		}
		if n := strings.Count(logs.String(), "the LLM judge failed"); n != 1 {
			t.Fatalf("%s: the failure logged: got %d times, want once:\n%s", c.endpoint, n, logs.String())
		}
		if strings.Contains(logs.String(), "YouTube") || strings.Contains(logs.String(), "tab ") {
			t.Fatalf("the log: got\n%s\nwant no title in it", logs.String())
		}
	}
}

func TestTheNewestQuestionIsRetriedAfterTheBackoff(t *testing.T) {
	var fail atomic.Bool
	fail.Store(true)
	var asked sync.Map
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		var body struct{ Messages []struct{ Content string } }
		_ = json.NewDecoder(r.Body).Decode(&body)
		asked.Store(body.Messages[1].Content, true)
		if fail.Load() {
			http.Error(w, "loading", http.StatusServiceUnavailable)
			return
		}
		fmt.Fprint(w, reply(`{"on_task":true,"reason":"fine"}`, "stop"))
	}))
	t.Cleanup(srv.Close)
	j := newJudge(t, srv.URL, time.Second, nil)
	j.mu.Lock()
	j.backoff = 50 * time.Millisecond
	j.mu.Unlock()
	first := make(verdicts, 4)
	if _, ok := j.Judge(question, first.deliver); ok {
		t.Fatal("Judge: got an answer at once, want one later")
	}
	if v := first.next(t); v.Task != service.TaskUnknown {
		t.Fatalf("the first verdict: got %+v, want unknown", v)
	}
	fail.Store(false)
	newest := question
	newest.Title = "the newest window"
	second := make(verdicts, 4)
	if v, ok := j.Judge(newest, second.deliver); !ok || v.Task != service.TaskUnknown {
		// The backoff may already be over on a slow machine: then it is asked at once.
		if ok {
			t.Fatalf("Judge during the backoff: got %+v at once, want unknown", v)
		}
	}
	if v := second.next(t); v != (service.Verdict{Task: service.TaskOn, Reason: "fine"}) {
		t.Fatalf("the retry's verdict: got %+v, want on task, \"fine\"", v)
	}
	select {
	case v := <-first:
		t.Fatalf("the older question: got it retried too, %+v; want only the newest", v)
	default:
	}
}

// gatedServer answers each request with answer(the user message) once
// release is closed, counting the requests.
func gatedServer(t *testing.T, answer func(facts string) string) (url string, requests *atomic.Int32, release func()) {
	gate := make(chan struct{})
	requests = new(atomic.Int32)
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		requests.Add(1)
		<-gate
		var body struct{ Messages []struct{ Content string } }
		_ = json.NewDecoder(r.Body).Decode(&body)
		fmt.Fprint(w, reply(answer(body.Messages[1].Content), "stop"))
	}))
	t.Cleanup(srv.Close)
	return srv.URL, requests, func() { close(gate) }
}

func TestFocusHoppingDoesNotQueueRequestsTheNewestWins(t *testing.T) {
	url, requests, release := gatedServer(t, func(facts string) string {
		if strings.Contains(facts, "tab 199") {
			return `{"on_task":false,"reason":"the last tab"}`
		}
		return `{"on_task":false,"reason":"other"}`
	})
	j := newJudge(t, url, 10*time.Second, nil)
	var delivered atomic.Int32
	last := make(verdicts, 1)
	for i := 0; i < 200; i++ {
		q := question
		q.Title = fmt.Sprint("tab ", i)
		d := func(service.Verdict) { delivered.Add(1) }
		if i == 199 {
			d = last.deliver
		}
		if _, ok := j.Judge(q, d); ok {
			t.Fatal("Judge: got an answer at once, want one later")
		}
	}
	release()
	if v := last.next(t); v.Reason != "the last tab" {
		t.Fatalf("the newest window's verdict: got %+v, want reason \"the last tab\"", v)
	}
	// The first question may already be in flight when the others come
	// (then it is answered too), or still waiting (then it is replaced).
	if n := requests.Load(); n > 2 {
		t.Fatalf("%d requests for 200 focus changes, want at most 2 (one in flight, and the newest)", n)
	}
	if n := delivered.Load(); n > 1 || n != requests.Load()-1 {
		t.Fatalf("verdicts for superseded questions: got %d for %d requests, want one fewer than the requests, at most 1", n, requests.Load())
	}
}

func TestSameWindowTwiceIsOneRequest(t *testing.T) {
	url, requests, release := gatedServer(t, func(string) string { return `{"on_task":true,"reason":"ok"}` })
	j := newJudge(t, url, 10*time.Second, nil)
	a, b := make(verdicts, 1), make(verdicts, 1)
	j.Judge(question, a.deliver)
	j.Judge(question, b.deliver) // away and back before the answer
	release()
	if a.next(t) != b.next(t) || requests.Load() != 1 {
		t.Fatalf("requests for one window: got %d, want 1, both deliveries the same verdict", requests.Load())
	}
}

func TestCloseEndsARequestInFlight(t *testing.T) {
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) { <-r.Context().Done() }))
	t.Cleanup(srv.Close)
	j, err := New(Config{Endpoint: srv.URL, Timeout: time.Hour, Logger: slog.New(slog.NewTextHandler(io.Discard, nil))})
	must(t, err)
	got := make(verdicts, 1)
	j.Judge(question, got.deliver)
	j.Close() // returns: the request was cancelled, not waited out
	if v, ok := j.Judge(question, got.deliver); !ok || v.Task != service.TaskUnknown {
		t.Fatalf("after Close: got %+v %v, want unknown at once", v, ok)
	}
}

func TestEndpointsOffThisMachineNeedAllowRemote(t *testing.T) {
	for _, c := range []struct {
		endpoint string
		remote   bool
		want     string // "" = accepted
	}{
		{"http://127.0.0.1:8080/v1", false, ""},
		{"http://localhost:11434/v1", false, ""},
		{"http://[::1]:8080/v1", false, ""},
		{"http://127.0.0.2:8080/v1", false, ""},
		{"http://192.168.1.10:8080/v1", false, "set allow_remote = true"},
		{"https://api.example.com/v1", false, "not on this machine"},
		{"http://localhost.example.com/v1", false, "not on this machine"},
		{"https://api.example.com/v1", true, ""},
		{"ftp://127.0.0.1/v1", false, "must start with http:// or https://"},
		{"http://user:pw@127.0.0.1/v1", false, "user or password"},
		{"127.0.0.1:8080", false, "e.g. http://127.0.0.1:8080/v1"},
		{"http:///v1", false, "has no host"},
	} {
		_, err := New(Config{Endpoint: c.endpoint, AllowRemote: c.remote})
		switch {
		case c.want == "" && err != nil:
			t.Errorf("%s (allow_remote %v): got %v, want it accepted", c.endpoint, c.remote, err)
		case c.want != "" && (err == nil || !strings.Contains(err.Error(), c.want)):
			t.Errorf("%s (allow_remote %v): %v, want an error saying %q", c.endpoint, c.remote, err, c.want)
		}
	}
}

func TestRedirectsAreNotFollowed(t *testing.T) {
	var followed atomic.Bool
	target := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) { followed.Store(true) }))
	t.Cleanup(target.Close)
	srv := httptest.NewServer(http.RedirectHandler(target.URL, http.StatusTemporaryRedirect))
	t.Cleanup(srv.Close)
	v := judgeLate(t, newJudge(t, srv.URL, time.Second, nil), question)
	if followed.Load() || v.Task != service.TaskUnknown || !strings.Contains(v.Reason, "redirected") {
		t.Fatalf("redirect: got followed %v, verdict %+v; want not followed, unknown, saying redirected", followed.Load(), v)
	}
}

func must(t *testing.T, err error) {
	t.Helper()
	if err != nil {
		t.Fatal(err)
	}
}

// The model is told the site in front of a browser window as the core
// gives it (a host, unless the person opted in to paths), and nothing of a
// site for any other window.
func TestTheRequestCarriesTheSiteOnlyWhenThereIsOne(t *testing.T) {
	for _, c := range []struct {
		site string
		want string
	}{{"www.youtube.com", `\"site\":\"www.youtube.com\"`}, {"", ""}} {
		body, err := newRequest("m", service.Question{NextAction: "a", SuccessCondition: "b", Class: "firefox", Title: "t", Site: c.site})
		if err != nil {
			t.Fatal(err)
		}
		if got := strings.Contains(string(body), `\"site\"`); got != (c.want != "") || (c.want != "" && !strings.Contains(string(body), c.want)) {
			t.Errorf("site %q: got request %s, want the site in it only when there is one (%s)", c.site, body, c.want)
		}
	}
}
