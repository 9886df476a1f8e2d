package persist

import (
	"bufio"
	"crypto/ed25519"
	"encoding/base64"
	"encoding/json"
	"fmt"
	"os"
	"path/filepath"
	"testing"

	"github.com/antidrift/antidrift/service"
)

// benchEvents is how many events a replay benchmark op reads, and
// benchEntries how many lines a verify op walks. ns/op divided by these is
// the per-line cost; the targets are 1M events in ~1 s and 100k entries in
// well under 0.5 s.
const (
	benchEvents  = 100_000
	benchEntries = 100_000
)

func sampleEvent(i int) service.FocusEvent {
	return service.FocusEvent{
		AtUnixMillis: 1_780_000_000_000 + int64(i)*1500,
		Class:        "firefox",
		Instance:     "Navigator",
		Title:        fmt.Sprintf("antidrift design review — tab %d — Mozilla Firefox", i%37),
		Available:    true,
	}
}

func sampleSummary(i int) service.Summary {
	return service.Summary{
		SessionID:        fmt.Sprintf("0197a3c4-5e6f-7a8b-9c0d-%012d", i),
		NextAction:       "write the persist package",
		SuccessCondition: "go test ./persist passes",
		Outcome:          service.OutcomeCompleted,
		Enforcement:      service.LevelWarn,
		StartedUnix:      1_780_000_000 + int64(i)*3600,
		EndedUnix:        1_780_001_500 + int64(i)*3600,
		TimeboxSecs:      1500,
		SwitchCount:      12,
		DriftSeconds:     40,
		Buckets: []service.Bucket{
			{Class: "code", Title: "persist - antidrift", Seconds: 1200},
			{Class: "firefox", Title: "encoding/json - Go Packages", Seconds: 260},
			{Class: "", Title: "(evidence unavailable)", Seconds: 40},
		},
	}
}

// writeRawLog writes n events straight to the session's file, without the
// per-line fsync, to set up big logs quickly.
func writeRawLog(tb testing.TB, s *Store, id string, n int) {
	tb.Helper()
	if err := os.MkdirAll(s.raw.dir, privateDirMode); err != nil {
		tb.Fatal(err)
	}
	f, err := os.OpenFile(s.raw.path(id), os.O_CREATE|os.O_WRONLY|os.O_TRUNC, privateFileMode)
	if err != nil {
		tb.Fatal(err)
	}
	w := bufio.NewWriter(f)
	for i := range n {
		line, _ := json.Marshal(sampleEvent(i))
		w.Write(append(line, '\n'))
	}
	if err := w.Flush(); err != nil {
		tb.Fatal(err)
	}
	f.Close()
}

// writeAuditChain writes n sealed summaries to dir/audit.jsonl without the
// per-line fsync.
func writeAuditChain(tb testing.TB, dir string, n int) {
	tb.Helper()
	f, err := os.OpenFile(filepath.Join(dir, auditFileName), os.O_CREATE|os.O_WRONLY|os.O_TRUNC, privateFileMode)
	if err != nil {
		tb.Fatal(err)
	}
	w := bufio.NewWriter(f)
	prevSeq, prevHash := uint64(0), genesisHash
	for i := range n {
		line, sealed, err := sealSummary(sampleSummary(i), prevSeq, prevHash)
		if err != nil {
			tb.Fatal(err)
		}
		w.Write(line)
		prevSeq, prevHash = sealed.Seq, sealed.Hash
	}
	if err := w.Flush(); err != nil {
		tb.Fatal(err)
	}
	f.Close()
}

func BenchmarkReplay(b *testing.B) {
	s := openStore(b, newStateDir(b))
	writeRawLog(b, s, "bench", benchEvents)
	b.ResetTimer()
	for b.Loop() {
		events, err := s.ReplayEvents("bench")
		if err != nil || len(events) != benchEvents {
			b.Fatalf("ReplayEvents: got %d events, err %v; want %d", len(events), err, benchEvents)
		}
	}
	b.ReportMetric(float64(b.Elapsed().Nanoseconds())/float64(b.N)/benchEvents, "ns/event")
}

func BenchmarkVerifyAudit(b *testing.B) {
	dir := existingStateDir(b)
	writeAuditChain(b, dir, benchEntries)
	s := openStore(b, dir)
	b.ResetTimer()
	for b.Loop() {
		if r := s.VerifyAudit(); !r.OK || r.Entries != benchEntries {
			b.Fatalf("VerifyAudit: got %+v, want OK with %d entries", r, benchEntries)
		}
	}
	b.ReportMetric(float64(b.Elapsed().Nanoseconds())/float64(b.N)/benchEntries, "ns/entry")
}

func BenchmarkAppendEvent(b *testing.B) {
	s := openStore(b, newStateDir(b))
	e := sampleEvent(1)
	for b.Loop() {
		if err := s.AppendEvent("bench", e); err != nil {
			b.Fatal(err)
		}
	}
	b.StopTimer()
	info, err := os.Stat(s.raw.path("bench"))
	if err != nil {
		b.Fatal(err)
	}
	b.ReportMetric(float64(info.Size())/float64(b.N), "B/event")
}

// BenchmarkReadSignedCopy reads another device's published copy of
// benchEntries sessions: each line's signature checked (Ed25519) and the
// chain walked over them. ns/op / benchEntries is the per-line cost of
// the signature layer with the layout reader, on every core it may use.
func BenchmarkReadSignedCopy(b *testing.B) {
	st := openStore(b, newStateDir(b))
	id, _, _ := st.DeviceID()
	key, _, _ := st.DeviceKey()
	var audit []byte
	prev, prevHash := uint64(0), genesisHash
	for i := range benchEntries {
		line, sealed, err := sealSummary(sampleSummary(i), prev, prevHash)
		if err != nil {
			b.Fatal(err)
		}
		audit = append(audit, line...)
		prev, prevHash = sealed.Seq, sealed.Hash
	}
	copyData, _, _, problem := publishedForm(audit, false, key, id)
	if problem != "" {
		b.Fatal(problem)
	}
	meta, _ := json.Marshal(publishedDevice{Layout: LayoutVersion, DeviceID: id, DeviceName: "laptop", Form: formTotals, File: PublishedTotals, SourceOK: true,
		PublicKey: base64.StdEncoding.EncodeToString(key.Public().(ed25519.PublicKey))})
	meta = signDeviceFile(key, meta)
	trust := LoadTrust(newStateDir(b))
	trust.dir = ""
	b.SetBytes(int64(len(copyData)))
	b.ResetTimer()
	for range b.N {
		if d := ReadDeviceFolder(id, meta, copyData, trust); !d.OK || len(d.Summaries) != benchEntries {
			b.Fatalf("got %v, %d sessions, %q; want all %d", d.OK, len(d.Summaries), d.Problem, benchEntries)
		}
	}
}
