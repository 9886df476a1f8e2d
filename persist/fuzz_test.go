package persist

// Fuzz targets over whole files (FuzzFastPath in flatjson_test.go covers
// the line decoders). A plain `go test` runs only their seeds; to search:
//
//	go test -run '^$' -fuzz '^FuzzAuditFile$' -fuzztime 5m ./persist/
//	go test -run '^$' -fuzz '^FuzzRawLogFile$' -fuzztime 5m ./persist/

import (
	"bytes"
	"crypto/sha256"
	"encoding/hex"
	"encoding/json"
	"os"
	"path/filepath"
	"reflect"
	"strings"
	"testing"

	"github.com/antidrift/antidrift/service"
)

// readmeChain walks audit.jsonl by docs/audit.md's hash rule, written out again
// with encoding/json, and strict where docs/audit.md's Python is loose: the hash
// must be the line's last member (`"hash":"<64 hex>"}` ends the line), so
// nothing after it escapes the hash. It returns how many lines verify
// before the first that does not, and whether all did.
func readmeChain(data []byte) (entries uint32, ok bool) {
	prev := genesisHash
	for n, raw := range bytes.SplitAfter(data, []byte("\n")) {
		if len(raw) == 0 {
			break
		}
		if !bytes.HasSuffix(raw, []byte("\n")) {
			return entries, false
		}
		line := raw[:len(raw)-1]
		var e struct {
			Seq      uint64 `json:"seq"`
			PrevHash string `json:"prev_hash"`
			Hash     string `json:"hash"`
		}
		if json.Unmarshal(line, &e) != nil || e.Seq != uint64(n+1) || e.PrevHash != prev {
			return entries, false
		}
		i := bytes.LastIndex(line, []byte(`"hash":"`))
		if i < 0 || string(line[i:]) != `"hash":"`+e.Hash+`"}` || len(e.Hash) != 64 || strings.ToLower(e.Hash) != e.Hash {
			return entries, false
		}
		sum := sha256.Sum256(append(append([]byte(prev), line[:i]...), `"hash":""}`...))
		if hex.EncodeToString(sum[:]) != e.Hash {
			return entries, false
		}
		entries++
		prev = e.Hash
	}
	return entries, true
}

// auditSeeds are audit files: a good chain, and damaged and forged ones.
func auditSeeds(tb testing.TB) [][]byte {
	var good []byte
	prev := genesisHash
	for i := range 3 {
		line, sealed, err := sealSummary(sampleSummary(i), uint64(i), prev)
		if err != nil {
			tb.Fatal(err)
		}
		good = append(good, line...)
		prev = sealed.Hash
	}
	lines := bytes.SplitAfter(good, []byte("\n"))
	first := bytes.TrimSuffix(lines[0], []byte("\n"))
	// docs/audit.md's Python verifies this forgery: a member after the hash is not
	// hashed, and JSON's last duplicate wins, so the sealed "completed"
	// reads "abandoned" — or anything else — without recomputing a hash.
	forged := append(append(first[:len(first)-1:len(first)-1], `,"outcome":"abandoned"}`...), '\n')
	return [][]byte{
		good,
		good[:len(good)-10],                     // torn tail
		append(slicesClone(good), "garbage"...), // garbage tail
		bytes.Join([][]byte{lines[0], []byte("{}\n"), lines[1], lines[2]}, nil),
		append(forged, append(lines[1], lines[2]...)...),
		bytes.ToUpper(good),
		bytes.ReplaceAll(good, []byte("\n"), []byte("\r\n")),
		{}, []byte("\n"), []byte("\n\n"), []byte("null\n"), append(slicesClone(lines[0]), lines[0]...),
	}
}

func slicesClone(b []byte) []byte { return append([]byte(nil), b...) }

// Whatever audit.jsonl holds, Open never fails and loses no byte (a torn
// tail is set aside whole), VerifyAudit agrees with docs/audit.md's rule, and a
// new summary is appended after what was there — linked to a good chain.
func FuzzAuditFile(f *testing.F) {
	for _, s := range auditSeeds(f) {
		f.Add(s)
	}
	f.Fuzz(func(t *testing.T, data []byte) {
		dir := existingStateDir(t)
		path := filepath.Join(dir, auditFileName)
		writeFile(t, path, data)
		s, _, err := Open(dir)
		if err != nil {
			t.Fatalf("Open: got %v, want it opened", err)
		}
		defer s.Close()
		kept := readFile(t, path)
		aside, _ := filepath.Glob(path + ".torn-*")
		switch len(aside) {
		case 0:
			if !bytes.Equal(kept, data) {
				t.Fatalf("audit.jsonl on Open: got %q, want it unchanged, %q", kept, data)
			}
		case 1:
			if tail := readFile(t, aside[0]); !bytes.Equal(append(slicesClone(kept), tail...), data) || bytes.Contains(tail, []byte("\n")) {
				t.Fatalf("%q: got it split into %q + %q, want the kept part and a tail of one unfinished line", data, kept, tail)
			}
		default:
			t.Fatalf("set aside: got %v, want at most one file", aside)
		}

		wantN, wantOK := readmeChain(kept)
		r := s.VerifyAudit()
		if r.OK != wantOK || r.Entries != wantN {
			t.Fatalf("VerifyAudit: got %+v; want ok %v after %d entries, docs/audit.md's rule\n%q", r, wantOK, wantN, kept)
		}

		sealed, err := s.AppendAudit(sampleSummary(99))
		if err != nil {
			t.Fatalf("AppendAudit: got %v, want success", err)
		}
		after := readFile(t, path)
		if !bytes.HasPrefix(after, kept) {
			t.Fatalf("audit.jsonl after an append: got %q, want it to start with what was there, %q", after, kept)
		}
		if wantOK {
			n, ok := readmeChain(after)
			if !ok || n != wantN+1 || sealed.Seq != uint64(n) {
				t.Fatalf("after an append to a good chain: got ok %v, %d entries, seq %d; want ok, %d entries, seq %d", ok, n, sealed.Seq, wantN+1, wantN+1)
			}
		}
	})
}

// TestREADMEForgeryIsRejected: the line docs/audit.md's Python accepts with a
// member after its hash fails VerifyAudit.
func TestREADMEForgeryIsRejected(t *testing.T) {
	s := openStore(t, existingStateDir(t))
	writeFile(t, filepath.Join(s.Dir(), auditFileName), auditSeeds(t)[4])
	if r := s.VerifyAudit(); r.OK || r.Entries != 0 || !strings.Contains(r.Problem, "line 1") {
		t.Fatalf("VerifyAudit of a line with a member after its hash: got %+v, want not OK, no entries, line 1 named", r)
	}
}

// Whatever a raw log holds, replay returns exactly the lines that are
// events (as encoding/json reads them), in order, and replays the same
// before and after the next append — which lands on a line of its own
// after every byte that was there, and is replayed last.
func FuzzRawLogFile(f *testing.F) {
	var good []byte
	for _, e := range sampleEvents() {
		line, _ := json.Marshal(e)
		good = append(append(good, line...), '\n')
	}
	for _, s := range [][]byte{
		good, good[:len(good)-7], good[:len(good)-1], append(slicesClone(good), "{\"at_unix_millis\":1"...),
		[]byte("{}\nnull\n[]\n\"x\"\n"), []byte("\n\n\n"), bytes.ReplaceAll(good, []byte("\n"), []byte("\r\n")),
		append([]byte(`{"title":"`+strings.Repeat("x", 70000)+`"}`), '\n'), []byte("\x00\xff\n"),
	} {
		f.Add(s)
	}
	const id = "0197a3c4-5e6f-7a8b-9c0d-000000000042"
	f.Fuzz(func(t *testing.T, data []byte) {
		dir := existingStateDir(t)
		s := openStore(t, dir)
		if err := os.Mkdir(filepath.Join(dir, sessionsDirName), privateDirMode); err != nil {
			t.Fatal(err)
		}
		path := s.raw.path(id)
		writeFile(t, path, data)

		// The complete lines that are events, and a last line that is a
		// whole event short of its newline (the next append ends it).
		var want []service.FocusEvent
		for _, raw := range bytes.SplitAfter(data, []byte("\n")) {
			var e service.FocusEvent
			complete := bytes.HasSuffix(raw, []byte("\n"))
			if (complete || bytes.HasSuffix(raw, []byte("}"))) && json.Unmarshal(raw, &e) == nil {
				want = append(want, e)
			}
		}
		got, err := s.ReplayEvents(id)
		if err != nil {
			t.Fatalf("ReplayEvents: got %v, want success", err)
		}
		if len(got) != len(want) || (len(got) > 0 && !reflect.DeepEqual(got, want)) {
			t.Fatalf("ReplayEvents: got %+v\nwant %+v", got, want)
		}

		next := sampleEvents()[0]
		if err := s.AppendEvent(id, next); err != nil {
			t.Fatal(err)
		}
		after := readFile(t, path)
		if !bytes.HasPrefix(after, data) {
			t.Fatalf("the raw log after an append: got %q, want it to start with what was there, %q", after, data)
		}
		got, err = s.ReplayEvents(id)
		if err != nil || len(got) != len(want)+1 || got[len(got)-1] != next || (len(want) > 0 && !reflect.DeepEqual(got[:len(want)], want)) {
			t.Fatalf("after an append: got %d events, last %+v, %v; want %d, the last %+v", len(got), got[len(got)-1:], err, len(want)+1, next)
		}
	})
}
