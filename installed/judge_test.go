package installed

import (
	"encoding/json"
	"fmt"
	"io"
	"net"
	"net/http"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/antidrift/antidrift/internal/testsupport/testenv"
)

// modelServer is a stand-in OpenAI-compatible server: it answers every
// chat completion "off task" with reason, and remembers who asked. It
// listens on all of the host's addresses, which the machine shares.
type modelServer struct {
	port    int
	mu      sync.Mutex
	callers []string // the remote IPs of the requests, in order
}

const modelReason = "cat videos do not write the intro"

func startModelServer(t *testing.T) *modelServer {
	t.Helper()
	l, err := net.Listen("tcp", "0.0.0.0:0")
	if err != nil {
		t.Fatal(err)
	}
	s := &modelServer{port: l.Addr().(*net.TCPAddr).Port}
	srv := &http.Server{Handler: http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		io.Copy(io.Discard, r.Body)
		host, _, _ := net.SplitHostPort(r.RemoteAddr)
		s.mu.Lock()
		s.callers = append(s.callers, host)
		s.mu.Unlock()
		verdict, _ := json.Marshal(map[string]any{"on_task": false, "reason": modelReason})
		w.Header().Set("Content-Type", "application/json")
		json.NewEncoder(w).Encode(map[string]any{"choices": []any{map[string]any{
			"finish_reason": "stop",
			"message":       map[string]any{"role": "assistant", "content": string(verdict)},
		}}})
	})}
	go srv.Serve(l)
	t.Cleanup(func() { srv.Close() })
	return s
}

// asked reports whether a request came from ip.
func (s *modelServer) asked(ip string) bool {
	s.mu.Lock()
	defer s.mu.Unlock()
	for _, c := range s.callers {
		if c == ip {
			return true
		}
	}
	return false
}

// hostIP is an address of this host that is not loopback, or "".
func hostIP() string {
	addrs, _ := net.InterfaceAddrs()
	for _, a := range addrs {
		if n, ok := a.(*net.IPNet); ok && n.IP.To4() != nil && n.IP.IsGlobalUnicast() {
			return n.IP.String()
		}
	}
	return ""
}

// The LLM judge reaches its model server on loopback from inside the
// unit's sandbox (with AF_UNIX alone its connect() failed and every window
// was "unknown"); an endpoint off the machine is refused, in words, unless
// allow_remote, and then reached.
func TestJudgeReachesLoopbackModelFromTheUnit(t *testing.T) {
	forEachBus(t, func(t *testing.T, m *testenv.Machine) {
		srv := startModelServer(t)
		x := testenv.StartX(t)
		win := x.XTerm(t, "Browser", "cat videos - Browser")
		x.Activate(t, win)
		m.ShareX(t, x)
		config := func(endpoint string, allowRemote bool) {
			body := fmt.Sprintf("[judge]\nkind = \"llm\"\nendpoint = %q\nallow_remote = %v\n", endpoint, allowRemote)
			must(t, m, "mkdir", "-p", testenv.MachineHome+"/.config/antidrift")
			m.WriteFile(t, testenv.MachineHome+"/.config/antidrift/config.toml", []byte(body), 0o600, testenv.MachineUID)
		}
		reason := func() string { r, _ := readProp[string](m, "DriftReason"); return r }

		config(fmt.Sprintf("http://127.0.0.1:%d/v1", srv.port), false)
		startSession(t, m)
		deadline := time.Now().Add(wait)
		for !strings.Contains(reason(), modelReason) {
			if time.Now().After(deadline) {
				_, raw := journalEntries(t, m)
				class, _ := readProp[string](m, "CurrentClass")
				problems, _ := readProp[[]string](m, "Problems")
				t.Fatalf("no model verdict after %v: DriftReason: got %q, want it to hold %q; CurrentClass %q, Problems %q, server asked by %v; journal:\n%s",
					wait, reason(), modelReason, class, problems, srv.callers, tail(raw))
			}
			time.Sleep(200 * time.Millisecond)
		}
		if !srv.asked("127.0.0.1") {
			t.Fatalf("the model server's callers after the verdict arrived: got none from 127.0.0.1, want one")
		}

		ip := hostIP()
		if ip == "" {
			t.Skip("this host has no address but loopback: the non-loopback half cannot run")
		}
		remote := fmt.Sprintf("http://%s:%d/v1", ip, srv.port)
		config(remote, false)
		must(t, m, "systemctl", "--user", "restart", "antidrift")
		if p := prop[[]string](t, m, "Problems"); !strings.Contains(strings.Join(p, "\n"), "not on this machine") {
			t.Fatalf("Problems with a non-loopback endpoint and no allow_remote: got %q, want one saying it is not on this machine", p)
		}
		if srv.asked(ip) {
			t.Fatalf("the model server at %s without allow_remote: got a window, want none", remote)
		}

		config(remote, true)
		must(t, m, "systemctl", "--user", "restart", "antidrift")
		testenv.WaitUntil(t, wait, "the judge to ask the remote endpoint with allow_remote", func() bool { return srv.asked(ip) })
	})
}
