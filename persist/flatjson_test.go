package persist

import (
	"bytes"
	"encoding/binary"
	"encoding/json"
	"math/rand/v2"
	"reflect"
	"strings"
	"testing"

	"github.com/antidrift/antidrift/service"
)

// FuzzFastPath holds the fast decoders to their promise: whatever they
// accept, encoding/json accepts too and decodes to the same values. (They
// may decline anything; encoding/json then decides.)
func FuzzFastPath(f *testing.F) {
	for _, e := range sampleEvents() {
		line, _ := json.Marshal(e)
		f.Add(line)
	}
	for i := range 3 {
		line, _, _ := sealSummary(sampleSummary(i), uint64(i), genesisHash)
		f.Add(line[:len(line)-1])
	}
	for _, seed := range []string{
		`{}`, ` { "class" : "x" } `, `{"class":null,"available":null}`, `{"CLASS":"x"}`, `{"cl\u0061ss":"x"}`,
		`{"class":"a","class":"b"}`, `{"at_unix_millis":1.5}`, `{"at_unix_millis":-0}`, `{"at_unix_millis":01}`,
		`{"seq":18446744073709551616}`, `{"seq":-1}`, `{"title":"\ud800"}`, "{\"title\":\"\xff\"}", `{"x":[1,{"y":[]}],"class":"c"}`,
		`{"x":tru}`, `{"x":1e}`, `{"x":"\q"}`, `{"class":"x"}}`, `{"class":"x",}`, `[]`, `{"ſeq":1}`, `{"hash":"a"} x`,
	} {
		f.Add([]byte(seed))
	}
	f.Fuzz(func(t *testing.T, line []byte) {
		valid := json.Valid(line)
		if eachMember(line, func(key, value []byte) bool { return true }) && !valid {
			t.Fatalf("the fast scanner on invalid JSON %q: got it accepted, want it declined", line)
		}

		var fast service.FocusEvent
		if fastFocusEvent(line, &fast, newInterner()) {
			var slow service.FocusEvent
			if err := json.Unmarshal(line, &slow); err != nil || !reflect.DeepEqual(fast, slow) {
				t.Fatalf("%q: fast path: got %+v, want %+v as encoding/json reads it (%v)", line, fast, slow, err)
			}
		}

		var fastKeys auditKeys
		if fastAuditKeys(line, &fastKeys) {
			var slow auditKeys
			if err := json.Unmarshal(line, &slow); err != nil || fastKeys != slow {
				t.Fatalf("%q: fast path: got %+v, want %+v as encoding/json reads it (%v)", line, fastKeys, slow, err)
			}
		}
	})
}

// The fast path must actually take the lines persist writes, or replay and
// verify lose their speed. An event with every field set catches a field
// added to service.FocusEvent but not to fastFocusEvent (which then falls
// back to encoding/json: correct, but slow).
func TestFastPathTakesWhatPersistWrites(t *testing.T) {
	var full service.FocusEvent
	fields := reflect.ValueOf(&full).Elem()
	for i := range fields.NumField() {
		if name := fields.Type().Field(i).Name; name == "Version" || name == "Task" {
			// Only a MarkTask line has them, one a session: encoding/json
			// reads it (TestATaskLineIsReadBack), the fast path need not.
			continue
		}
		switch f := fields.Field(i); f.Kind() {
		case reflect.String:
			f.SetString("set " + fields.Type().Field(i).Name)
		case reflect.Int64:
			f.SetInt(1_780_000_000_000 + int64(i))
		case reflect.Bool:
			f.SetBool(true)
		default:
			t.Fatalf("FocusEvent.%s: got kind %s, want one the fast path has a setter for", fields.Type().Field(i).Name, f.Kind())
		}
	}
	plainTitle := sampleEvents()[0]
	for _, e := range []service.FocusEvent{full, plainTitle} {
		line, _ := json.Marshal(e)
		var got service.FocusEvent
		if !fastFocusEvent(line, &got, nil) || got != e {
			t.Errorf("fast path on %s: got %+v, want %+v", line, got, e)
		}
	}
	line, sealed, err := sealSummary(sampleSummary(1), 0, genesisHash)
	if err != nil {
		t.Fatal(err)
	}
	var keys auditKeys
	want := auditKeys{Seq: 1, PrevHash: genesisHash, SessionID: sealed.SessionID, Hash: sealed.Hash}
	if !fastAuditKeys([]byte(strings.TrimSuffix(string(line), "\n")), &keys) || keys != want {
		t.Errorf("fast path on an audit line: got %+v, want %+v", keys, want)
	}
}

// plainWord must agree with plainStringByte on every word: any byte value
// at any position among plain neighbours (ASCII and UTF-8 ones, which
// borrow and carry differently), and random words, mostly plain.
func TestPlainWordAgreesWithTheTable(t *testing.T) {
	check := func(word []byte) {
		t.Helper()
		want := true
		for _, c := range word {
			want = want && plainStringByte[c]
		}
		if got := plainWord(binary.LittleEndian.Uint64(word)); got != want {
			t.Fatalf("plainWord(% x): got %v, want %v", word, got, want)
		}
	}
	for _, filler := range []byte{'a', ' ', '#', '[', ']', 0x80, 0xc3, 0xff} {
		for pos := range 8 {
			for c := range 256 {
				word := bytes.Repeat([]byte{filler}, 8)
				word[pos] = byte(c)
				check(word)
			}
		}
	}
	rng := rand.New(rand.NewPCG(1, 2))
	word := make([]byte, 8)
	for range 1_000_000 {
		for i := range word {
			word[i] = byte(0x20 + rng.IntN(0xe0)) // plain but for '"' and '\\'
			if rng.IntN(16) == 0 {
				word[i] = byte(rng.IntN(256))
			}
		}
		check(word)
	}
}
