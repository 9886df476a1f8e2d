// Package endpoint says where a model may be asked: an OpenAI-compatible
// base URL, on this machine unless the person allowed otherwise. Both the
// config file's reader (to name a bad endpoint at its line) and the model
// judge (before its first request) hold an endpoint to it, so neither
// depends on the other.
package endpoint

import (
	"errors"
	"fmt"
	"net"
	"net/url"
	"strings"
)

// Check parses an OpenAI-compatible base URL (e.g.
// http://127.0.0.1:8080/v1) and refuses one that is not on this machine
// unless allowRemote: window titles are private, and a typo in a config file
// must not send them across a network. Only a loopback IP literal or the
// name localhost counts as this machine; other names are not resolved,
// since what a name resolves to can change under the daemon.
func Check(endpoint string, allowRemote bool) (*url.URL, error) {
	u, err := url.Parse(strings.TrimSpace(endpoint))
	switch {
	case err != nil:
		return nil, fmt.Errorf("endpoint %q is not a URL (%v); give the base URL, e.g. http://127.0.0.1:8080/v1", endpoint, errors.Unwrap(err))
	case u.Scheme != "http" && u.Scheme != "https":
		return nil, fmt.Errorf("endpoint %q must start with http:// or https://", endpoint)
	case u.Host == "" || u.Hostname() == "":
		return nil, fmt.Errorf("endpoint %q has no host", endpoint)
	case u.User != nil:
		return nil, fmt.Errorf("endpoint %q must not carry a user or password", endpoint)
	case u.RawQuery != "" || u.Fragment != "":
		return nil, fmt.Errorf("endpoint %q must not have a query or fragment; give the base URL, e.g. http://127.0.0.1:8080/v1", endpoint)
	}
	if !allowRemote && !isLoopback(u.Hostname()) {
		return nil, fmt.Errorf("endpoint %q is not on this machine (loopback), and window titles are private: set allow_remote = true to send them there", endpoint)
	}
	u.Path = strings.TrimRight(u.Path, "/")
	return u, nil
}

// isLoopback reports whether host (no port) is this machine: localhost, or
// an IP in 127.0.0.0/8 or ::1.
func isLoopback(host string) bool {
	if strings.EqualFold(host, "localhost") {
		return true
	}
	ip := net.ParseIP(host)
	return ip != nil && ip.IsLoopback()
}

// IsLoopback reports whether host (a URL's Hostname, no port) is certainly
// this machine, by the same rule as Check: localhost or a loopback IP
// literal; a name is never resolved.
func IsLoopback(host string) bool { return isLoopback(host) }
