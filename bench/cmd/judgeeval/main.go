// Command judgeeval measures the LLM judge's decisions against
// hand-labelled windows (testdata/judge-eval.jsonl): accuracy, the
// false-drift rate (on-task windows judged off task: the error a person
// feels, a nudge for doing the work), the missed-drift rate, unknowns, and
// p50/p99 latency per verdict. It talks to any OpenAI-compatible endpoint
// through the daemon's own llmjudge, asking exactly what the daemon asks
// (titles scrubbed as the daemon scrubs them), one question at a time.
//
//	make judge-eval ENDPOINT=http://127.0.0.1:11434/v1 MODEL=qwen2.5:3b
//
// It is not part of make test: decision quality depends on the model a
// person runs, which no test machine has.
package main

import (
	"bufio"
	"bytes"
	"encoding/json"
	"flag"
	"fmt"
	"io"
	"log/slog"
	"os"
	"slices"
	"time"

	"github.com/antidrift/antidrift/llmjudge"
	"github.com/antidrift/antidrift/service"
)

// labelled is one line of judge-eval.jsonl.
type labelled struct {
	NextAction       string `json:"next_action"`
	SuccessCondition string `json:"success_condition"`
	Class            string `json:"class"`
	Title            string `json:"title"`
	OnTask           *bool  `json:"on_task"`
}

func main() {
	endpoint := flag.String("endpoint", "", "the OpenAI-compatible base URL, e.g. http://127.0.0.1:8080/v1")
	model := flag.String("model", "", "the model name to pass (empty for servers that serve one)")
	allowRemote := flag.Bool("allow-remote", false, "permit an endpoint that is not on this machine")
	timeout := flag.Duration("timeout", 30*time.Second, "per request")
	casesPath := flag.String("cases", "testdata/judge-eval.jsonl", "the labelled cases")
	verbose := flag.Bool("v", false, "print every wrong or unknown verdict")
	flag.Parse()
	if *endpoint == "" {
		fmt.Fprintln(os.Stderr, "judgeeval: -endpoint is required (make judge-eval ENDPOINT=http://127.0.0.1:8080/v1)")
		os.Exit(2)
	}
	cases, err := readCases(*casesPath)
	if err != nil {
		fmt.Fprintln(os.Stderr, "judgeeval:", err)
		os.Exit(1)
	}
	cfg := llmjudge.Config{Endpoint: *endpoint, Model: *model, Timeout: *timeout, AllowRemote: *allowRemote,
		Logger: slog.New(slog.NewTextHandler(io.Discard, nil))}
	if _, err := llmjudge.New(cfg); err != nil {
		fmt.Fprintln(os.Stderr, "judgeeval:", err)
		os.Exit(2)
	}
	var r report
	for i, c := range cases {
		start := time.Now()
		v := ask(cfg, c)
		r.add(c, v, time.Since(start))
		if *verbose && (v.Task == service.TaskUnknown || (v.Task == service.TaskOn) != *c.OnTask) {
			fmt.Printf("case %d: want on_task=%v, got %s (%s): %s / %s\n", i+1, *c.OnTask, task(v.Task), v.Reason, c.Class, c.Title)
		}
	}
	fmt.Printf("endpoint %s, model %q, %d cases from %s\n", *endpoint, *model, len(cases), *casesPath)
	fmt.Print(r.String())
}

// ask judges one case with a fresh judge, so a failure's backoff never
// turns the cases after it into unknowns.
func ask(cfg llmjudge.Config, c labelled) service.Verdict {
	j, err := llmjudge.New(cfg)
	if err != nil {
		return service.Verdict{Reason: err.Error()}
	}
	defer j.Close()
	got := make(chan service.Verdict, 1)
	q := service.Question{NextAction: c.NextAction, SuccessCondition: c.SuccessCondition, Class: c.Class, Title: service.FoldTitle(c.Title)}
	if v, ok := j.Judge(q, func(v service.Verdict) { got <- v }); ok {
		return v
	}
	return <-got
}

func readCases(path string) ([]labelled, error) {
	f, err := os.Open(path)
	if err != nil {
		return nil, err
	}
	defer f.Close()
	var cases []labelled
	sc := bufio.NewScanner(f)
	for line := 1; sc.Scan(); line++ {
		var c labelled
		dec := json.NewDecoder(bytes.NewReader(sc.Bytes()))
		dec.DisallowUnknownFields()
		if err := dec.Decode(&c); err != nil || c.OnTask == nil || c.NextAction == "" || c.Class == "" {
			return nil, fmt.Errorf("%s line %d: want {next_action, success_condition, class, title, on_task}: %v", path, line, err)
		}
		cases = append(cases, c)
	}
	return cases, sc.Err()
}

// report tallies verdicts against labels.
type report struct {
	right, wrong, unknown int
	onTask, falseDrift    int // labelled on task; of those, judged off task
	offTask, missedDrift  int // labelled off task; of those, judged on task
	latencies             []time.Duration
}

func (r *report) add(c labelled, v service.Verdict, took time.Duration) {
	r.latencies = append(r.latencies, took)
	if *c.OnTask {
		r.onTask++
	} else {
		r.offTask++
	}
	switch {
	case v.Task == service.TaskUnknown:
		r.unknown++
	case (v.Task == service.TaskOn) == *c.OnTask:
		r.right++
	case *c.OnTask:
		r.wrong++
		r.falseDrift++
	default:
		r.wrong++
		r.missedDrift++
	}
}

func (r *report) String() string {
	n := r.right + r.wrong + r.unknown
	pct := func(a, b int) string {
		if b == 0 {
			return "n/a"
		}
		return fmt.Sprintf("%.1f%% (%d/%d)", 100*float64(a)/float64(b), a, b)
	}
	slices.Sort(r.latencies)
	q := func(p float64) time.Duration {
		if len(r.latencies) == 0 {
			return 0
		}
		return r.latencies[min(len(r.latencies)-1, int(p*float64(len(r.latencies))))]
	}
	return fmt.Sprintf("accuracy          %s\nfalse-drift rate  %s of on-task windows judged off task\nmissed-drift rate %s of off-task windows judged on task\nunknown           %s\nlatency           p50 %s, p99 %s, max %s\n",
		pct(r.right, n), pct(r.falseDrift, r.onTask), pct(r.missedDrift, r.offTask), pct(r.unknown, n),
		q(0.50).Round(time.Millisecond), q(0.99).Round(time.Millisecond), q(1).Round(time.Millisecond))
}

func task(t service.Task) string {
	switch t {
	case service.TaskOn:
		return "on task"
	case service.TaskOff:
		return "off task"
	}
	return "unknown"
}
