package testenv

import (
	"bytes"
	"encoding/json"
	"fmt"
	"io"
	"net"
	"net/http"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"strconv"
	"strings"
	"testing"
	"time"
)

func init() { aptPackages["syncthing"] = "syncthing" }

// Syncthing is a real Syncthing instance (Debian's package) with a home
// of its own, its sync protocol and GUI/REST on 127.0.0.1 only, and global
// discovery, local discovery, relays, NAT traversal, usage reporting and
// upgrades off: it reaches exactly the instances a test introduces to it.
type Syncthing struct {
	Home   string
	ID     string // its device id
	Listen string // tcp://127.0.0.1:PORT
	gui    string // http://127.0.0.1:PORT
	apiKey string
	proc   *proc
}

// StartSyncthing generates an instance's keys and config in a fresh home
// and starts it, waiting until its REST API answers.
func StartSyncthing(t testing.TB, name string) *Syncthing {
	t.Helper()
	Need(t, "syncthing")
	home := tempDir(t)
	out, err := exec.Command("syncthing", "generate", "--home="+home, "--no-default-folder", "--skip-port-probing").CombinedOutput()
	if err != nil {
		t.Fatalf("syncthing generate: %v\n%s", err, out)
	}
	cfgPath := filepath.Join(home, "config.xml")
	cfg, err := os.ReadFile(cfgPath)
	if err != nil {
		t.Fatal(err)
	}
	s := &Syncthing{Home: home, Listen: "tcp://127.0.0.1:" + freePort(t), gui: "127.0.0.1:" + freePort(t), apiKey: "antidrift-test-" + name}
	for tag, value := range map[string]string{
		"listenAddress": s.Listen, "globalAnnounceEnabled": "false", "localAnnounceEnabled": "false",
		"relaysEnabled": "false", "natEnabled": "false", "startBrowser": "false", "urAccepted": "-1",
		"autoUpgradeIntervalH": "0", "crashReportingEnabled": "false", "apikey": s.apiKey,
	} {
		re := regexp.MustCompile(`<` + tag + `>[^<]*</` + tag + `>`)
		if !re.Match(cfg) {
			t.Fatalf("syncthing's config.xml has no <%s>", tag)
		}
		cfg = re.ReplaceAll(cfg, []byte("<"+tag+">"+value+"</"+tag+">"))
	}
	gui := regexp.MustCompile(`(<gui[^>]*>\s*<address>)[^<]*(</address>)`)
	if !gui.Match(cfg) {
		t.Fatal("syncthing's config.xml has no <gui><address>")
	}
	cfg = gui.ReplaceAll(cfg, []byte("${1}"+s.gui+"${2}"))
	if err := os.WriteFile(cfgPath, cfg, 0o600); err != nil {
		t.Fatal(err)
	}
	env := withEnv(os.Environ(), "HOME="+home, "STNOUPGRADE=1", "STNORESTART=1", "STNODEFAULTFOLDER=1")
	s.proc = start(t, home, env, nil, "syncthing", "serve", "--home="+home, "--no-browser", "--no-restart", "--no-upgrade")
	deadline := time.Now().Add(readyTimeout)
	for {
		var status struct {
			MyID string `json:"myID"`
		}
		if err := s.rest("GET", "/rest/system/status", nil, &status); err == nil && status.MyID != "" {
			s.ID = status.MyID
			return s
		}
		if time.Now().After(deadline) || s.proc.exited() {
			t.Fatalf("syncthing's REST API did not answer\n%s", s.proc.output())
		}
		time.Sleep(100 * time.Millisecond)
	}
}

// freePort is a TCP port free on 127.0.0.1 right now.
func freePort(t testing.TB) string {
	t.Helper()
	l, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	defer l.Close()
	return strconv.Itoa(l.Addr().(*net.TCPAddr).Port)
}

// rest calls the REST API; out, when not nil, takes the JSON answer.
func (s *Syncthing) rest(method, path string, body, out any) error {
	var in io.Reader
	if body != nil {
		b, err := json.Marshal(body)
		if err != nil {
			return err
		}
		in = bytes.NewReader(b)
	}
	req, err := http.NewRequest(method, "http://"+s.gui+path, in)
	if err != nil {
		return err
	}
	req.Header.Set("X-API-Key", s.apiKey)
	resp, err := http.DefaultClient.Do(req)
	if err != nil {
		return err
	}
	defer resp.Body.Close()
	data, _ := io.ReadAll(resp.Body)
	if resp.StatusCode/100 != 2 {
		return fmt.Errorf("%s %s: %s: %s", method, path, resp.Status, strings.TrimSpace(string(data)))
	}
	if out != nil {
		return json.Unmarshal(data, out)
	}
	return nil
}

// Introduce makes other a known device at its loopback address, by its
// device id.
func (s *Syncthing) Introduce(t testing.TB, other *Syncthing) {
	t.Helper()
	err := s.rest("POST", "/rest/config/devices", map[string]any{
		"deviceID": other.ID, "name": "peer", "addresses": []string{other.Listen}, "autoAcceptFolders": false,
	}, nil)
	if err != nil {
		t.Fatal(err)
	}
}

// Share shares the folder at path, send-receive, with the devices named,
// watching it for changes (a second's delay, so a test need not wait ten).
func (s *Syncthing) Share(t testing.TB, id, path string, with ...*Syncthing) {
	t.Helper()
	devices := []map[string]string{{"deviceID": s.ID}}
	for _, o := range with {
		devices = append(devices, map[string]string{"deviceID": o.ID})
	}
	err := s.rest("POST", "/rest/config/folders", map[string]any{
		"id": id, "label": id, "path": path, "type": "sendreceive", "devices": devices,
		"fsWatcherEnabled": true, "fsWatcherDelayS": 1, "rescanIntervalS": 3600,
	}, nil)
	if err != nil {
		t.Fatal(err)
	}
}

// Scan asks for a rescan of a folder now.
func (s *Syncthing) Scan(t testing.TB, id string) {
	t.Helper()
	if err := s.rest("POST", "/rest/db/scan?folder="+id, nil, nil); err != nil {
		t.Fatal(err)
	}
}

// Output is what the instance logged so far.
func (s *Syncthing) Output() string { return s.proc.output() }
