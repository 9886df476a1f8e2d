package main

import (
	"os"
	"path/filepath"
	"strings"
	"testing"
)

// --device and --this-device: contradictions and a --device without
// sync_dir are usage errors naming the fix; a machine that is not there
// is refused with the machines that are.
func TestDeviceFlags(t *testing.T) {
	dir := reportFixture(t)
	cfg := filepath.Join(t.TempDir(), "config.toml")
	sync := t.TempDir()
	writeFile(t, cfg, "sync_dir = \""+sync+"\"\ndevice_name = \"desk\"\n")
	for _, c := range []struct {
		args []string
		code int
		want string
	}{
		{[]string{"--device", "laptop"}, exitUsage, "--device needs sync_dir set in config.toml"},
		{[]string{"--config", cfg, "--device", "laptop", "--this-device"}, exitUsage, "give --device NAME or --this-device, not both"},
		{[]string{"--config", cfg, "--device", "laptop"}, exitUsage, `antidrift report: --device: no machine is named "laptop" (the machines are "desk")`},
	} {
		r := cli(t, noBus(), append([]string{"report", "--state-dir", dir}, c.args...)...)
		if r.code != c.code || !strings.Contains(r.stderr, c.want) {
			t.Errorf("report %v: got %v, want exit %d saying %q", c.args, r, c.code, c.want)
		}
	}
	// With sync_dir and no other machine yet: this one, in a Devices table.
	r := cli(t, noBus(), "report", "--state-dir", dir, "--config", cfg, "--since", "2000-01-01")
	if r.code != 0 || !strings.Contains(r.stdout, "desk (this machine)") {
		t.Errorf("report with sync_dir: got %v, want exit 0 and \"desk (this machine)\"", r)
	}
	if r := cli(t, noBus(), "report", "--state-dir", dir, "--config", cfg, "--this-device", "--since", "2000-01-01"); r.code != 0 || strings.Contains(r.stdout, "Devices") {
		t.Errorf("--this-device: got %v, want exit 0 and no Devices table", r)
	}
	if entries, _ := os.ReadDir(sync); len(entries) != 0 {
		t.Errorf("sync_dir after a report: got %v, want it empty", entries)
	}
}
