package statefixture

import (
	"errors"
	"time"

	"github.com/antidrift/antidrift/persist"
	"github.com/antidrift/antidrift/service"
)

// Machine is another of the person's machines, as sync_dir shows it: the
// sessions seal into a state directory of its own at stateDir, and its
// publisher writes its copy into syncDir under the label name, as its
// daemon would after each seal. It returns the machine's device id. No
// Syncthing is needed: this is what Syncthing would have brought.
func Machine(stateDir, syncDir, name string, titles bool, sessions ...service.Summary) (deviceID string, err error) {
	st, _, err := persist.Open(stateDir)
	if err != nil {
		return "", err
	}
	defer st.Close()
	for _, s := range sessions {
		if _, err := st.AppendAudit(s); err != nil {
			return "", err
		}
	}
	id, problem, err := st.DeviceID()
	if err != nil {
		return "", err
	}
	if problem == "" {
		problem = persist.NewPublisher(st, syncDir, id, name, titles, func(string) {}).PublishNow()
	}
	if problem != "" {
		return "", errors.New(problem)
	}
	return id, nil
}

// TodaySession is a sealed-to-be session of ten minutes on task, today
// by now's clock (started half an hour before now, or just after midnight
// when the day is younger than that), for a machine's copy a panel counts
// in today's total.
func TodaySession(now time.Time, id, nextAction string) service.Summary {
	y, m, d := now.Date()
	start := now.Add(-30 * time.Minute)
	if day := time.Date(y, m, d, 0, 0, 1, 0, now.Location()); start.Before(day) {
		start = day
	}
	return service.Summary{
		SessionID: id, NextAction: nextAction, SuccessCondition: "done",
		Outcome: service.OutcomeCompleted, Enforcement: service.LevelWarn, TimeboxSecs: 1200,
		StartedUnix: start.Unix(), EndedUnix: start.Add(10 * time.Minute).Unix(),
		Buckets: []service.Bucket{{Class: "Thunderbird", Title: "Inbox", Seconds: 600}},
	}
}
