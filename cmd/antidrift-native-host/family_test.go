package main

import (
	"testing"

	"github.com/antidrift/antidrift/internal/nativehost"
)

// The host and the daemon read a host's arguments alike: the host to name
// its browser, the daemon (nativehost.FamilyOfArgs) when a launcher such as
// xdg-native-messaging-proxy, not the browser, started it.
func TestTheHostAndTheDaemonReadTheArgumentsAlike(t *testing.T) {
	for _, args := range [][]string{
		{"chrome-extension://fopagejekiabnkobjkkggigkgddpcehh/"},
		{"chrome-extension://fopagejekiabnkobjkkggigkgddpcehh/", "--parent-window=0"},
		{"/home/me/.mozilla/native-messaging-hosts/org.antidrift.native_host.json", "browser@antidrift.github.io"},
		{},
		{"--parent-window=0", "chrome-extension://x/"},
	} {
		if host, daemon := browserOf(args), nativehost.FamilyOfArgs(args); host != daemon {
			t.Errorf("arguments %q: the host says %s, the daemon %s", args, host, daemon)
		}
	}
}
