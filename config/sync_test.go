package config

import (
	"os"
	"path/filepath"
	"strings"
	"testing"
)

// The sync keys: a good file sets them, a ~/ is expanded, and each bad
// value is named with its line while the other keys still apply.
func TestSyncKeys(t *testing.T) {
	home := t.TempDir()
	t.Setenv("HOME", home)
	good, problems := Parse("c.toml", []byte("sync_dir = \"~/Sync/antidrift\"\nsync_titles = true\ndevice_name = \"Ann's laptop\"\n"))
	if len(problems) != 0 {
		t.Fatalf("problems: got %v, want none", problems)
	}
	if good.SyncDir != filepath.Join(home, "Sync", "antidrift") || !good.SyncTitles || good.DeviceName != "Ann's laptop" {
		t.Fatalf("SyncDir, SyncTitles, DeviceName: got %q, %v, %q, want %q, true, %q", good.SyncDir, good.SyncTitles, good.DeviceName, filepath.Join(home, "Sync", "antidrift"), "Ann's laptop")
	}
	if d := Default(); d.SyncDir != "" || d.SyncTitles || d.DeviceName != "" {
		t.Fatalf("Default: got SyncDir %q, SyncTitles %v, DeviceName %q, want sync off (\"\"), titles kept home (false), the hostname (\"\")", d.SyncDir, d.SyncTitles, d.DeviceName)
	}
	for _, bad := range []struct{ name, line, want string }{
		{"relative sync_dir", `sync_dir = "Sync/antidrift"`, `sync_dir: "Sync/antidrift" is not an absolute path`},
		{"empty sync_dir", `sync_dir = ""`, `sync_dir: is empty; leave sync_dir out`},
		{"sync_dir as a list", `sync_dir = ["/a"]`, `sync_dir: want a quoted folder such as "~/Sync/antidrift", got a list`},
		{"sync_titles as a string", `sync_titles = "yes"`, `sync_titles: want true or false, got the string "yes"`},
		{"empty device_name", `device_name = "  "`, `device_name: is empty; leave device_name out to use the hostname`},
		{"long device_name", `device_name = "` + strings.Repeat("x", 65) + `"`, `device_name: is 65 characters long (at most 64)`},
		{"device_name with an escape", `device_name = "lap\u001b[2Jtop"`, `holds a character that cannot be shown`},
	} {
		t.Run(bad.name, func(t *testing.T) {
			path := filepath.Join(t.TempDir(), "config.toml")
			if err := os.WriteFile(path, []byte("drift_grace = \"9s\"\n"+bad.line+"\n"), 0o600); err != nil {
				t.Fatal(err)
			}
			c, problems := Load(path)
			if len(problems) != 1 || problems[0].Line != 2 || !strings.Contains(problems[0].String(), bad.want) {
				t.Fatalf("problems %v, want one on line 2 containing %q", problems, bad.want)
			}
			if c.DriftGrace.String() != "9s" || c.SyncDir != "" || c.DeviceName != "" || c.SyncTitles {
				t.Fatalf("got DriftGrace %v, SyncDir %q, DeviceName %q, SyncTitles %v, want 9s and the defaults (\"\", \"\", false): the bad key keeps its default and the others apply", c.DriftGrace, c.SyncDir, c.DeviceName, c.SyncTitles)
			}
		})
	}
}
