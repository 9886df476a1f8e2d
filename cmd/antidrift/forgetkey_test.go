package main

import (
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/antidrift/antidrift/internal/testsupport/statefixture"
	"github.com/antidrift/antidrift/persist"
)

// forget-key with no daemon: a machine's pinned key forgotten by its name
// or its id, so its folder's key is pinned anew at the next reading; a
// name no machine has, or this machine's own id, is a usage error; a
// machine with no pin is said to have had none.
func TestForgetKey(t *testing.T) {
	root := t.TempDir()
	sync, state, cfgHome := filepath.Join(root, "Sync"), filepath.Join(root, "state"), filepath.Join(root, "config")
	for _, d := range []string{sync, state, filepath.Join(cfgHome, "antidrift")} {
		if err := os.MkdirAll(d, 0o700); err != nil {
			t.Fatal(err)
		}
	}
	writeFile(t, filepath.Join(cfgHome, "antidrift", "config.toml"), "sync_dir = \""+sync+"\"\ndevice_name = \"desk\"\n")
	laptop, err := statefixture.Machine(filepath.Join(root, "laptop"), sync, "laptop", false,
		statefixture.TodaySession(time.Now(), "0197a3c4-0000-7000-8000-000000000001", "answer mail on the laptop"))
	if err != nil {
		t.Fatal(err)
	}
	own, err := statefixture.Machine(state, sync, "desk", true)
	if err != nil {
		t.Fatal(err)
	}
	// A reading here pins the laptop's key.
	devs, _, _ := persist.ReadShared(sync, persist.LoadTrust(state))
	pin, ok := persist.LoadTrust(state).Pinned(laptop)
	if len(devs) != 2 || !ok {
		t.Fatalf("the first reading: got %d devices, pinned %v; want 2, the laptop's key pinned", len(devs), ok)
	}
	env := noBus("XDG_CONFIG_HOME=" + cfgHome)
	r := cli(t, env, "forget-key", "laptop", "--state-dir", state)
	if r.code != 0 || !strings.Contains(r.stdout, "Forgot key "+persist.Fingerprint(pin.Key)) || !strings.Contains(r.stdout, laptop) {
		t.Fatalf("forget-key laptop: got %v, want exit 0 naming the forgotten key %s and the laptop's id", r, persist.Fingerprint(pin.Key))
	}
	if _, ok := persist.LoadTrust(state).Pinned(laptop); ok {
		t.Fatal("after forget-key: got the laptop's key still pinned, want it forgotten")
	}
	if r := cli(t, env, "forget-key", laptop, "--state-dir", state, "--json"); r.code != 0 || !strings.Contains(r.stdout, `"forgotten_key":""`) {
		t.Errorf("forget-key by id with nothing pinned: got %v, want exit 0 and no key forgotten", r)
	}
	for _, c := range []struct{ arg, want string }{
		{"phone", `no machine in sync_dir is named "phone"`},
		{own, "this machine's own device id"},
	} {
		if r := cli(t, env, "forget-key", c.arg, "--state-dir", state); r.code != exitUsage || !strings.Contains(r.stderr, c.want) {
			t.Errorf("forget-key %s: got %v, want exit 2 saying %q", c.arg, r, c.want)
		}
	}
}
