package bench

import (
	"fmt"
	"log/slog"
	"testing"
	"time"

	"github.com/antidrift/antidrift/internal/testsupport/testenv"
	"github.com/antidrift/antidrift/llmjudge"
	"github.com/antidrift/antidrift/persist"
	"github.com/antidrift/antidrift/service"
)

// BenchmarkJudge measures what judging costs a focus change, in process
// (persist on a RAM disk + service, wired as the daemon wires them), with
// the model judge asking a real llama-server that serves the tiny
// random-weights model of scripts/llama-server.sh:
//
//   - miss: a window nobody judged yet — RecordWindow until the model's
//     verdict is applied (a listener sees DriftReason change), so the
//     model's answer dominates; a real model's figure is make judge-eval's.
//   - hit: a window judged before — RecordWindow returns with the cached
//     verdict applied; the model is not asked.
//   - rules: the same focus change judged by a rule, the floor of a hit.
func BenchmarkJudge(b *testing.B) {
	srv := testenv.StartLlamaServer(b, "true") // on task: no nudge timers to wake anything
	j, err := llmjudge.New(llmjudge.Config{Endpoint: srv.URL, Timeout: time.Minute, Logger: slog.New(slog.DiscardHandler)})
	if err != nil {
		b.Fatal(err)
	}
	b.Cleanup(j.Close)

	b.Run("miss", func(b *testing.B) {
		svc, seen := judgeCore(b, j)
		var d dist
		for b.Loop() {
			for i := range *judgeMisses {
				start := time.Now()
				svc.RecordWindow(window(fmt.Sprintf("tab %d of the docs", i)))
				for v := range seen {
					if v.Drift != service.DriftUnknown {
						break
					}
				}
				d = append(d, time.Since(start))
			}
		}
		b.ReportMetric(float64(len(d)), "samples")
		b.ReportMetric(ms(d.pct(50)), "p50_ms")
		b.ReportMetric(ms(d.pct(99)), "p99_ms")
	})
	b.Run("hit", func(b *testing.B) { judgeHits(b, j, "Nothing") })
	b.Run("rules", func(b *testing.B) { judgeHits(b, nil, "Firefox") })
}

// judgeHits alternates between two windows judged before.
func judgeHits(b *testing.B, j service.Judge, allowed string) {
	svc, seen := judgeCore(b, j, allowed)
	for _, w := range []service.Window{window("docs"), window("tests")} {
		svc.RecordWindow(w)
		for v := range seen {
			if v.Drift != service.DriftUnknown {
				break
			}
		}
	}
	var d dist
	for b.Loop() {
		for i := range *focusSamples {
			w := window([]string{"docs", "tests"}[i%2])
			start := time.Now()
			svc.RecordWindow(w)
			d = append(d, time.Since(start))
			if v := svc.View(); v.Drift != service.DriftOnTask {
				b.Fatalf("a judged window's Drift: got %s (%s), want %s", v.Drift, v.DriftReason, service.DriftOnTask)
			}
		}
	}
	b.ReportMetric(float64(len(d)), "samples")
	b.ReportMetric(float64(d.pct(50).Microseconds()), "p50_us")
	b.ReportMetric(float64(d.pct(99).Microseconds()), "p99_us")
}

func window(title string) service.Window {
	return service.Window{ID: "1", Class: "Firefox", Instance: "Navigator", Title: title + " — Mozilla Firefox", Available: true}
}

// judgeCore is a core with an active session whose allowlist (default
// "Nothing") decides no Firefox window, and a channel of every View.
func judgeCore(b *testing.B, j service.Judge, allowed ...string) (*service.Service, chan service.View) {
	b.Helper()
	store, _, err := persist.Open(testenv.FastDir(b))
	if err != nil {
		b.Fatal(err)
	}
	b.Cleanup(func() { store.Close() })
	opts := service.Options{Store: store, Logger: slog.New(slog.DiscardHandler)}
	if j != nil {
		opts.Judge = j
	}
	svc := service.New(opts)
	if err := svc.Recover(service.Snapshot{}); err != nil {
		b.Fatal(err)
	}
	b.Cleanup(svc.Shutdown)
	seen := make(chan service.View, 1024)
	svc.AddListener(viewSink{svc, seen})
	if len(allowed) == 0 {
		allowed = []string{"Nothing"}
	}
	if _, err := svc.Start("read the docs", "the docs are read", 3600, "warn", allowed); err != nil {
		b.Fatal(err)
	}
	return svc, seen
}

// viewSink hands the View after a change to a channel, dropping it when
// nobody reads (the hit loop reads the View itself).
type viewSink struct {
	svc  *service.Service
	seen chan service.View
}

func (l viewSink) Changed() {
	select {
	case l.seen <- l.svc.View():
	default:
	}
}
func (l viewSink) SessionEnded(string, service.Outcome, string) {}
func (l viewSink) Nudged(string, string)                        {}
