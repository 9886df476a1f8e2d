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

// forget-key by name is steered by nothing a machine gone bad writes in
// sync_dir: a name two folders carry is refused, and a folder whose
// device.json claims another device's id (not its own folder's name) is
// no machine of that name, so its claim never makes forget-key drop the
// pin of the device it names. Each refusal leaves every pin as it was.
func TestForgetKeyByNameCannotBeSteered(t *testing.T) {
	const hostile = "0197a3c4-0000-7000-8000-0000000bad01"
	for _, c := range []struct {
		name   string
		attack func(t *testing.T, sync, laptop, phone string)
		arg    string
		want   string
	}{
		{"a second folder named like the phone", func(t *testing.T, sync, laptop, phone string) {
			if _, err := statefixture.Machine(filepath.Join(t.TempDir(), "hostile"), sync, "phone", false); err != nil {
				t.Fatal(err)
			}
		}, "phone", `2 machines in sync_dir are named "phone"`},
		{"a folder named phone claiming the laptop's id, the real phone's folder gone", func(t *testing.T, sync, laptop, phone string) {
			dir := filepath.Join(sync, persist.LayoutFolder, hostile)
			os.MkdirAll(dir, 0o700)
			meta, err := os.ReadFile(filepath.Join(sync, persist.LayoutFolder, laptop, persist.PublishedDevice))
			if err != nil {
				t.Fatal(err)
			}
			writeFile(t, filepath.Join(dir, persist.PublishedDevice), strings.Replace(string(meta), `"laptop"`, `"phone"`, 1))
			os.RemoveAll(filepath.Join(sync, persist.LayoutFolder, phone))
		}, "phone", `no machine in sync_dir is named "phone"`},
	} {
		t.Run(c.name, func(t *testing.T) {
			root := t.TempDir()
			sync, state, cfgHome := filepath.Join(root, "Sync"), filepath.Join(root, "state"), filepath.Join(root, "config")
			for _, d := range []string{sync, state, filepath.Join(cfgHome, "antidrift")} {
				if err := os.MkdirAll(d, 0o700); err != nil {
					t.Fatal(err)
				}
			}
			writeFile(t, filepath.Join(cfgHome, "antidrift", "config.toml"), "sync_dir = \""+sync+"\"\ndevice_name = \"desk\"\n")
			var ids []string
			for _, name := range []string{"laptop", "phone"} {
				id, err := statefixture.Machine(filepath.Join(root, name), sync, name, false,
					statefixture.TodaySession(time.Now(), "0197a3c4-0000-7000-8000-00000000000"+string(rune('1'+len(ids))), "work on the "+name))
				if err != nil {
					t.Fatal(err)
				}
				ids = append(ids, id)
			}
			if _, err := statefixture.Machine(state, sync, "desk", true); err != nil {
				t.Fatal(err)
			}
			persist.ReadShared(sync, persist.LoadTrust(state)) // pins both
			pins, err := os.ReadFile(filepath.Join(state, "device-keys.jsonl"))
			if err != nil {
				t.Fatal(err)
			}
			c.attack(t, sync, ids[0], ids[1])
			r := cli(t, noBus("XDG_CONFIG_HOME="+cfgHome), "forget-key", c.arg, "--state-dir", state)
			if r.code != exitUsage || !strings.Contains(r.stderr, c.want) {
				t.Errorf("forget-key %s: got %v, want exit 2 saying %q", c.arg, r, c.want)
			}
			if after, _ := os.ReadFile(filepath.Join(state, "device-keys.jsonl")); string(after) != string(pins) {
				t.Errorf("the pins after a refused forget-key: got %q, want them as they were, %q", after, pins)
			}
		})
	}
}
