package persist

import (
	"crypto/sha256"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"sort"
	"strings"
	"testing"

	"github.com/antidrift/antidrift/service"
)

// dirListing is every entry under dir: its name, type and mode, a link's
// target and a file's sha256, so that any change a start makes (a file
// written, renamed, set aside, truncated, tightened, a link moved) shows.
func dirListing(t *testing.T, dir string) string {
	t.Helper()
	var lines []string
	err := filepath.Walk(dir, func(path string, info os.FileInfo, err error) error {
		if err != nil {
			return err
		}
		rel, _ := filepath.Rel(dir, path)
		line := fmt.Sprintf("%s %v", rel, info.Mode())
		switch {
		case info.Mode()&os.ModeSymlink != 0:
			target, _ := os.Readlink(path)
			line += " -> " + target
		case info.Mode().IsRegular():
			data, err := os.ReadFile(path)
			if err != nil {
				return err
			}
			line += fmt.Sprintf(" %x", sha256.Sum256(data))
		}
		lines = append(lines, line)
		return nil
	})
	if err != nil {
		t.Fatal(err)
	}
	sort.Strings(lines)
	return strings.Join(lines, "\n")
}

// usedStateDir is a state directory as a daemon leaves it mid-session: a
// sealed session, an active one with its raw log, state.json, the spare,
// device.json and devices-seen.json; and, to tempt a start into changing
// it, a file readable by others (tightened at start), an unfinished last
// audit line (set aside at start) and a link where the spare belongs (set
// aside at start).
func usedStateDir(t *testing.T) (dir, active string) {
	t.Helper()
	dir = newStateDir(t)
	s := openStore(t, dir)
	active = "22222222-2222-4222-8222-222222222222"
	for _, id := range []string{"11111111-1111-4111-8111-111111111111", active} {
		for i := range 3 {
			e := service.FocusEvent{AtUnixMillis: int64(1_700_000_000_000 + i*1000), Class: "Editor", Title: "notes.txt", Available: true}
			if err := s.AppendEvent(id, e); err != nil {
				t.Fatal(err)
			}
		}
	}
	if _, err := s.AppendAudit(service.Summary{SessionID: "11111111-1111-4111-8111-111111111111", NextAction: "write"}); err != nil {
		t.Fatal(err)
	}
	if err := s.SaveSnapshot(service.Snapshot{State: service.StateActive, SessionID: active, NextAction: "write more"}); err != nil {
		t.Fatal(err)
	}
	if _, _, err := s.DeviceID(); err != nil {
		t.Fatal(err)
	}
	writeFile(t, filepath.Join(dir, seenFileName), []byte(`{"version":1,"heads":{}}`+"\n"))
	if err := s.Close(); err != nil {
		t.Fatal(err)
	}
	if err := os.Chmod(filepath.Join(dir, deviceFileName), 0o644); err != nil {
		t.Fatal(err)
	}
	appendToFile(t, filepath.Join(dir, auditFileName), []byte(`{"seq":2,"prev`))
	spare := filepath.Join(dir, spareFileName)
	if err := os.Rename(spare, spare+".real"); err != nil {
		t.Fatal(err)
	}
	if err := os.Symlink(spare+".real", spare); err != nil {
		t.Fatal(err)
	}
	return dir, active
}

// A state directory holding any file, or any line, in a format later than
// this build knows is refused at Open with an error naming the file, the
// version found and the highest this build reads; and nothing in the
// directory changes: no mode tightened, no torn line or link set aside.
func TestOpenRefusesALaterVersionUntouched(t *testing.T) {
	later := func(known int) string { return fmt.Sprint(known + 1) }
	cases := []struct {
		name, file, where string
		known             int
		plant             func(t *testing.T, dir, active string)
	}{
		{"state.json", stateFileName, "state.json has format version", StateFileVersion, func(t *testing.T, dir, _ string) {
			path := filepath.Join(dir, stateFileName)
			data := strings.Replace(string(readFile(t, path)), `"version": 1`, `"version": `+later(StateFileVersion), 1)
			writeFile(t, path, []byte(data))
		}},
		{"an audit line", auditFileName, "line 2 of audit.jsonl has format version", AuditLineVersion, func(t *testing.T, dir, _ string) {
			// A whole line before the torn tail (which is rewritten here so
			// it still ends the file).
			path := filepath.Join(dir, auditFileName)
			data := strings.TrimSuffix(string(readFile(t, path)), `{"seq":2,"prev`)
			writeFile(t, path, []byte(data+`{"version":`+later(AuditLineVersion)+`,"seq":2,"prev_hash":"x","session_id":"y","hash":"z"}`+"\n"+`{"seq":3,"prev`))
		}},
		{"the active session's raw log, mid-file", "sessions/", "line 2 of sessions/", RawLogLineVersion, func(t *testing.T, dir, active string) {
			path := filepath.Join(dir, sessionsDirName, active+rawLogSuffix)
			lines := strings.SplitAfter(string(readFile(t, path)), "\n")
			lines[1] = `{"version":` + later(RawLogLineVersion) + `,"at_unix_millis":1700000001000,"class":"Editor","title":"notes.txt","available":true,"reason":""}` + "\n"
			writeFile(t, path, []byte(strings.Join(lines, "")))
		}},
		{"another session's raw log, last line", "sessions/", "sessions/33333333-3333-4333-8333-333333333333.jsonl has format version", RawLogLineVersion, func(t *testing.T, dir, _ string) {
			path := filepath.Join(dir, sessionsDirName, "33333333-3333-4333-8333-333333333333"+rawLogSuffix)
			writeFile(t, path, []byte(`{"at_unix_millis":1,"class":"A","title":"","available":true,"reason":""}`+"\n"+
				`{"version":`+later(RawLogLineVersion)+`,"at_unix_millis":2,"class":"A","title":"","available":true,"reason":""}`+"\n"))
		}},
		{"a pending.spare slot", spareFileName, "pending.spare has format version", SpareSlotVersion, func(t *testing.T, dir, _ string) {
			path := filepath.Join(dir, spareFileName+".real")
			slot := []byte(`{"version":` + later(SpareSlotVersion) + `,"gen":7,"pending":[]}`)
			data := readFile(t, path)
			copy(data[spareSlotSize:], slot)
			// The link is where the daemon looks; put the file there.
			os.Remove(filepath.Join(dir, spareFileName))
			writeFile(t, filepath.Join(dir, spareFileName), data)
		}},
		{"device.json", deviceFileName, "device.json has format version", DeviceFileVersion, func(t *testing.T, dir, _ string) {
			path := filepath.Join(dir, deviceFileName)
			data := strings.Replace(string(readFile(t, path)), `"version":1`, `"version":`+later(DeviceFileVersion), 1)
			if err := os.WriteFile(path, []byte(data), 0o644); err != nil {
				t.Fatal(err)
			}
		}},
		{"devices-seen.json", seenFileName, "devices-seen.json has format version", SeenFileVersion, func(t *testing.T, dir, _ string) {
			writeFile(t, filepath.Join(dir, seenFileName), []byte(`{"version":`+later(SeenFileVersion)+`,"heads":{},"pruned":true}`+"\n"))
		}},
		{"a review note", ReviewNotesFileName, "line 2 of review-notes.jsonl has format version", reviewNotesVersion, func(t *testing.T, dir, _ string) {
			writeFile(t, filepath.Join(dir, ReviewNotesFileName), []byte(`{"version":1,"session_id":"a","note":"x"}`+"\n"+
				`{"version":`+later(reviewNotesVersion)+`,"session_id":"b","note":"y"}`+"\n"))
		}},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			dir, active := usedStateDir(t)
			c.plant(t, dir, active)
			before := dirListing(t, dir)
			s, problems, err := Open(dir)
			if err == nil {
				s.Close()
				t.Fatalf("Open of a directory with a later %s: got no error (problems %q), want a refusal", c.name, problems)
			}
			var newer *NewerFormatError
			if !errors.Is(err, ErrNewerFormat) || !errors.As(err, &newer) {
				t.Fatalf("Open's error: got %v (%T), want a *NewerFormatError", err, err)
			}
			want := []string{c.where, fmt.Sprintf("version %d, but this antidrift reads only up to version %d", c.known+1, c.known), "later version of antidrift", "Nothing in the state directory was changed"}
			if !containsAll(err.Error(), want...) {
				t.Errorf("Open's error: got %q, want it to say each of %q", err, want)
			}
			if after := dirListing(t, dir); after != before {
				t.Fatalf("the state directory after the refused Open: got\n%s\nwant it unchanged:\n%s", after, before)
			}
		})
	}
}

// Files and lines without a version (everything written before versions
// were spelled out) and with the version this build knows open as they
// always did.
func TestOpenReadsEveryKnownVersion(t *testing.T) {
	dir, _ := usedStateDir(t)
	// device.json as builds before the version wrote it.
	writeFile(t, filepath.Join(dir, deviceFileName), []byte(`{"device_id":"0b0e0f2a-1c2d-4e5f-8a9b-0c1d2e3f4a5b","created_unix":1}`+"\n"))
	appendToFile(t, filepath.Join(dir, auditFileName), []byte("\n"))
	s, problems, err := Open(dir)
	if err != nil {
		t.Fatalf("Open: got %v, want the directory opened", err)
	}
	defer s.Close()
	if id, _, err := s.DeviceID(); err != nil || id != "0b0e0f2a-1c2d-4e5f-8a9b-0c1d2e3f4a5b" {
		t.Errorf("DeviceID of a device.json without a version: got %q, %v, want the id it holds", id, err)
	}
	if _, found, problem, err := s.LoadSnapshot(); err != nil || !found {
		t.Errorf("LoadSnapshot: got found %v, problem %q, err %v, want the snapshot", found, problem, err)
	}
	_ = problems
}

// versionOf reads the top-level version only, absent as 1, and leaves
// what is not a JSON object to the file's own reader.
func TestVersionOf(t *testing.T) {
	for _, c := range []struct {
		in     string
		v      int
		ok     bool
		reason string
	}{
		{`{"seq":1,"hash":"ab"}`, 1, true, "no key"},
		{`{"version":3,"seq":1}`, 3, true, "first key"},
		{`{"seq":1,"version":2}`, 2, true, "a later key"},
		{`{"title":"version","seq":1}`, 1, true, "the word as a value"},
		{`{"buckets":[{"version":9}]}`, 1, true, "nested, not top-level"},
		{`{"version":"2"}`, 0, false, "not an integer"},
		{`not json "version"`, 0, false, "not JSON"},
		{`   `, 0, false, "blank (an unused spare slot)"},
	} {
		v, ok := versionOf([]byte(c.in))
		if v != c.v || ok != c.ok {
			t.Errorf("versionOf(%s) (%s): got %d, %v, want %d, %v", c.in, c.reason, v, ok, c.v, c.ok)
		}
	}
}

// migrateFile keeps the old bytes under <name>.v<old>-<unix> and puts the
// new ones in place.
func TestMigrateFileKeepsTheOld(t *testing.T) {
	dir := newStateDir(t)
	s := openStore(t, dir)
	path := filepath.Join(dir, seenFileName)
	writeFile(t, path, []byte(`{"version":1,"heads":{}}`))
	kept, err := s.migrateFile(path, 1, []byte(`{"version":2,"heads":{}}`))
	if err != nil {
		t.Fatal(err)
	}
	if got := string(readFile(t, path)); got != `{"version":2,"heads":{}}` {
		t.Errorf("%s after the migration: got %s, want the new bytes", seenFileName, got)
	}
	if got := string(readFile(t, kept)); got != `{"version":1,"heads":{}}` || !strings.HasPrefix(filepath.Base(kept), seenFileName+".v1-") {
		t.Errorf("the old file kept as %s: got %s, want the old bytes under %s.v1-<unix>", kept, got, seenFileName)
	}
	assertMode(t, path, privateFileMode)
}

// checkLineVersions finds a later line wherever it is: past the first
// megabyte it reads at a time, in a line longer than that, and names its
// line; an unfinished last line is not checked.
func TestCheckLineVersionsAcrossReads(t *testing.T) {
	short := `{"at_unix_millis":1,"class":"A","title":"version","available":true,"reason":""}` + "\n"
	many := strings.Repeat(short, 30_000) // about 2.4 MB
	long := `{"title":"` + strings.Repeat("x", 3<<20) + `","version":2}` + "\n"
	for _, c := range []struct {
		name, data string
		line       int
	}{
		{"after two megabytes", many + `{"version":2}` + "\n", 30_001},
		{"a line longer than a read", many + long + short, 30_001},
		{"none", many + short, 0},
		{"only in the unfinished last line", many + `{"version":2}`, 0},
	} {
		err := checkLineVersions(strings.NewReader(c.data), "x.jsonl", 1)
		var newer *NewerFormatError
		switch {
		case c.line == 0 && err != nil:
			t.Errorf("%s: got %v, want no error", c.name, err)
		case c.line != 0 && (!errors.As(err, &newer) || newer.Line != c.line || newer.Got != 2):
			t.Errorf("%s: got %v, want version 2 found on line %d", c.name, err, c.line)
		}
	}
}
