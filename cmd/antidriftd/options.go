package main

import (
	"slices"

	"github.com/antidrift/antidrift/config"
	"github.com/antidrift/antidrift/report"
	"github.com/antidrift/antidrift/service"
)

// serviceOptions is the core's options: the settings of cfg, and the
// adapters Run opened before it (the store, the evidence source's guard,
// notifications, the model judge). problems are the startup problems the
// core shows in its Problems property.
func (m *Main) serviceOptions(cfg config.Config, problems []string) service.Options {
	opts := service.Options{
		EvidenceSource: m.src.name,
		Guard:          m.src.guard,
		Store:          m.store,
		Clock:          m.Clock,
		Logger:         m.log,
		Version:        m.Version,
		Problems:       problems,
		DefaultLevel:   cfg.Enforcement,
		DefaultAllowed: cfg.AllowedClasses,
		Distractions:   cfg.Distractions,
		BreakGlassHold: cfg.BreakGlassHold,
		DriftGrace:     cfg.DriftGrace,
		NudgeRepeat:    cfg.NudgeRepeat,
		IdleAfter:      cfg.IdleAfter,
		PrivateClasses: cfg.PrivateClasses,
		RedactTitles:   cfg.RedactTitles,
		JudgeSitePaths: cfg.Judge.SitePaths,
		Quiet:          cfg.Quiet,
		Reporter: report.DirReporter{Dir: m.store.Dir(), DayStart: cfg.DayStarts, SyncDir: cfg.SyncDir, ThisName: cfg.DeviceLabel(),
			Options: report.Options{PrivateClasses: cfg.PrivateClasses, RedactTitles: cfg.RedactTitles}},
	}
	// Each port is set only when its adapter exists: a nil pointer in an
	// interface is not a nil interface, and the core tests for nil.
	if m.notes != nil {
		opts.Notifier = m.notes
	}
	if m.judge != nil {
		opts.Judge = m.judge
	}
	if m.coach != nil {
		opts.Coach = m.coach
	}
	if m.quiet != nil {
		opts.Quieter = m.quiet
	}
	if m.rulesPath != "" {
		opts.RulesFile = config.RulesFile{Path: m.rulesPath}
	}
	if m.apps != nil {
		opts.Apps = appDirectory{m.apps}
	}
	var taskProblems []string
	opts.Tasks, taskProblems = taskSources(cfg.Tasks)
	opts.Problems = append(slices.Clip(opts.Problems), taskProblems...)
	return opts
}
