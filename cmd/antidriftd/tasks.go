package main

import (
	"github.com/antidrift/antidrift/config"
	"github.com/antidrift/antidrift/service"
	"github.com/antidrift/antidrift/tasks/taskwarrior"
)

// newCalDAV makes the CalDAV task source of [tasks.caldav]. It is
// tasks/caldav's caldav.New (caldav.Options{URL, Username, PasswordFile}),
// set in tasks_caldav.go once that leaf is in the tree; nil means this
// build has no CalDAV source, which a [tasks.caldav] table is told.
var newCalDAV func(config.CalDAV) (service.TaskSource, error)

// taskSources are the task managers of cfg's [tasks] tables, and a
// problem sentence for each that cannot be made (it stays off).
func taskSources(cfg config.Tasks) (srcs []service.TaskSource, problems []string) {
	if tw := cfg.Taskwarrior; tw != nil {
		srcs = append(srcs, taskwarrior.New(tw.Command))
	}
	if cd := cfg.CalDAV; cd != nil {
		switch {
		case newCalDAV == nil:
			problems = append(problems, "[tasks.caldav] is in config.toml, but this build of antidrift has no CalDAV task source; CalDAV tasks are not listed")
		default:
			src, err := newCalDAV(*cd)
			if err != nil {
				problems = append(problems, "[tasks.caldav]: "+err.Error()+"; CalDAV tasks are not listed")
				break
			}
			srcs = append(srcs, src)
		}
	}
	return srcs, problems
}
