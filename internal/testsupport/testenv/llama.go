package testenv

import (
	"encoding/json"
	"fmt"
	"net"
	"net/http"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"strings"
	"syscall"
	"testing"
)

// LlamaServer is llama.cpp's llama-server serving a tiny llama model with
// random weights, built once by scripts/llama-server.sh into a cache
// outside the checkout. It is a real OpenAI-compatible server loading a
// real GGUF: the LLM judge's requests, schema-constrained replies, timeouts
// and outages are real. Its opinions are not: random weights decide by
// chance, so a test that needs a given verdict steers the model (Steer).
type LlamaServer struct {
	URL   string // the OpenAI-compatible base URL, http://127.0.0.1:PORT/v1
	dir   string
	dirT  string
	port  int
	steer string
	p     *proc
}

// Steering makes the random model's on_task answer certain: "false" or
// "true" biases the tokens of that word (--logit-bias) so the
// schema-constrained reply picks it; "" leaves the model to chance.
type Steering = string

// NeedLlamaServer returns the directory scripts/llama-server.sh built. It
// skips the test, naming why, when it is not built; with
// ANTIDRIFT_E2E=require it fails instead. make test-deps builds it.
func NeedLlamaServer(t testing.TB) string {
	t.Helper()
	out, err := exec.Command(filepath.Join(scriptsDir(), "llama-server.sh"), "--path").CombinedOutput()
	why := strings.TrimSpace(string(out))
	if err != nil {
		if os.Getenv(RequireEnv) == "require" {
			t.Fatalf("%s=require but %s", RequireEnv, why)
		}
		t.Skipf("%s (set %s=require to fail instead of skipping)", why, RequireEnv)
	}
	return why
}

// StartLlamaServer starts llama-server on a free loopback port and waits
// until it has loaded the model. It is stopped at cleanup.
func StartLlamaServer(t testing.TB, steer Steering) *LlamaServer {
	t.Helper()
	s := &LlamaServer{dir: NeedLlamaServer(t), dirT: tempDir(t), steer: steer}
	l, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	s.port = l.Addr().(*net.TCPAddr).Port
	l.Close()
	s.URL = fmt.Sprintf("http://127.0.0.1:%d/v1", s.port)
	s.Start(t)
	return s
}

// Start (re)starts the server on its port, as after a crash.
func (s *LlamaServer) Start(t testing.TB) {
	t.Helper()
	// --no-jinja: the Jinja chat path refuses every response_format request
	// with HTTP 400 in this llama.cpp; the built-in ChatML template does not.
	args := []string{"-m", filepath.Join(s.dir, "tiny.gguf"), "--host", "127.0.0.1", "--port", strconv.Itoa(s.port),
		"--no-jinja", "-c", "1024", "-np", "1", "-t", "2", "--no-webui"}
	if s.steer != "" {
		var ids map[string][]int
		data, err := os.ReadFile(filepath.Join(s.dir, "tiny.steer.json"))
		if err == nil {
			err = json.Unmarshal(data, &ids)
		}
		if err != nil || len(ids[s.steer]) == 0 {
			t.Fatalf("steering the model to %q: %v (tiny.steer.json: %s)", s.steer, err, data)
		}
		for _, id := range ids[s.steer] {
			args = append(args, "--logit-bias", fmt.Sprintf("%d+100", id))
		}
	}
	s.p = start(t, s.dirT, os.Environ(), nil, filepath.Join(s.dir, "bin", "llama-server"), args...)
	health := strings.TrimSuffix(s.URL, "/v1") + "/health"
	if !waitUntil(readyTimeout, func() bool {
		if s.p.exited() {
			return true
		}
		resp, err := http.Get(health)
		if err != nil {
			return false
		}
		resp.Body.Close()
		return resp.StatusCode == http.StatusOK
	}) || s.p.exited() {
		t.Fatalf("llama-server did not come up on %s\n%s", s.URL, s.p.output())
	}
}

// Kill kills the server at once (SIGKILL), as a crash would.
func (s *LlamaServer) Kill() {
	syscall.Kill(-s.p.pid(), syscall.SIGKILL)
	s.p.stop()
}

// Output is the server's log so far, for failure messages.
func (s *LlamaServer) Output() string { return s.p.output() }
