package bench

import (
	"bufio"
	"encoding/json"
	"fmt"
	"io"
	"log/slog"
	"os"
	"path/filepath"
	"testing"
	"time"

	"github.com/antidrift/antidrift/persist"
	"github.com/antidrift/antidrift/service"
)

const replayID = "0197a3c4-5e6f-7a8b-9c0d-000000000001"

// writeRawLog writes n focus events, one JSON line each, exactly as
// persist.Store.AppendEvent encodes them (json.Marshal of the event), but
// buffered and without the per-line fsync, so setting up 1M lines takes a
// second. Titles come from titleOf: -mem-titles distinct ones.
func writeRawLog(b *testing.B, dir, id string, n int, start time.Time) int64 {
	b.Helper()
	if err := os.MkdirAll(filepath.Join(dir, "sessions"), 0o700); err != nil {
		b.Fatal(err)
	}
	f, err := os.OpenFile(filepath.Join(dir, "sessions", id+".jsonl"), os.O_CREATE|os.O_WRONLY|os.O_TRUNC, 0o600)
	if err != nil {
		b.Fatal(err)
	}
	defer f.Close()
	w := bufio.NewWriter(f)
	at := start.Add(time.Second).UnixMilli() // one event a second, from 1 s after start
	for i := range n {
		class, instance, title := titleOf(i, *memTitles)
		line, _ := json.Marshal(service.FocusEvent{AtUnixMillis: at + int64(i)*1000, Class: class, Instance: instance,
			Title: title, Available: true, OffTask: i%3 == 0})
		w.Write(append(line, '\n'))
	}
	if err := w.Flush(); err != nil {
		b.Fatal(err)
	}
	info, _ := f.Stat()
	return info.Size()
}

// BenchmarkReplay is crash recovery of a session whose raw log holds
// -replay-events (1M) focus events with -mem-titles (100k) distinct titles:
//
//   - persist.EachEvent: read and decode the log, streaming;
//   - recover: what the daemon does at start with state.json saying a
//     session is active — persist.Open, LoadSnapshot, service.New and
//     Recover, which replays the log through the live accounting code.
//
// The log is on the benchmarks' disk, in the page cache (as after a
// crash-restart; a cold read would add the disk's read time).
func BenchmarkReplay(b *testing.B) {
	dir := filepath.Join(b.TempDir(), "state")
	now := time.Now()
	started := now.Add(-time.Duration(*replayEvents+2) * time.Second)
	size := writeRawLog(b, dir, replayID, *replayEvents, started)
	store, _, err := persist.Open(dir)
	if err != nil {
		b.Fatal(err)
	}
	if err := store.SaveSnapshot(service.Snapshot{Version: service.SnapshotVersion, State: service.StateActive,
		SessionID: replayID, NextAction: "recover", SuccessCondition: "stats rebuilt", TimeboxSecs: 24 * 3600,
		StartedUnixMilli:  started.UnixMilli(),
		DeadlineUnixMilli: now.Add(24 * time.Hour).UnixMilli(), Enforcement: service.LevelObserve,
		AllowedClasses: []string{"Code"}}); err != nil {
		b.Fatal(err)
	}
	b.Run("persist.EachEvent", func(b *testing.B) {
		b.ReportAllocs()
		cpu0 := processCPU()
		for b.Loop() {
			n := 0
			if err := store.EachEvent(replayID, func(service.FocusEvent) { n++ }); err != nil || n != *replayEvents {
				b.Fatalf("replayed %d events: %v", n, err)
			}
		}
		b.ReportMetric(float64(*replayEvents), "events")
		b.ReportMetric(float64(size)/float64(*replayEvents), "B/event")
		b.ReportMetric(b.Elapsed().Seconds()/float64(b.N)*1e6/float64(*replayEvents), "s/1M_events")
		b.ReportMetric((processCPU()-cpu0).Seconds()/float64(b.N)*1e6/float64(*replayEvents), "cpu_s/1M_events")
	})
	store.Close()
	b.Run("recover", func(b *testing.B) {
		b.ReportAllocs()
		log := slog.New(slog.DiscardHandler)
		var switches uint32
		cpu0 := processCPU()
		for b.Loop() {
			st, _, err := persist.Open(dir)
			if err != nil {
				b.Fatal(err)
			}
			snap, _, _, err := st.LoadSnapshot()
			if err != nil {
				b.Fatal(err)
			}
			svc := service.New(service.Options{Store: st, Logger: log})
			if err := svc.Recover(snap); err != nil {
				b.Fatal(err)
			}
			v := svc.View()
			switches = v.SwitchCount
			if v.State != service.StateActive || len(v.Problems) > 0 {
				b.Fatalf("recovered: got State %s, Problems %q, want %s and no problems", v.State, v.Problems, service.StateActive)
			}
			st.Close() // not Shutdown: that appends to the log
		}
		b.ReportMetric(float64(switches), "switches")
		b.ReportMetric(b.Elapsed().Seconds()/float64(b.N)*1e6/float64(*replayEvents), "s/1M_events")
		// CPU time (the process's, the collector's included) beside the
		// wall clock: on a machine shared with other work the wall clock
		// also measures the neighbours.
		b.ReportMetric((processCPU()-cpu0).Seconds()/float64(b.N)*1e6/float64(*replayEvents), "cpu_s/1M_events")
	})
}

// BenchmarkVerifyAudit walks an audit chain of -audit-entries (100k)
// sealed summaries, each with six buckets. The chain is sealed by the
// real persist.Store.AppendAudit on tmpfs (100k fsyncs on disk would take
// minutes), then copied to the benchmarks' disk and verified there.
func BenchmarkVerifyAudit(b *testing.B) {
	shm, err := os.MkdirTemp("/dev/shm", "antidrift-bench-")
	if err != nil {
		b.Fatal(err)
	}
	defer os.RemoveAll(shm)
	st, _, err := persist.Open(shm)
	if err != nil {
		b.Fatal(err)
	}
	for i := range *auditEntries {
		if _, err := st.AppendAudit(summaryOf(i)); err != nil {
			b.Fatal(err)
		}
	}
	st.Close()
	dir := filepath.Join(b.TempDir(), "state")
	if err := os.MkdirAll(dir, 0o700); err != nil {
		b.Fatal(err)
	}
	copyFile(b, filepath.Join(shm, "audit.jsonl"), filepath.Join(dir, "audit.jsonl"))
	st, _, err = persist.Open(dir)
	if err != nil {
		b.Fatal(err)
	}
	defer st.Close()
	info, _ := os.Stat(filepath.Join(dir, "audit.jsonl"))
	var r service.AuditReport
	for b.Loop() {
		r = st.VerifyAudit()
	}
	if !r.OK || int(r.Entries) != *auditEntries {
		b.Fatalf("verify: got %+v, want OK with %d entries", r, *auditEntries)
	}
	b.ReportMetric(float64(r.Entries), "entries")
	b.ReportMetric(float64(info.Size())/float64(r.Entries), "B/entry")
	b.ReportMetric(b.Elapsed().Seconds()/float64(b.N)*1e5/float64(r.Entries), "s/100k_entries")
}

func summaryOf(i int) service.Summary {
	start := time.Now().Add(-time.Duration(*auditEntries-i) * time.Hour).Unix()
	return service.Summary{
		SessionID:        fmt.Sprintf("0197a3c4-5e6f-7a8b-9c0d-%012d", i),
		NextAction:       "write the benchmark section of the design doc",
		SuccessCondition: "BENCHMARKS.md has every figure",
		Outcome:          service.OutcomeCompleted, Enforcement: service.LevelWarn,
		StartedUnix: start, EndedUnix: start + 1500, TimeboxSecs: 1500,
		SwitchCount: 17, DriftSeconds: 95, MinimizeCount: 1,
		Buckets: []service.Bucket{
			{Class: "Code", Title: "persist - antidrift - Visual Studio Code", Seconds: 1100},
			{Class: "firefox", Title: "encoding/json - Go Packages — Mozilla Firefox", Seconds: 210},
			{Class: "kitty", Title: "go test ./... — kitty", Seconds: 90},
			{Class: "Slack", Title: "#antidrift | Slack", Seconds: 60},
			{Class: "", Title: "(evidence unavailable)", Seconds: 25},
			{Class: "firefox", Title: "YouTube — Mozilla Firefox", Seconds: 15},
		},
	}
}

func copyFile(b *testing.B, from, to string) {
	in, err := os.Open(from)
	if err != nil {
		b.Fatal(err)
	}
	defer in.Close()
	out, err := os.OpenFile(to, os.O_CREATE|os.O_WRONLY|os.O_TRUNC, 0o600)
	if err != nil {
		b.Fatal(err)
	}
	if _, err := io.Copy(out, in); err != nil {
		b.Fatal(err)
	}
	if err := out.Close(); err != nil {
		b.Fatal(err)
	}
}

// realisticTitles are window titles as a desktop shows them, for the raw
// log's size: browser tabs, an editor, terminals, chat, mail, a PDF.
var realisticTitles = []struct{ class, instance, title string }{
	{"firefox", "Navigator", "antidrift/antidrift: A focus daemon for the Linux desktop — Mozilla Firefox"},
	{"firefox", "Navigator", "encoding/json - Go Packages — Mozilla Firefox"},
	{"firefox", "Navigator", "Inbox (3) - someone@example.org - Gmail — Mozilla Firefox"},
	{"firefox", "Navigator", "YouTube — Mozilla Firefox"},
	{"Code", "code", "service.go - antidrift - Visual Studio Code"},
	{"Code", "code", "● stats.go - antidrift - Visual Studio Code"},
	{"kitty", "kitty", "go test ./..."},
	{"kitty", "kitty", "~/src/antidrift"},
	{"Slack", "slack", "#antidrift (Channel) - Example Team - Slack"},
	{"thunderbird", "Mail", "Inbox - Mozilla Thunderbird"},
	{"evince", "evince", "ddia.pdf — Designing Data-Intensive Applications"},
	{"Gnome-terminal", "gnome-terminal-server", "vim README.md"},
}

// BenchmarkRawLogSize appends focus events through the real
// persist.Store.AppendEvent (on tmpfs, so the fsyncs are free) and reports
// the file's bytes per event: realistic titles cycling, then the same with
// empty titles, which is the fixed cost of a line (its JSON framing plus
// the timestamp). BenchmarkFocusChange/rawlog reports the real daemon's
// log from its own run.
func BenchmarkRawLogSize(b *testing.B) {
	for _, c := range []struct {
		name  string
		title func(i int) (string, string, string)
	}{
		{"realistic", func(i int) (string, string, string) {
			t := realisticTitles[i%len(realisticTitles)]
			return t.class, t.instance, t.title
		}},
		{"empty-values", func(int) (string, string, string) { return "", "", "" }},
	} {
		b.Run(c.name, func(b *testing.B) {
			shm, err := os.MkdirTemp("/dev/shm", "antidrift-bench-")
			if err != nil {
				b.Fatal(err)
			}
			defer os.RemoveAll(shm)
			st, _, err := persist.Open(shm)
			if err != nil {
				b.Fatal(err)
			}
			defer st.Close()
			const n = 10_000
			var valueBytes int
			at := time.Now().UnixMilli()
			for b.Loop() {
				valueBytes = 0
				for i := range n {
					class, instance, title := c.title(i)
					valueBytes += len(class) + len(instance) + len(title)
					if err := st.AppendEvent(replayID, service.FocusEvent{AtUnixMillis: at + int64(i)*4000,
						Class: class, Instance: instance, Title: title, Available: true}); err != nil {
						b.Fatal(err)
					}
				}
			}
			info, err := os.Stat(filepath.Join(shm, "sessions", replayID+".jsonl"))
			if err != nil {
				b.Fatal(err)
			}
			events := n * b.N
			b.ReportMetric(float64(info.Size())/float64(events), "B/event")
			b.ReportMetric(float64(valueBytes)/n, "value_B/event")
			b.ReportMetric(float64(info.Size())/float64(events)-float64(valueBytes)/n, "framing_B/event")
		})
	}
}

// BenchmarkCoreView is service.View, what each listener calls on every
// change (the D-Bus server to diff the properties, the sd_notify one for
// STATUS=), with a session holding the capped 1,000 buckets: a diagnostic
// for the focus latency, not a figure with a goal.
func BenchmarkCoreView(b *testing.B) {
	shm, err := os.MkdirTemp("/dev/shm", "antidrift-bench-")
	if err != nil {
		b.Fatal(err)
	}
	defer os.RemoveAll(shm)
	st, _, err := persist.Open(shm)
	if err != nil {
		b.Fatal(err)
	}
	defer st.Close()
	svc := service.New(service.Options{Store: st, Logger: slog.New(slog.DiscardHandler)})
	if err := svc.Recover(service.Snapshot{}); err != nil {
		b.Fatal(err)
	}
	if _, err := svc.Start("view", "measured", 3600, "observe", []string{"Code"}); err != nil {
		b.Fatal(err)
	}
	for _, buckets := range []int{2, 100, service.MaxBucketKeys} {
		b.Run(fmt.Sprintf("buckets=%d", buckets), func(b *testing.B) {
			for i := range buckets + 1 {
				class, instance, title := titleOf(i, buckets)
				svc.RecordWindow(service.Window{ID: "7", Class: class, Instance: instance, Title: title, Available: true})
				time.Sleep(1100 * time.Microsecond) // events are stamped in ms: give every bucket time
			}
			const views = 1000
			for b.Loop() {
				for range views {
					svc.View()
				}
			}
			b.ReportMetric(float64(b.Elapsed().Microseconds())/float64(b.N*views), "us/View")
			b.ReportMetric(float64(len(svc.View().Buckets)), "buckets_shown")
		})
	}
}
