package main

import (
	"github.com/antidrift/antidrift/config"
	"github.com/antidrift/antidrift/llmjudge"
)

// openJudge makes the judge the [judge] table asks for: none for "rules"
// (the core decides by the rules alone), the model for "llm". A judge
// that cannot be made is a problem for the person, and the rules alone
// meanwhile; never a daemon that does not start.
func (m *Main) openJudge(cfg config.Judge) (problem string) {
	if cfg.Kind != "llm" {
		return ""
	}
	j, err := llmjudge.New(llmjudge.Config{
		Endpoint:    cfg.Endpoint,
		Model:       cfg.Model,
		Timeout:     cfg.Timeout,
		AllowRemote: cfg.AllowRemote,
		Logger:      m.log,
	})
	if err != nil {
		return "the LLM judge is off, windows no rule decides are judged by the allowlist: " + err.Error()
	}
	m.judge = j
	m.log.Info("windows no rule decides are judged by a model", "endpoint", cfg.Endpoint, "model", cfg.Model, "timeout", cfg.Timeout)
	// The coach asks the same model, under the same privacy rule: with the
	// judge checked above, its endpoint is one the judge accepted.
	c, err := llmjudge.NewCoach(llmjudge.CoachConfig{
		Endpoint:    cfg.Endpoint,
		Model:       cfg.Model,
		Timeout:     cfg.CoachTimeout,
		AllowRemote: cfg.AllowRemote,
	})
	if err != nil {
		return "the coach is off: " + err.Error()
	}
	m.coach = c
	return ""
}
