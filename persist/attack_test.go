package persist

import (
	"bytes"
	"crypto/ed25519"
	"encoding/base64"
	"encoding/json"
	"os"
	"path/filepath"
	"strings"
	"syscall"
	"testing"
	"time"
	"unicode"
	"unicode/utf8"
)

// Attacks on layout 2 by one synced machine gone bad (Syncthing lets a
// peer write anything in the shared folder) or a program of the same
// user: each must change nothing of any real record, and say so, naming
// the device and the line; once the forgery is gone (removed, or the real
// machine publishes again) every real session counts.

// syncWorld is a sync_dir with three machines in the totals form: this
// one ("this", whose state directory reads), and two others, "laptop"
// (3 sessions) and "desktop" (2), already pinned here by a first reading.
type syncWorld struct {
	sync                  string
	this, laptop, desktop *Publisher
}

func machineNamed(t *testing.T, syncDir, name string, n int) *Publisher {
	t.Helper()
	st := openStore(t, newStateDir(t))
	sealSome(t, st, n, time.Unix(1_800_000_000, 0))
	id, _, err := st.DeviceID()
	if err != nil {
		t.Fatal(err)
	}
	p := NewPublisher(st, syncDir, id, name, false, func(string) {})
	if problem := p.PublishNow(); problem != "" {
		t.Fatalf("PublishNow %s: %q", name, problem)
	}
	return p
}

func newSyncWorld(t *testing.T) *syncWorld {
	t.Helper()
	w := &syncWorld{sync: t.TempDir()}
	w.this = machineNamed(t, w.sync, "this", 2)
	w.laptop = machineNamed(t, w.sync, "laptop", 3)
	w.desktop = machineNamed(t, w.sync, "desktop", 2)
	devs, problems, err := w.read()
	if err != nil || len(problems) != 0 || len(devs) != 3 {
		t.Fatalf("the first reading: got %d devices, %q, %v; want 3 and nothing said", len(devs), problems, err)
	}
	return w
}

func (w *syncWorld) read() ([]SharedDevice, []string, error) {
	return ReadShared(w.sync, LoadTrust(w.this.store.dir))
}

// byID is the device read from folder id, with every problem said about
// it (its own, and those of the read that name it).
func byID(devs []SharedDevice, problems []string, id string) (d SharedDevice, said string) {
	for _, x := range devs {
		if x.Folder == id {
			d = x
		}
	}
	var all []string
	if d.Problem != "" {
		all = append(all, d.Problem)
	}
	for _, p := range problems {
		if strings.Contains(p, id) {
			all = append(all, p)
		}
	}
	return d, strings.Join(all, "\n")
}

func (w *syncWorld) file(p *Publisher, name string) string { return filepath.Join(p.Folder(), name) }

func TestAttacksOnTheSignedLayout(t *testing.T) {
	const strangerID = "0192aaaa-0000-7000-8000-00000000bad1"
	type want struct {
		counts int      // of the attacked device's sessions that still count
		said   []string // in what is said of it
	}
	for _, c := range []struct {
		name string
		// attack returns the folder to look at (a device id).
		attack  func(t *testing.T, w *syncWorld) string
		want    want
		restore func(t *testing.T, w *syncWorld) // nil: every machine publishes again
		notice  string                           // what the attacked machine says as it publishes again
	}{
		{"laptop's lines replayed over desktop's", func(t *testing.T, w *syncWorld) string {
			writeFile(t, w.file(w.desktop, PublishedTotals), readFile(t, w.file(w.laptop, PublishedTotals)))
			return w.desktop.id
		}, want{0, []string{`"desktop"`, "3 of the 3 line(s)", "line 1 (seq 1)", "not signed by its key"}}, nil, ""},
		{"laptop's line appended to desktop's", func(t *testing.T, w *syncWorld) string {
			l := bytes.SplitAfter(readFile(t, w.file(w.laptop, PublishedTotals)), []byte("\n"))
			appendToFile(t, w.file(w.desktop, PublishedTotals), l[2])
			return w.desktop.id
		}, want{2, []string{`"desktop"`, "line 3 (seq 3)", "not signed by its key"}}, nil, ""},
		{"laptop's lines replayed over this machine's own", func(t *testing.T, w *syncWorld) string {
			writeFile(t, w.file(w.this, PublishedTotals), readFile(t, w.file(w.laptop, PublishedTotals)))
			return w.this.id
		}, want{0, []string{`"this"`, "line 1 (seq 1)", "not signed by its key"}}, nil, "not signed with this machine's key"},
		{"laptop's line signed for the other form", func(t *testing.T, w *syncWorld) string {
			key, _, _ := w.laptop.store.DeviceKey()
			path := w.file(w.laptop, PublishedTotals)
			appendToFile(t, path, forgedLine(t, readFile(t, path), key, w.laptop.id, formChain))
			return w.laptop.id
		}, want{3, []string{`"laptop"`, "line 4 (seq 4)", "not signed by its key"}}, nil, ""},
		{"laptop's line signed for desktop, appended to desktop's", func(t *testing.T, w *syncWorld) string {
			key, _, _ := w.laptop.store.DeviceKey()
			path := w.file(w.desktop, PublishedTotals)
			appendToFile(t, path, forgedLine(t, readFile(t, path), key, w.desktop.id, formTotals))
			return w.desktop.id
		}, want{2, []string{`"desktop"`, "line 3 (seq 3)", "not signed by its key"}}, nil, ""},
		{"device_name changed in laptop's signed device.json", func(t *testing.T, w *syncWorld) string {
			path := w.file(w.laptop, PublishedDevice)
			writeFile(t, path, bytes.Replace(readFile(t, path), []byte(`"laptop"`), []byte(`"thesis"`), 1))
			return w.laptop.id
		}, want{0, []string{w0(), "not signed by the key it names", "left out"}}, nil, ""},
		{"laptop's device.json put in desktop's folder", func(t *testing.T, w *syncWorld) string {
			writeFile(t, w.file(w.desktop, PublishedDevice), readFile(t, w.file(w.laptop, PublishedDevice)))
			return w.desktop.id
		}, want{0, []string{"claims device id", "not its own name", "2 folders claim device id"}}, nil, ""},
		{"a new folder holding laptop's files (two folders claim one id)", func(t *testing.T, w *syncWorld) string {
			dir := filepath.Join(w.sync, LayoutFolder, strangerID)
			os.Mkdir(dir, 0o700)
			for _, f := range []string{PublishedDevice, PublishedTotals} {
				writeFile(t, filepath.Join(dir, f), readFile(t, w.file(w.laptop, f)))
			}
			return strangerID
		}, want{0, []string{strangerID, "claims device id", "2 folders claim device id"}}, func(t *testing.T, w *syncWorld) {
			os.RemoveAll(filepath.Join(w.sync, LayoutFolder, strangerID))
		}, ""},
		{"a new folder with laptop's key and device_id edited to the folder's", func(t *testing.T, w *syncWorld) string {
			dir := filepath.Join(w.sync, LayoutFolder, strangerID)
			os.Mkdir(dir, 0o700)
			writeFile(t, filepath.Join(dir, PublishedDevice), bytes.Replace(readFile(t, w.file(w.laptop, PublishedDevice)), []byte(w.laptop.id), []byte(strangerID), 1))
			writeFile(t, filepath.Join(dir, PublishedTotals), readFile(t, w.file(w.laptop, PublishedTotals)))
			return strangerID
		}, want{0, []string{strangerID, "not signed by the key it names"}}, func(t *testing.T, w *syncWorld) {
			os.RemoveAll(filepath.Join(w.sync, LayoutFolder, strangerID))
		}, ""},
		{"laptop's signed line duplicated", func(t *testing.T, w *syncWorld) string {
			path := w.file(w.laptop, PublishedTotals)
			l := bytes.SplitAfter(readFile(t, path), []byte("\n"))
			writeFile(t, path, bytes.Join([][]byte{l[0], l[1], l[1], l[2]}, nil))
			return w.laptop.id
		}, want{2, []string{`"laptop"`, "does not verify", "line 3", "2 signed session(s) before that still count"}}, nil, ""},
		{"laptop's signed lines reordered", func(t *testing.T, w *syncWorld) string {
			path := w.file(w.laptop, PublishedTotals)
			l := bytes.SplitAfter(readFile(t, path), []byte("\n"))
			writeFile(t, path, bytes.Join([][]byte{l[0], l[2], l[1]}, nil))
			return w.laptop.id
		}, want{1, []string{`"laptop"`, "does not verify", "line 2", "1 signed session(s) before that still count"}}, nil, ""},
		{"laptop's device.json over the size cap", func(t *testing.T, w *syncWorld) string {
			path := w.file(w.laptop, PublishedDevice)
			meta := readFile(t, path)
			writeFile(t, path, append(bytes.Repeat([]byte(" "), maxDeviceFile), meta...))
			return w.laptop.id
		}, want{0, []string{w0(), "device.json cannot be read", "larger than 64 KiB"}}, nil, ""},
		{"laptop's chain over the size a publisher reads", func(t *testing.T, w *syncWorld) string {
			path := w.file(w.laptop, PublishedTotals)
			f, err := os.OpenFile(path, os.O_WRONLY|os.O_APPEND, 0)
			if err != nil {
				t.Fatal(err)
			}
			f.Truncate(maxPublishedFile + 1) // sparse: costs no disk
			f.Close()
			return w.laptop.id
		}, want{3, []string{`"laptop"`, "larger than this machine reads"}}, nil, "held a file larger than any copy in place of totals.jsonl"},
		{"laptop's chain a directory", func(t *testing.T, w *syncWorld) string {
			path := w.file(w.laptop, PublishedTotals)
			os.Remove(path)
			os.MkdirAll(filepath.Join(path, "inside"), 0o700)
			return w.laptop.id
		}, want{0, []string{`"laptop"`, "not a regular file", "left out"}}, nil, "not a file (a directory or a FIFO) in place of totals.jsonl"},
		{"laptop's device.json a directory", func(t *testing.T, w *syncWorld) string {
			path := w.file(w.laptop, PublishedDevice)
			os.Remove(path)
			os.MkdirAll(filepath.Join(path, "inside"), 0o700)
			return w.laptop.id
		}, want{0, []string{w0(), "not a regular file", "left out"}}, nil, ""},
		{"laptop's older device.json replayed (its audit.jsonl did not verify then)", func(t *testing.T, w *syncWorld) string {
			var m publishedDevice
			json.Unmarshal(readFile(t, w.file(w.laptop, PublishedDevice)), &m)
			m.SourceOK, m.SourceProblem, m.PublishedUnix, m.Sig = false, "line 2 (seq 2): its hash does not match", m.PublishedUnix-3600, ""
			unsigned, _ := json.Marshal(m)
			key, _, _ := w.laptop.store.DeviceKey()
			writeFile(t, w.file(w.laptop, PublishedDevice), append(signDeviceFile(key, unsigned), '\n'))
			return w.laptop.id
		}, want{0, []string{`"laptop"`, "own audit.jsonl does not verify", "left out"}}, nil, ""},
		{"a forged pin in this machine's own folder and in sync_dir, and laptop's folder under the forger's key", func(t *testing.T, w *syncWorld) string {
			forger := otherKey(t)
			pin, _ := json.Marshal(pinLine{Version: pinsVersion, Event: "pin", DeviceID: w.laptop.id,
				PublicKey: base64.StdEncoding.EncodeToString(forger.Public().(ed25519.PublicKey)), AtUnix: 1})
			forget, _ := json.Marshal(pinLine{Version: pinsVersion, Event: "forget", DeviceID: w.laptop.id, AtUnix: 2})
			for _, dir := range []string{w.this.Folder(), w.sync, filepath.Join(w.sync, LayoutFolder)} {
				writeFile(t, filepath.Join(dir, pinsFileName), append(append(forget, '\n'), append(pin, '\n')...))
			}
			var m publishedDevice
			json.Unmarshal(readFile(t, w.file(w.laptop, PublishedDevice)), &m)
			m.PublicKey, m.Sig = base64.StdEncoding.EncodeToString(forger.Public().(ed25519.PublicKey)), ""
			unsigned, _ := json.Marshal(m)
			writeFile(t, w.file(w.laptop, PublishedDevice), append(signDeviceFile(forger, unsigned), '\n'))
			path := w.file(w.laptop, PublishedTotals)
			appendToFile(t, path, forgedLine(t, readFile(t, path), forger, w.laptop.id, formTotals))
			return w.laptop.id
		}, want{0, []string{`"laptop"`, "was pinned for it", "antidrift forget-key %ID"}}, func(t *testing.T, w *syncWorld) {
			for _, dir := range []string{w.this.Folder(), w.sync, filepath.Join(w.sync, LayoutFolder)} {
				os.Remove(filepath.Join(dir, pinsFileName))
			}
		}, ""},
		{"laptop's chain a symlink to desktop's", func(t *testing.T, w *syncWorld) string {
			path := w.file(w.laptop, PublishedTotals)
			os.Remove(path)
			if err := os.Symlink(w.file(w.desktop, PublishedTotals), path); err != nil {
				t.Fatal(err)
			}
			return w.laptop.id
		}, want{0, []string{`"laptop"`, "symbolic link", "left out"}}, nil, "held a symbolic link in place of totals.jsonl"},
		{"laptop's device.json a symlink", func(t *testing.T, w *syncWorld) string {
			path := w.file(w.laptop, PublishedDevice)
			writeFile(t, path+".real", readFile(t, path))
			os.Remove(path)
			os.Symlink(path+".real", path)
			return w.laptop.id
		}, want{0, []string{w0(), "symbolic link"}}, nil, ""},
		{"laptop's chain a FIFO", func(t *testing.T, w *syncWorld) string {
			path := w.file(w.laptop, PublishedTotals)
			os.Remove(path)
			if err := syscall.Mkfifo(path, 0o600); err != nil {
				t.Fatal(err)
			}
			return w.laptop.id
		}, want{0, []string{`"laptop"`, "not a regular file", "left out"}}, nil, "not a file (a directory or a FIFO) in place of totals.jsonl"},
		{"laptop's chain a hard link to desktop's", func(t *testing.T, w *syncWorld) string {
			path := w.file(w.laptop, PublishedTotals)
			os.Remove(path)
			if err := os.Link(w.file(w.desktop, PublishedTotals), path); err != nil {
				t.Fatal(err)
			}
			return w.laptop.id
		}, want{0, []string{`"laptop"`, "line 1 (seq 1)", "not signed by its key"}}, nil, "not signed with this machine's key"},
		{"laptop's folder a symlink to desktop's", func(t *testing.T, w *syncWorld) string {
			os.RemoveAll(w.laptop.Folder())
			os.Symlink(w.desktop.Folder(), w.laptop.Folder())
			return w.laptop.id
		}, want{0, []string{w0(), "symbolic link", "not read"}}, nil, "was not a folder"},
		{"laptop's folder deleted and made again with a new key", func(t *testing.T, w *syncWorld) string {
			os.RemoveAll(w.laptop.Folder())
			os.Remove(filepath.Join(w.laptop.store.dir, deviceKeyFileName))
			w.laptop.PublishNow()
			return w.laptop.id
		}, want{0, []string{`"laptop"`, "was pinned for it", "antidrift forget-key " + "%ID"}}, func(t *testing.T, w *syncWorld) {
			// Only forget-key pairs it again; then everything counts.
			if _, err := ForgetKey(w.this.store.dir, w.laptop.id); err != nil {
				t.Fatal(err)
			}
		}, ""},
	} {
		t.Run(c.name, func(t *testing.T) {
			w := newSyncWorld(t)
			real := map[string]int{w.this.id: 2, w.laptop.id: 3, w.desktop.id: 2}
			id := c.attack(t, w)
			devs, problems, err := w.read()
			if err != nil {
				t.Fatalf("reading after the attack: %v", err)
			}
			d, said := byID(devs, problems, id)
			if len(d.Summaries) != c.want.counts {
				t.Errorf("the attacked device %s: got %d session(s) counted, want %d", id, len(d.Summaries), c.want.counts)
			}
			if d.OK || said == "" {
				t.Errorf("the attacked device %s: got OK %v and nothing said, want it said", id, d.OK)
			}
			for _, s := range c.want.said {
				s = strings.ReplaceAll(s, "%ID", w.laptop.id)
				if s == w0() {
					s = id
				}
				if !strings.Contains(said, s) {
					t.Errorf("what is said of %s: got %q, want it to contain %q", id, said, s)
				}
			}
			// Every other device is untouched, and nothing forged counts.
			for _, x := range devs {
				if x.Folder == id {
					continue
				}
				if n, ok := real[x.Folder]; ok && (len(x.Summaries) != n || !x.OK) {
					t.Errorf("device %s beside the attack: got %d session(s), OK %v (%q); want its %d, untouched", x.Label(), len(x.Summaries), x.OK, x.Problem, n)
				}
			}
			for _, x := range devs {
				for _, s := range x.Summaries {
					if s.SessionID == "forged" {
						t.Errorf("device %s: a forged session counted", x.Label())
					}
				}
			}
			if c.restore != nil {
				c.restore(t, w)
			}
			notices := ""
			for _, p := range []*Publisher{w.this, w.laptop, w.desktop} {
				notices += p.PublishNow()
			}
			if c.notice != "" && !strings.Contains(notices, c.notice) {
				t.Errorf("the machines publishing again: got %q, want %q said", notices, c.notice)
			}
			devs, problems, _ = w.read()
			if len(problems) != 0 || len(devs) != 3 {
				t.Fatalf("once the forgery is gone: got %d devices, problems %q; want the 3, nothing said", len(devs), problems)
			}
			for _, x := range devs {
				if !x.OK || len(x.Summaries) != real[x.Folder] {
					t.Errorf("once the forgery is gone: device %s has %d session(s), OK %v (%q); want its %d", x.Label(), len(x.Summaries), x.OK, x.Problem, real[x.Folder])
				}
			}
		})
	}
}

// w0 stands, in a case's want, for the attacked folder's name.
func w0() string { return "\x00folder" }

// A machine's name is another machine's text: what a reader keeps of it
// is valid UTF-8 with no control character, and a folder named with
// control characters or bytes that are not UTF-8 is said with them
// escaped: nothing read from sync_dir reaches a terminal able to act.
func TestLabelsAndNamesFromSyncDirAreInert(t *testing.T) {
	w := newSyncWorld(t)
	hostile := machineNamed(t, w.sync, "laptop\x1b]0;pwned\x07\xff\u202e\u0085", 1)
	bad := filepath.Join(w.sync, LayoutFolder, "\x1b[2J\x1b]0;x\x07\xfe")
	os.Mkdir(bad, 0o700)
	writeFile(t, filepath.Join(bad, PublishedDevice), readFile(t, w.file(w.laptop, PublishedDevice)))
	writeFile(t, filepath.Join(w.laptop.Folder(), "totals.sync-conflict-\x1b[31m.jsonl"), []byte("x\n"))
	// A machine's own words about its audit.jsonl (source_problem, signed
	// by its own key) are its text too.
	liar := machineNamed(t, w.sync, "liar", 1)
	var m publishedDevice
	json.Unmarshal(readFile(t, w.file(liar, PublishedDevice)), &m)
	m.SourceOK, m.SourceProblem, m.Sig = false, "\x1b]0;owned\x07\x1b[2J", ""
	unsigned, _ := json.Marshal(m)
	key, _, _ := liar.store.DeviceKey()
	writeFile(t, w.file(liar, PublishedDevice), append(signDeviceFile(key, unsigned), '\n'))
	devs, problems, _ := w.read()
	if d, _ := byID(devs, problems, liar.id); !strings.Contains(d.Problem, `\x1b]0;owned`) {
		t.Errorf("a device's own source_problem with control characters: got %q, want it said escaped", d.Problem)
	}
	d, _ := byID(devs, problems, hostile.id)
	if !utf8.ValidString(d.Name) || strings.IndexFunc(d.Name, unicode.IsControl) >= 0 || !strings.HasPrefix(d.Name, "laptop") {
		t.Errorf("a hostile device's name: got %q, want it kept as printable UTF-8", d.Name)
	}
	var all []string
	for _, x := range devs {
		all = append(all, x.Problem, x.Pinned)
	}
	all = append(all, problems...)
	text := strings.Join(all, "\n")
	if !strings.Contains(text, `\x1b[2J`) {
		t.Errorf("the folder with control characters: got %q, want it named, escaped", problems)
	}
	for _, s := range all {
		if i := strings.IndexFunc(s, func(r rune) bool { return unicode.IsControl(r) }); i >= 0 || !utf8.ValidString(s) {
			t.Errorf("what a reading says: got %q, holding a control character or bytes that are not UTF-8; want them escaped", s)
		}
	}
}

// The pins file grows by one line a device first seen, and a machine gone
// bad can make new device folders without end: past maxPins devices no
// more are pinned (each is trusted for that reading only, and said), so
// the file stays bounded and the machines pinned first stay pinned.
func TestThePinsFileIsBounded(t *testing.T) {
	dir := t.TempDir()
	trust := LoadTrust(dir)
	key := otherKey(t).Public().(ed25519.PublicKey)
	first := "0192aaaa-0000-7000-8000-000000000000"
	trust.keyFor(first, key)
	for i := 1; i < maxPins+50; i++ {
		LoadTrust(dir).keyFor(strings.Replace(first, "000000000000", strings.Repeat("0", 8)+hex4(i), 1), otherKey(t).Public().(ed25519.PublicKey))
	}
	size := len(readFile(t, filepath.Join(dir, pinsFileName)))
	_, _, pinned := LoadTrust(dir).keyFor("0192aaaa-0000-7000-8000-0000ffffffff", key)
	if !strings.Contains(pinned, "could not be pinned") || !strings.Contains(pinned, "this reading only") {
		t.Errorf("a device past the bound: got %q, want it said not pinned, trusted for this reading only", pinned)
	}
	if got := len(readFile(t, filepath.Join(dir, pinsFileName))); got != size || bytes.Count(readFile(t, filepath.Join(dir, pinsFileName)), []byte("\n")) != maxPins {
		t.Errorf("the pins file past the bound: got %d bytes (was %d), want it no longer, holding %d pins", got, size, maxPins)
	}
	if _, mismatch, _ := LoadTrust(dir).keyFor(first, otherKey(t).Public().(ed25519.PublicKey)); !strings.Contains(mismatch, "was pinned for it") {
		t.Errorf("the device pinned first, with another key: got %q, want it still held to its pin", mismatch)
	}
	// forget-key still works past the bound, and the forgotten device may
	// be pinned again.
	if _, err := ForgetKey(dir, first); err != nil {
		t.Fatal(err)
	}
	if _, mismatch, pinned := LoadTrust(dir).keyFor(first, key); mismatch != "" || !strings.Contains(pinned, "is now pinned") {
		t.Errorf("after forget-key past the bound: got %q, %q; want the device pinned anew", mismatch, pinned)
	}
}

func hex4(i int) string {
	const digits = "0123456789abcdef"
	return string([]byte{digits[i>>12&15], digits[i>>8&15], digits[i>>4&15], digits[i&15]})
}

// A machine gone bad can have folders of its own pinned here (a reading
// pins every device it reads for the first time), named to sort before
// the real machines: the machines pinned before them are still the ones
// read first, and the folders the bound leaves out are the later ones.
func TestPinnedFloodCannotPushOutAnEarlierMachine(t *testing.T) {
	dir := t.TempDir()
	trust := LoadTrust(dir)
	real := "ffff0000-0000-7000-8000-000000000001"
	trust.now = func() time.Time { return time.Unix(1_800_000_000, 0) }
	trust.keyFor(real, otherKey(t).Public().(ed25519.PublicKey))
	var folders []string
	for i := 0; i < DefaultReadBounds.Devices+4; i++ {
		id := "00000000-0000-7000-8000-00000000" + hex4(i)
		trust.now = func() time.Time { return time.Unix(1_900_000_000+int64(i), 0) }
		trust.keyFor(id, otherKey(t).Public().(ed25519.PublicKey))
		folders = append(folders, id)
	}
	folders = append(folders, real)
	read, left := orderFolders(folders, LoadTrust(dir), seenFile{}, DefaultReadBounds.Devices)
	if len(read) == 0 || read[0] != real {
		t.Errorf("the folders read: got %q first, want %s, pinned first", read, real)
	}
	if len(left) != 5 || left[len(left)-1] != folders[DefaultReadBounds.Devices+3] {
		t.Errorf("the folders left out: got %q, want the 5 pinned last", left)
	}
}

// The layout's folder itself replaced by a link (or a file): every reading
// reads nothing and says so (never following the link), until any machine's next publish removes it, never
// following it, and makes the folder again.
func TestALinkInPlaceOfTheLayoutFolderIsRemoved(t *testing.T) {
	for _, planted := range []string{"a symbolic link", "a file"} {
		t.Run(planted, func(t *testing.T) {
			w := newSyncWorld(t)
			layout := filepath.Join(w.sync, LayoutFolder)
			elsewhere := t.TempDir()
			writeFile(t, filepath.Join(elsewhere, "keep"), []byte("not antidrift's\n"))
			os.RemoveAll(layout)
			if planted == "a symbolic link" {
				os.Symlink(elsewhere, layout)
			} else {
				writeFile(t, layout, []byte("x\n"))
			}
			if devs, problems, err := w.read(); err != nil || len(devs) != 0 || !strings.Contains(strings.Join(problems, "\n"), LayoutFolder+" in sync_dir is not a folder") {
				t.Errorf("reading with %s in place of %s: got %d devices, %q, %v; want none read, and it said as a problem", planted, LayoutFolder, len(devs), problems, err)
			}
			if notice := w.laptop.PublishNow(); !strings.Contains(notice, LayoutFolder+" in sync_dir was not a folder but "+planted) {
				t.Errorf("publishing: got %q, want %s in place of %s said", notice, planted, LayoutFolder)
			}
			if got := readFile(t, filepath.Join(elsewhere, "keep")); string(got) != "not antidrift's\n" {
				t.Errorf("what the link pointed at: got %q, want it untouched", got)
			}
			if entries, _ := os.ReadDir(elsewhere); len(entries) != 1 {
				t.Errorf("what the link pointed at: got %d entries, want only its own", len(entries))
			}
			w.this.PublishNow()
			w.desktop.PublishNow()
			devs, problems, err := w.read()
			if err != nil || len(problems) != 0 || len(devs) != 3 {
				t.Fatalf("once they published again: got %d devices, %q, %v; want 3 and nothing said", len(devs), problems, err)
			}
		})
	}
}

// A machine gone bad that makes thousands of files or folders named as
// Syncthing conflict copies costs one sentence a folder, not one a file.
func TestAFloodOfConflictCopiesIsOneSentence(t *testing.T) {
	w := newSyncWorld(t)
	for i := 0; i < 500; i++ {
		writeFile(t, filepath.Join(w.laptop.Folder(), "totals.sync-conflict-"+hex4(i)+".jsonl"), []byte("x\n"))
		os.Mkdir(filepath.Join(w.sync, LayoutFolder, w.desktop.id+".sync-conflict-"+hex4(i)), 0o700)
	}
	devs, problems, _ := w.read()
	text := strings.Join(problems, "\n")
	if len(problems) != 2 || !containsAll(text, "holds 500 files named as a Syncthing conflict copy", w.laptop.id, "and 497 more", "holds 500 folders named as a Syncthing conflict copy") {
		t.Errorf("500 conflict copies in a folder and 500 beside it: got %d problem(s): %q; want one sentence each, naming a few and the count", len(problems), problems)
	}
	for _, d := range devs {
		if !d.OK {
			t.Errorf("device %s beside the conflict copies: got %q, want its record whole", d.Label(), d.Problem)
		}
	}
}
