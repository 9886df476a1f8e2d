package main

import (
	"testing"

	"github.com/antidrift/antidrift/config"
	"github.com/antidrift/antidrift/llmjudge"
)

// config writes down the model's timeout itself (it no longer depends on
// llmjudge); a config without one must still mean what the model judge
// means by none, so the man page's one default stays true for both.
func TestConfigsJudgeTimeoutIsTheModelJudgesDefault(t *testing.T) {
	if got, want := config.Default().Judge.Timeout, llmjudge.DefaultTimeout; got != want {
		t.Errorf("config's default [judge] timeout: got %v, want llmjudge's %v", got, want)
	}
}

func TestConfigsCoachTimeoutIsTheCoachsDefault(t *testing.T) {
	if got, want := config.Default().Judge.CoachTimeout, llmjudge.DefaultCoachTimeout; got != want {
		t.Errorf("config's default [judge] coach_timeout: got %v, want llmjudge's %v", got, want)
	}
}
