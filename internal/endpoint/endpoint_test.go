package endpoint

import "testing"

// Only what is certainly this machine counts as loopback: an IP literal in
// 127.0.0.0/8 or ::1, or the name localhost. A name is never resolved, so
// one that merely starts with "localhost" or resolves there today is remote.
func TestOnlyThisMachineIsLoopback(t *testing.T) {
	for host, want := range map[string]bool{
		"127.0.0.1": true, "127.9.9.9": true, "::1": true, "localhost": true, "LocalHost": true,
		"localhost.example.com": false, "192.168.1.10": false, "::ffff:10.0.0.1": false, "0.0.0.0": false, "": false,
	} {
		if got := isLoopback(host); got != want {
			t.Errorf("isLoopback(%q): got %v, want %v", host, got, want)
		}
	}
}

// A checked endpoint is the base URL requests are built on: its trailing
// slashes go, so ".../v1/" and ".../v1" ask the same path.
func TestCheckGivesTheBaseURL(t *testing.T) {
	for in, want := range map[string]string{
		"http://127.0.0.1:8080/v1/":   "http://127.0.0.1:8080/v1",
		" http://localhost:11434/v1 ": "http://localhost:11434/v1",
		"https://api.example.com":     "https://api.example.com",
	} {
		u, err := Check(in, true)
		if err != nil {
			t.Errorf("Check(%q): %v", in, err)
			continue
		}
		if got := u.String(); got != want {
			t.Errorf("Check(%q): got %s, want %s", in, got, want)
		}
	}
}
