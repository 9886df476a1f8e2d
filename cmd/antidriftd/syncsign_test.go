package main

import (
	"bytes"
	"crypto/ed25519"
	"crypto/sha256"
	"encoding/base64"
	"encoding/hex"
	"encoding/json"
	"fmt"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/antidrift/antidrift/internal/testsupport/testenv"
	"github.com/antidrift/antidrift/persist"
)

// forgedAction is the next action of every forged line: it must never show.
const forgedAction = "deep work on the thesis"

// forgeLine appends to a published copy what a synced machine gone bad
// can write there: the next seq, chained to the copy's last line by the
// hash rule, as a line of the right form, signed, but by a key of its own.
// It returns the line's number in the file.
func forgeLine(t *testing.T, path, id, form string) int {
	t.Helper()
	data, err := os.ReadFile(path)
	if err != nil {
		t.Fatal(err)
	}
	lines := strings.Split(strings.TrimSuffix(string(data), "\n"), "\n")
	var last struct {
		Seq  uint64 `json:"seq"`
		Hash string `json:"hash"`
	}
	if err := json.Unmarshal([]byte(lines[len(lines)-1]), &last); err != nil {
		t.Fatal(err)
	}
	start := time.Now().Add(-7 * time.Hour).Unix()
	body := fmt.Sprintf(`{"seq":%d,"prev_hash":"%s","session_id":"forged","next_action":%q,"success_condition":"done","outcome":"completed","enforcement":"warn","started_unix":%d,"ended_unix":%d,"timebox_secs":21600,"switch_count":0,"drift_seconds":0,"away_seconds":0,"minimize_count":0,"break_glass":false,"buckets":[{"class":"Emacs","title":"","seconds":21600}],"hash":"`,
		last.Seq+1, last.Hash, forgedAction, start, start+21600)
	sum := sha256.Sum256([]byte(last.Hash + body + `"}`))
	sealed := body + hex.EncodeToString(sum[:]) + `"}`
	_, key, _ := ed25519.GenerateKey(nil)
	sig := ed25519.Sign(key, []byte("antidrift-v2 line\n"+id+"\n"+form+"\n"+sealed))
	line := sealed[:len(sealed)-1] + `,"sig":"` + base64.RawStdEncoding.EncodeToString(sig) + `"}` + "\n"
	if err := os.WriteFile(path, append(data, line...), 0o600); err != nil {
		t.Fatal(err)
	}
	return len(lines) + 1
}

// agree checks that report, history and verify on m say the same of
// device: its sessions counted (want, never a forged one), and either a
// problem holding every one of parts in all three (verify exiting 1), or
// no problem at all (verify exiting 0).
func agree(t *testing.T, m *syncMachine, device string, want int, parts ...string) {
	t.Helper()
	r := m.report(t)
	n := 0
	for _, s := range r.Sessions {
		if s.NextAction == forgedAction {
			t.Errorf("%s's report: got the forged session, want it left out", m.name)
		}
		if s.Device == device {
			n++
		}
	}
	said := slices.ContainsFunc(r.Problems, func(p string) bool { return containsEvery(p, parts...) })
	if n != want || (len(parts) > 0) != said || (len(parts) == 0 && len(r.Problems) > 0) {
		t.Errorf("%s's report: got %d of %s's sessions, problems %q; want %d, and a problem saying %q (none if nothing to say)", m.name, n, device, r.Problems, want, parts)
	}

	stdout, stderr, code := m.cliApart(t, "history", "--json")
	var entries []map[string]any
	if err := json.Unmarshal([]byte(stdout), &entries); err != nil || code != 0 {
		t.Fatalf("%s: history --json: got exit %d (%v)\n%s%s\nwant exit 0 and JSON", m.name, code, err, stdout, stderr)
	}
	n = 0
	for _, e := range entries {
		if e["next_action"] == forgedAction {
			t.Errorf("%s's history: got the forged session, want it left out", m.name)
		}
		if e["device"] == device {
			n++
		}
	}
	if n != want || (len(parts) > 0 && !containsEvery(stderr, parts...)) || (len(parts) == 0 && strings.Contains(stderr, "!")) {
		t.Errorf("%s's history: got %d of %s's sessions, said\n%s\nwant %d, and %q said (nothing if nothing to say)", m.name, n, device, stderr, want, parts)
	}

	out, code := m.cli(t, "verify")
	if wantCode := map[bool]int{true: 1, false: 0}[len(parts) > 0]; code != wantCode || !containsEvery(out, parts...) {
		t.Errorf("%s's verify: got exit %d\n%s\nwant exit %d and %q said", m.name, code, out, wantCode, parts)
	}
}

func copyHolds(path string, lines int, forged bool) bool {
	data, err := os.ReadFile(path)
	return err == nil && bytes.Count(data, []byte("\n")) == lines && bytes.Contains(data, []byte(forgedAction)) == forged
}

func problemsOf(t *testing.T, m *syncMachine) string {
	return strings.Join(m.d.Session(t).Strings(t, "Problems"), "\n")
}

// signedFaults is each machine signing what it publishes, on the two
// machines of TestTwoMachinesOneRecordThroughSyncthing (each with its 2
// sessions): a forged line in the other machine's copy, then in this
// machine's own folder, each named and left out with the real record
// still counted, and gone once the real machine republishes; then a
// machine reinstalled with a new key, left out until forget-key re-pairs
// it. report, history and verify agree at every step.
func signedFaults(t *testing.T, desk, laptop *syncMachine, deskID, laptopID string, logs []func() string) {
	laptopOnDesk := filepath.Join(desk.syncDir, persist.LayoutFolder, laptopID, persist.PublishedTotals)
	laptopOnLaptop := filepath.Join(laptop.syncDir, persist.LayoutFolder, laptopID, persist.PublishedTotals)
	deskOnDesk := filepath.Join(desk.syncDir, persist.LayoutFolder, deskID, persist.PublishedChain)
	deskOnLaptop := filepath.Join(laptop.syncDir, persist.LayoutFolder, deskID, persist.PublishedChain)

	// The desk's daemon read the laptop's copy after a seal, and said it
	// pinned its key.
	if !containsEvery(desk.d.Output(), `device \"laptop\"`, "first seen here", "now pinned") && !containsEvery(desk.d.Output(), `device "laptop"`, "first seen here", "now pinned") {
		t.Errorf("the desk's log: got no word of the laptop's key pinned, want one\n%s", desk.d.Output())
	}

	t.Run("a forged line in the other machine's copy", func(t *testing.T) {
		line := forgeLine(t, laptopOnDesk, laptopID, "totals")
		agree(t, desk, "laptop", 2, `device "laptop"`, laptopID, fmt.Sprintf("line %d (seq %d)", line, line), "not signed by its key", "left out")
		// A seal on the desk while the forged line is there: the desk
		// remembers how far the laptop's copy reached, never the forgery.
		desk.session(t, "review the week", 1)
		// Syncthing brings the forged copy to the laptop; the laptop's
		// next seal republishes its own record over it, and says so.
		waitForSync(t, "the forged line to reach the laptop's own folder", func() bool { return copyHolds(laptopOnLaptop, 3, true) }, logs...)
		laptop.session(t, "write the thesis for real", 1)
		testenv.WaitFor(t, syncWait, "the laptop's Problems to say its copy's forged line was replaced", func() string { return problemsOf(t, laptop) },
			func(p string) bool {
				return containsEvery(p, "not signed with this machine's key", "replaced with its own record")
			})
		waitForSync(t, "the laptop's republished copy on the desk", func() bool { return copyHolds(laptopOnDesk, 3, false) }, logs...)
		agree(t, desk, "laptop", 3)
	})

	t.Run("a forged line in this machine's own folder", func(t *testing.T) {
		line := forgeLine(t, deskOnDesk, deskID, "chain")
		agree(t, desk, "desk", 3, fmt.Sprintf("line %d (seq %d)", line, line), "not signed by its key")
		waitForSync(t, "the forged line to reach the desk's copy on the laptop", func() bool { return copyHolds(deskOnLaptop, line, true) }, logs...)
		agree(t, laptop, "desk", 3, `device "desk"`, fmt.Sprintf("line %d (seq %d)", line, line), "not signed by its key")
		desk.session(t, "answer the reviewers", 1)
		p := testenv.WaitFor(t, syncWait, "the desk's Problems to say its copy's forged line was replaced", func() string { return problemsOf(t, desk) },
			func(p string) bool {
				return containsEvery(p, "not signed with this machine's key", "replaced with its own record")
			})
		if strings.Contains(p, "copied state directory") {
			t.Errorf("the desk's Problems: got %q, want no copied state directory blamed", p)
		}
		agree(t, desk, "desk", 4)
		waitForSync(t, "the desk's republished copy on the laptop", func() bool { return copyHolds(deskOnLaptop, line, false) }, logs...)
		agree(t, laptop, "desk", 4)
	})

	t.Run("a reinstalled machine is re-paired with forget-key", func(t *testing.T) {
		before, _ := os.ReadFile(filepath.Join(desk.syncDir, persist.LayoutFolder, laptopID, persist.PublishedDevice))
		laptop.d.Stop(t)
		if err := os.Remove(filepath.Join(laptop.stateDir(), "device-key.json")); err != nil {
			t.Fatal(err)
		}
		laptop.d.Start(t) // a new key, and a first pass that publishes with it
		waitForSync(t, "the laptop's copy with its new key on the desk", func() bool {
			now, _ := os.ReadFile(filepath.Join(desk.syncDir, persist.LayoutFolder, laptopID, persist.PublishedDevice))
			var a, b struct {
				Key string `json:"public_key"`
			}
			return json.Unmarshal(before, &a) == nil && json.Unmarshal(now, &b) == nil && b.Key != "" && a.Key != b.Key &&
				sameFiles(filepath.Join(laptop.syncDir, persist.LayoutFolder, laptopID), filepath.Join(desk.syncDir, persist.LayoutFolder, laptopID))
		}, logs...)
		agree(t, desk, "laptop", 0, `device "laptop"`, "was pinned for it", "antidrift forget-key "+laptopID)
		out, code := desk.cli(t, "forget-key", "laptop")
		if code != 0 || !containsEvery(out, "Forgot key SHA256:", `device "laptop"`, laptopID) {
			t.Fatalf("forget-key laptop on the desk: got exit %d\n%s\nwant exit 0 and the forgotten key named", code, out)
		}
		r := desk.report(t)
		var pinned string
		for _, d := range r.Devices {
			if d.Name == "laptop" {
				pinned = d.Pinned
			}
		}
		if !containsEvery(pinned, `"laptop"`, "first seen here", "now pinned") {
			t.Errorf("the desk's first report after forget-key: got the laptop's pinned %q, want its new key said pinned", pinned)
		}
		agree(t, desk, "laptop", 3)
		if out, code := desk.cli(t, "forget-key", deskID); code != 2 || !strings.Contains(out, "this machine's own device id") {
			t.Errorf("forget-key of this machine's own id: got exit %d\n%s\nwant exit 2 saying it is this machine's own", code, out)
		}
	})
}
