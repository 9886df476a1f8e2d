package persist

import (
	"bytes"
	"crypto/ed25519"
	"crypto/sha256"
	"encoding/base64"
	"encoding/hex"
	"encoding/json"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/antidrift/antidrift/service"
)

// forgedLine is a line another machine (or a program) appends to a copy:
// the next seq, chained to the copy's last line by the hash rule, signed
// by key (nil: with no signature at all), so only the key tells it apart.
func forgedLine(t *testing.T, copyData []byte, key ed25519.PrivateKey, id, form string) []byte {
	t.Helper()
	lines := bytes.Split(bytes.TrimSuffix(copyData, []byte("\n")), []byte("\n"))
	var last auditKeys
	if err := decodeAuditKeys(lines[len(lines)-1], &last); err != nil {
		t.Fatal(err)
	}
	sealed, _, err := sealSummary(service.Summary{SessionID: "forged", NextAction: "deep work on the thesis", Outcome: service.OutcomeCompleted,
		StartedUnix: 1_800_000_000 + 86400, EndedUnix: 1_800_000_000 + 86400 + 6*3600, TimeboxSecs: 6 * 3600,
		Buckets: []service.Bucket{{Class: "Emacs", Seconds: 6 * 3600}}}, last.Seq, last.Hash)
	if err != nil {
		t.Fatal(err)
	}
	sealed = bytes.TrimSuffix(sealed, []byte("\n"))
	if key != nil {
		sealed = signLine(key, id, form, sealed)
	}
	return append(sealed, '\n')
}

func otherKey(t *testing.T) ed25519.PrivateKey {
	t.Helper()
	_, k, err := ed25519.GenerateKey(nil)
	if err != nil {
		t.Fatal(err)
	}
	return k
}

// The device key is made once, 0600, with a version; read again it is the
// same key; a damaged file is set aside and a new key made, said; a file
// of a later version is refused and left as it is; a link in its place is
// never followed.
func TestDeviceKeyIsMadeOnce(t *testing.T) {
	st := openStore(t, newStateDir(t))
	k1, problem, err := st.DeviceKey()
	if err != nil || problem != "" || len(k1) != ed25519.PrivateKeySize {
		t.Fatalf("DeviceKey: got %d-byte key, problem %q, %v; want a key and no problem", len(k1), problem, err)
	}
	path := filepath.Join(st.dir, deviceKeyFileName)
	assertMode(t, path, 0o600)
	var f map[string]any
	if err := json.Unmarshal(readFile(t, path), &f); err != nil || f["version"] != float64(deviceKeyVersion) || f["algorithm"] != "ed25519" {
		t.Fatalf("%s: got %v (%v), want version %d and algorithm ed25519", deviceKeyFileName, f, err, deviceKeyVersion)
	}
	if k2, _, _ := st.DeviceKey(); !k1.Equal(k2) {
		t.Fatal("DeviceKey a second time: got another key, want the same")
	}
	if pub := NewReader(st.dir).PublicKey(); !pub.Equal(k1.Public()) {
		t.Fatalf("Reader.PublicKey: got %x, want the key's public half", pub)
	}

	later := []byte(`{"version":2,"algorithm":"ed25519","seed":"","public_key":""}` + "\n")
	writeFile(t, path, later)
	if _, _, err := st.DeviceKey(); err == nil || !containsAll(err.Error(), "version 2", "later antidrift", "update antidrift") {
		t.Fatalf("DeviceKey with a later file: got %v, want it refused as a later antidrift's", err)
	}
	if got := readFile(t, path); !bytes.Equal(got, later) {
		t.Fatalf("the later file: got %q, want it left as it was", got)
	}

	writeFile(t, path, []byte("{not json"))
	k3, problem, err := st.DeviceKey()
	if err != nil || k3.Equal(k1) || !containsAll(problem, "set aside", "new signing key", "forget-key") {
		t.Fatalf("DeviceKey with a damaged file: got %v, problem %q; want a new key, the old file set aside and re-pairing said", err, problem)
	}
	if aside, _ := filepath.Glob(path + ".damaged-*"); len(aside) != 1 {
		t.Fatalf("set aside: got %v, want one file", aside)
	}

	elsewhere := filepath.Join(t.TempDir(), "key")
	writeFile(t, elsewhere, readFile(t, path))
	os.Remove(path)
	if err := os.Symlink(elsewhere, path); err != nil {
		t.Fatal(err)
	}
	if _, _, err := st.DeviceKey(); err == nil || !strings.Contains(err.Error(), "symbolic link") {
		t.Fatalf("DeviceKey through a link: got %v, want the link refused", err)
	}
}

// Every published line carries a signature by the device's key, and
// device.json carries the public key and is signed by it.
func TestEveryPublishedLineIsSigned(t *testing.T) {
	for _, titles := range []bool{true, false} {
		st, p := publishedStore(t, 3, titles)
		key, _, _ := st.DeviceKey()
		pub := key.Public().(ed25519.PublicKey)
		form, file := formTotals, PublishedTotals
		if titles {
			form, file = formChain, PublishedChain
		}
		data := readFile(t, filepath.Join(p.Folder(), file))
		n := 0
		for _, line := range bytes.Split(bytes.TrimSuffix(data, []byte("\n")), []byte("\n")) {
			n++
			if _, ok := signedBy(pub, p.id, form, line); !ok {
				t.Fatalf("titles=%v: line %d: got it not signed by the device's key, want it signed\n%s", titles, n, line)
			}
			if _, ok := signedBy(pub, p.id, formOther(form), line); ok {
				t.Fatalf("titles=%v: line %d: got its signature good for the other form too, want it bound to its form", titles, n)
			}
		}
		meta := readFile(t, filepath.Join(p.Folder(), PublishedDevice))
		var m publishedDevice
		json.Unmarshal(meta, &m)
		if n != 3 || m.Layout != 2 || m.PublicKey != base64.StdEncoding.EncodeToString(pub) || !deviceFileSignedBy(pub, meta) {
			t.Fatalf("titles=%v: got %d lines, device.json %s; want 3 lines, layout 2, the public key, signed", titles, n, meta)
		}
		if deviceFileSignedBy(pub, bytes.Replace(meta, []byte(`"laptop"`), []byte(`"lapdog"`), 1)) {
			t.Fatal("an edited device.json: got its signature good, want it refused")
		}
	}
}

func formOther(form string) string {
	if form == formChain {
		return formTotals
	}
	return formChain
}

// A forged line appended to another machine's copy — correctly chained,
// signed by another key or by none — is named with the device and the
// line and left out; the machine's real sessions still count, its real
// head (never the forged one) is remembered, and once the real machine
// republishes, everything counts again with nothing said.
func TestAForgedLineIsLeftOutAndTheRealRecordStays(t *testing.T) {
	for _, forger := range []string{"another key", "no signature"} {
		t.Run(forger, func(t *testing.T) {
			st, p := publishedStore(t, 3, false)
			reader := openStore(t, newStateDir(t))
			devs, _, _ := ReadShared(p.syncDir, LoadTrust(reader.dir))
			if len(devs) != 1 || !devs[0].OK || !containsAll(devs[0].Pinned, `"laptop"`, "first seen", "pinned") {
				t.Fatalf("the first reading: got %+v, want laptop OK, its key said pinned", devs)
			}
			reader.RememberDevices(devs, nil)
			if devs, _, _ := ReadShared(p.syncDir, LoadTrust(reader.dir)); devs[0].Pinned != "" {
				t.Fatalf("the second reading: got pinned said again (%q), want it said only the first time", devs[0].Pinned)
			}

			var key ed25519.PrivateKey
			if forger == "another key" {
				key = otherKey(t)
			}
			path := filepath.Join(p.Folder(), PublishedTotals)
			real := readFile(t, path)
			writeFile(t, path, append(slicesClone(real), forgedLine(t, real, key, p.id, formTotals)...))
			devs, _, _ = ReadShared(p.syncDir, LoadTrust(reader.dir))
			d := devs[0]
			if d.OK || len(d.Summaries) != 3 || d.Head.Seq != 3 || !containsAll(d.Problem, `"laptop"`, p.id, "line 4 (seq 4)", "not signed by its key", "left out", "3 signed session(s)") {
				t.Fatalf("with a forged line: got OK %v, %d sessions to seq %d, problem %q; want not OK, the 3 real ones counted, line 4 (seq 4) of \"laptop\" named not signed and left out",
					d.OK, len(d.Summaries), d.Head.Seq, d.Problem)
			}
			for _, s := range d.Summaries {
				if s.SessionID == "forged" {
					t.Fatal("the forged session: got it counted, want it left out")
				}
			}
			reader.RememberDevices(devs, nil)
			if seen, _ := NewReader(reader.dir).SeenHead(p.id, formTotals); seen.Seq != 3 {
				t.Fatalf("the remembered head: got seq %d, want 3 (never the forged line)", seen.Seq)
			}

			// The real machine seals again and republishes: its copy
			// replaces the forged one, and every line counts.
			sealSome(t, st, 1, time.Unix(1_900_000_000, 0))
			if notice := p.PublishNow(); !strings.Contains(notice, "not signed with this machine's key") {
				t.Fatalf("republishing: got %q, want the forged line in this machine's folder said", notice)
			}
			devs, problems, _ := ReadShared(p.syncDir, LoadTrust(reader.dir))
			d = devs[0]
			if !d.OK || len(d.Summaries) != 4 || len(problems) != 0 {
				t.Fatalf("after it republished: got OK %v, %d sessions, problem %q, problems %q; want all 4 real sessions and nothing said", d.OK, len(d.Summaries), d.Problem, problems)
			}
			if seen, _ := NewReader(reader.dir).SeenHead(p.id, formTotals); true {
				if b, rewritten := Behind(d, seen); b != "" || rewritten {
					t.Fatalf("after it republished: got %q, want no rewritten or truncated copy said", b)
				}
			}
			// Removing the forged line (without a republish) works as well.
			writeFile(t, path, append(slicesClone(readFile(t, path)), forgedLine(t, readFile(t, path), key, p.id, formTotals)...))
			writeFile(t, path, bytes.Join(bytes.SplitAfter(readFile(t, path), []byte("\n"))[:4], nil))
			if devs, _, _ := ReadShared(p.syncDir, LoadTrust(reader.dir)); !devs[0].OK || len(devs[0].Summaries) != 4 {
				t.Fatalf("after the forged line was removed: got %+v, want all 4 counted", devs[0])
			}
		})
	}
}

// A forged line put between real lines is left out, and the real lines on
// both sides of it still chain and count.
func TestAForgedLineInTheMiddleCostsNothing(t *testing.T) {
	_, p := publishedStore(t, 3, true)
	path := filepath.Join(p.Folder(), PublishedChain)
	lines := bytes.SplitAfter(readFile(t, path), []byte("\n"))
	forged := forgedLine(t, bytes.Join(lines[:2], nil), otherKey(t), p.id, formChain)
	writeFile(t, path, bytes.Join([][]byte{lines[0], lines[1], forged, lines[2]}, nil))
	devs, _, _ := ReadShared(p.syncDir, LoadTrust(t.TempDir()))
	if d := devs[0]; d.OK || len(d.Summaries) != 3 || !containsAll(d.Problem, "line 3 (seq 3)", "not signed") || strings.Contains(d.Problem, "does not verify") {
		t.Fatalf("got OK %v, %d sessions, problem %q; want line 3 named not signed, the 3 real sessions counted, the chain of the rest intact", d.OK, len(d.Summaries), d.Problem)
	}
}

// A folder that carries another key than the one pinned for its device
// is left out, naming both keys and the command that re-pairs; after
// forget-key, its key is pinned anew and its sessions count.
func TestAnotherKeyIsLeftOutUntilRepaired(t *testing.T) {
	_, p := publishedStore(t, 2, false)
	reader := t.TempDir()
	if devs, _, _ := ReadShared(p.syncDir, LoadTrust(reader)); !devs[0].OK {
		t.Fatalf("the first reading: got %+v, want OK", devs[0])
	}
	oldKey := LoadTrust(reader).pins[p.id].Key
	// The same machine reinstalled: its device.json kept, a new key.
	os.Remove(filepath.Join(p.store.dir, deviceKeyFileName))
	if notice := p.PublishNow(); !strings.Contains(notice, "not signed with this machine's key") {
		t.Fatalf("publishing with a new key over the old copy: got %q, want the old lines said not its own, and replaced", notice)
	}
	devs, _, _ := ReadShared(p.syncDir, LoadTrust(reader))
	if d := devs[0]; d.OK || len(d.Summaries) != 0 || !containsAll(d.Problem, `"laptop"`, Fingerprint(oldKey), "was pinned for it", "antidrift forget-key "+p.id, "left out") {
		t.Fatalf("with another key: got OK %v, %d sessions, problem %q; want it left out, the pinned key %s and forget-key named", d.OK, len(d.Summaries), d.Problem, Fingerprint(oldKey))
	}
	if old, err := ForgetKey(reader, p.id); err != nil || !old.Equal(oldKey) {
		t.Fatalf("ForgetKey: got %x, %v; want the old key back", old, err)
	}
	devs, _, _ = ReadShared(p.syncDir, LoadTrust(reader))
	if d := devs[0]; !d.OK || len(d.Summaries) != 2 || !strings.Contains(d.Pinned, "first seen") {
		t.Fatalf("after forget-key: got %+v, want the new key pinned (said) and both sessions counted", d)
	}
	if _, err := ForgetKey(reader, "laptop"); err == nil {
		t.Fatal("ForgetKey with a name: got it accepted, want a device id asked for")
	}
	assertMode(t, filepath.Join(reader, pinsFileName), 0o600)
}

// This machine's own folder is held to its own key: a forged line
// appended there is named and left out by a reader here, and replaced by
// the next pass of the publisher, which says so instead of blaming a
// copied state directory.
func TestOurOwnFolderIsHeldToOurKey(t *testing.T) {
	st, p := publishedStore(t, 2, true)
	path := filepath.Join(p.Folder(), PublishedChain)
	real := readFile(t, path)
	writeFile(t, path, append(slicesClone(real), forgedLine(t, real, otherKey(t), p.id, formChain)...))
	devs, _, _ := ReadShared(p.syncDir, LoadTrust(st.dir))
	if d := devs[0]; d.OK || d.Pinned != "" || len(d.Summaries) != 2 || !containsAll(d.Problem, "line 3 (seq 3)", "not signed") {
		t.Fatalf("our own folder with a forged line: got %+v, want line 3 named not signed, our 2 sessions, no pin (it is our own key)", d)
	}
	if !NewReader(st.dir).CopyIsOurs(devs[0]) {
		t.Fatal("CopyIsOurs with a forged line beside our own: got false (a copied state directory), want true")
	}
	// device.json replaced with one carrying another key: not ours.
	meta := readFile(t, filepath.Join(p.Folder(), PublishedDevice))
	var m publishedDevice
	json.Unmarshal(meta, &m)
	k := otherKey(t)
	m.PublicKey, m.Sig = base64.StdEncoding.EncodeToString(k.Public().(ed25519.PublicKey)), ""
	forged, _ := json.Marshal(m)
	writeFile(t, filepath.Join(p.Folder(), PublishedDevice), append(signDeviceFile(k, forged), '\n'))
	devs, _, _ = ReadShared(p.syncDir, LoadTrust(st.dir))
	if d := devs[0]; d.OK || len(d.Summaries) != 0 || !containsAll(d.Problem, "this machine's folder", "did not write it") {
		t.Fatalf("our own folder with another key: got %+v, want it named not written by this machine", d)
	}
	if notice := p.PublishNow(); !strings.Contains(notice, "not signed with this machine's key") || strings.Contains(notice, "copied state directory") {
		t.Fatalf("the next pass: got %q, want the forged line replaced and said, no copied state directory blamed", notice)
	}
	if got := readFile(t, path); !bytes.Equal(got, real) {
		t.Fatalf("our copy after the pass: got %q, want our own record %q", got, real)
	}
	if devs, problems, _ := ReadShared(p.syncDir, LoadTrust(st.dir)); !devs[0].OK || len(problems) != 0 {
		t.Fatalf("after the pass: got %+v, %q; want our copy whole and nothing said", devs[0], problems)
	}
}

// A folder of layout 1 (no signatures) is named and never read; a
// machine's own layout 1 folder goes when it publishes in layout 2.
func TestTheUnsignedLayoutIsNotRead(t *testing.T) {
	_, p := publishedStore(t, 1, true)
	v1 := filepath.Join(p.syncDir, unsignedLayout)
	other := filepath.Join(v1, "0192aaaa-0000-7000-8000-000000000001")
	own := filepath.Join(v1, p.id)
	for _, dir := range []string{other, own} {
		os.MkdirAll(dir, 0o700)
		writeFile(t, filepath.Join(dir, PublishedDevice), []byte(`{"layout":1}`+"\n"))
		writeFile(t, filepath.Join(dir, PublishedChain), []byte("{}\n"))
	}
	devs, problems, _ := ReadShared(p.syncDir, LoadTrust(t.TempDir()))
	if len(devs) != 1 || !containsAll(strings.Join(problems, "\n"), unsignedLayout, "2 device folder(s) in layout 1", "without signatures", "not read", "Update antidrift") {
		t.Fatalf("got devices %+v, problems %q; want the one of layout 2, and antidrift-v1's 2 folders named unread", devs, problems)
	}
	p.PublishNow()
	if _, err := os.Stat(own); !os.IsNotExist(err) {
		t.Fatalf("our own layout 1 folder after a pass: got %v, want it removed", err)
	}
	if _, err := os.Stat(filepath.Join(other, PublishedChain)); err != nil {
		t.Fatalf("another machine's layout 1 folder: got %v, want it left alone", err)
	}
}

// The pins file is append-only: a pin made by one reader is kept when
// another appends its own, the first pin of a device wins until forgotten,
// and a line of a later version keeps its device from being pinned anew.
func TestPinsAreAppendedAndTheFirstWins(t *testing.T) {
	dir := t.TempDir()
	id := "0192aaaa-0000-7000-8000-000000000002"
	a, b := otherKey(t).Public().(ed25519.PublicKey), otherKey(t).Public().(ed25519.PublicKey)
	t1, t2 := LoadTrust(dir), LoadTrust(dir)
	t1.keyFor(id, a)
	t2.keyFor(id, b) // a second reader that had not seen the first's pin
	if p, _ := LoadTrust(dir).Pinned(id); !p.Key.Equal(a) {
		t.Fatalf("the pin: got %s, want the first, %s", Fingerprint(p.Key), Fingerprint(a))
	}
	if _, mismatch, _ := LoadTrust(dir).keyFor(id, b); !strings.Contains(mismatch, Fingerprint(a)) {
		t.Fatalf("the second key: got %q, want it refused against the first", mismatch)
	}
	appendPinLine(dir, pinLine{Version: 2, Event: "pin", DeviceID: id})
	if _, mismatch, _ := LoadTrust(dir).keyFor(id, a); !strings.Contains(mismatch, "later format") {
		t.Fatalf("after a pin of a later version: got %q, want the device held back, naming the later format", mismatch)
	}
}

// fuzzSeed and fuzzID are the key and device id of the signed seeds in
// testdata/fuzz/FuzzReadDeviceFolder, so they verify run after run.
var fuzzSeed = bytes.Repeat([]byte{7}, ed25519.SeedSize)

const fuzzID = "0192aaaa-0000-7000-8000-00000000f022"

// fuzzMachine is a state directory with the fuzz seeds' id and key.
func fuzzMachine(tb testing.TB) *Store {
	dir := existingStateDir(tb)
	key := ed25519.NewKeyFromSeed(fuzzSeed)
	idFile, _ := json.Marshal(deviceFile{DeviceID: fuzzID})
	keyFile, _ := json.Marshal(deviceKeyFile{Version: 1, Algorithm: "ed25519", Seed: base64.StdEncoding.EncodeToString(fuzzSeed),
		PublicKey: base64.StdEncoding.EncodeToString(key.Public().(ed25519.PublicKey))})
	os.WriteFile(filepath.Join(dir, deviceFileName), idFile, 0o600)
	os.WriteFile(filepath.Join(dir, deviceKeyFileName), keyFile, 0o600)
	return openStore(tb, dir)
}

// The layout's reader with its signature layer takes any bytes without
// panicking, never calls a copy good that is not wholly authentic and
// chained, and never counts a session whose line the pinned key did not
// sign, itself or through a later line whose hash chain reaches it. Seeds: the code's below, and
// testdata/fuzz/FuzzReadDeviceFolder (forged lines, another key, an
// edited device.json). To search:
//
//	go test -run '^$' -fuzz '^FuzzReadDeviceFolder$' -fuzztime 5m ./persist/
func FuzzReadDeviceFolder(f *testing.F) {
	st := fuzzMachine(f)
	sync := f.TempDir()
	for i, titles := range []bool{true, false} {
		sealSome(&testing.T{}, st, 1+i, time.Unix(1_800_000_000, 0))
		p := NewPublisher(st, sync, fuzzID, "laptop", titles, func(string) {})
		p.PublishNow()
		meta, _ := os.ReadFile(filepath.Join(p.Folder(), PublishedDevice))
		var m publishedDevice
		json.Unmarshal(meta, &m)
		chain, _ := os.ReadFile(filepath.Join(p.Folder(), m.File))
		f.Add(fuzzID, meta, chain)
	}
	f.Add("x", []byte(`{"layout":2}`), []byte("{}\n"))
	f.Add(fuzzID, []byte(`{"layout":2,"device_id":"`+fuzzID+`","form":"chain","file":"chain.jsonl","device_name":"\u001b]0;x\u0007","sig":""}`), []byte(""))
	pub := ed25519.NewKeyFromSeed(fuzzSeed).Public().(ed25519.PublicKey)
	f.Fuzz(func(t *testing.T, folder string, meta, chain []byte) {
		trust := &Trust{pins: map[string]Pin{fuzzID: {Key: pub}}, blocked: map[string]bool{}, now: time.Now}
		d := ReadDeviceFolder(folder, meta, chain, trust)
		if d.OK != (d.Problem == "") {
			t.Fatalf("OK %v with problem %q: got both or neither, want OK exactly when there is no problem", d.OK, d.Problem)
		}
		// What the documented rules authenticate, worked out apart from
		// the reader: a well-formed line (its hash matches its bytes) is
		// authentic when the pinned key signed it, or signed a later line
		// whose prev_hash chain reaches it (the signature covers the hash).
		prevOf := map[string]string{}
		authentic := map[string]bool{}
		var signedHashes []string
		var stripped []byte
		all := true
		for _, line := range bytes.SplitAfter(chain, []byte("\n")) {
			if len(line) == 0 {
				continue
			}
			sealed, signed := docSigned(pub, folder, d.Form, bytes.TrimSuffix(line, []byte("\n")))
			prev, hash, sound := docHashed(sealed)
			if !bytes.HasSuffix(line, []byte("\n")) || !sound {
				all = false
				continue
			}
			prevOf[hash] = prev
			if signed {
				signedHashes = append(signedHashes, hash)
			}
			stripped = append(append(stripped, sealed...), '\n')
		}
		for _, h := range signedHashes {
			for ok := true; ok && !authentic[h]; h, ok = prevOf[h], prevOf[h] != "" {
				authentic[h] = true
			}
		}
		for _, s := range d.Summaries {
			if !authentic[s.Hash] {
				t.Fatalf("session seq %d (hash %s): got it counted, want only lines the pinned key signed, itself or through a later line", s.Seq, s.Hash)
			}
		}
		if d.OK && (!all || len(d.Summaries) != len(prevOf) || !verifyChainBytes(stripped).OK) {
			t.Fatal("a copy not wholly authentic and chained: got it taken whole (OK), want what is not left out")
		}
		if d.OK && folder != fuzzID {
			t.Fatalf("folder %q: got it taken, want only the pinned device's folder", folder)
		}
		if strings.ContainsFunc(d.Name, func(r rune) bool { return r < 0x20 || r == 0x7f }) {
			t.Fatalf("the label: got %q, want no control character", d.Name)
		}
	})
}

// stripSigs is a published copy with each line's signature taken out: the
// sealed lines it carries.
func stripSigs(t *testing.T, data []byte) []byte {
	t.Helper()
	var out []byte
	for _, line := range bytes.SplitAfter(data, []byte("\n")) {
		if len(line) == 0 {
			continue
		}
		body, _, ok := splitSignedLine(bytes.TrimSuffix(line, []byte("\n")))
		if !ok {
			t.Fatalf("line %q: got no signature, want one", line)
		}
		out = append(append(out, body...), "}\n"...)
	}
	return out
}

// docSigned is docs/sync.md's signature rule written out again, apart
// from sync_signed.go: the line ends in `,"sig":"<base64>"}`; taking that key
// out leaves the sealed line; the signature is Ed25519 over
// "antidrift-v2 line\n" + device id + "\n" + form + "\n" + the sealed line.
func docSigned(pub ed25519.PublicKey, id, form string, line []byte) ([]byte, bool) {
	i := bytes.LastIndex(line, []byte(`,"sig":"`))
	if i < 0 || len(line) < i+len(`,"sig":"`)+2 || !bytes.HasSuffix(line, []byte(`"}`)) {
		return nil, false
	}
	sig, err := base64.RawStdEncoding.DecodeString(string(line[i+len(`,"sig":"`) : len(line)-2]))
	if err != nil {
		return nil, false
	}
	sealed := append(slicesClone(line[:i]), '}')
	return sealed, ed25519.Verify(pub, []byte("antidrift-v2 line\n"+id+"\n"+form+"\n"+string(sealed)), sig)
}

// docHashed checks a sealed line by docs/audit.md's hash rule, written out
// apart: the line ends in "hash":"<64 hex>"}, and that hash is the SHA-256
// of prev_hash and the line with the hash emptied.
func docHashed(sealed []byte) (prev, hash string, ok bool) {
	var k struct {
		PrevHash string `json:"prev_hash"`
		Hash     string `json:"hash"`
	}
	if sealed == nil || json.Unmarshal(sealed, &k) != nil || len(k.Hash) != 64 {
		return "", "", false
	}
	i := bytes.LastIndex(sealed, []byte(`"hash":"`))
	if i < 0 || string(sealed[i:]) != `"hash":"`+k.Hash+`"}` {
		return "", "", false
	}
	sum := sha256.Sum256(append([]byte(k.PrevHash+string(sealed[:i])), `"hash":""}`...))
	return k.PrevHash, k.Hash, hex.EncodeToString(sum[:]) == k.Hash
}
