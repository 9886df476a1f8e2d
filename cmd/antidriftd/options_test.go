package main

import (
	"log/slog"
	"reflect"
	"regexp"
	"testing"
	"time"

	"github.com/antidrift/antidrift/config"
	"github.com/antidrift/antidrift/persist"
	"github.com/antidrift/antidrift/report"
	"github.com/antidrift/antidrift/service"
)

// optionsSeen is what serviceOptions hands the core, in comparable form:
// what a person who wrote the config would see the daemon do.
type optionsSeen struct {
	EvidenceSource                                     string
	Version                                            string
	Problems                                           []string
	DefaultLevel                                       service.Level
	DefaultAllowed, Distractions, PrivateClasses       []string
	RedactTitles                                       []string
	BreakGlassHold, DriftGrace, NudgeRepeat, IdleAfter time.Duration
	ReportDir                                          string
	ReportDayStart                                     time.Duration
	ReportPrivate                                      []string
	ReportRedacts                                      []string
	ReportSyncDir, ReportThisName                      string
	JudgeSitePaths                                     bool
	HasJudge, HasNotifier, HasGuard                    bool
}

func seen(o service.Options) optionsSeen {
	r := o.Reporter.(report.DirReporter)
	return optionsSeen{
		EvidenceSource: o.EvidenceSource, Version: o.Version, Problems: o.Problems,
		DefaultLevel: o.DefaultLevel, DefaultAllowed: o.DefaultAllowed, Distractions: o.Distractions,
		PrivateClasses: o.PrivateClasses, RedactTitles: patterns(o.RedactTitles),
		BreakGlassHold: o.BreakGlassHold, DriftGrace: o.DriftGrace, NudgeRepeat: o.NudgeRepeat, IdleAfter: o.IdleAfter,
		ReportDir: r.Dir, ReportDayStart: r.DayStart, ReportPrivate: r.Options.PrivateClasses, ReportRedacts: patterns(r.Options.RedactTitles),
		ReportSyncDir: r.SyncDir, ReportThisName: r.ThisName,
		JudgeSitePaths: o.JudgeSitePaths, HasJudge: o.Judge != nil, HasNotifier: o.Notifier != nil, HasGuard: o.Guard != nil,
	}
}

// Every setting of config.toml reaches the core, and the report reads the
// same privacy settings as the core: a row per setting that maps.
func TestServiceOptionsFromConfig(t *testing.T) {
	store, _, err := persist.Open(t.TempDir())
	if err != nil {
		t.Fatal(err)
	}
	defer store.Close()
	base := optionsSeen{
		EvidenceSource: "x11", Version: "1.2.3", Problems: []string{"a problem"},
		DefaultLevel: service.LevelWarn, BreakGlassHold: 5 * time.Minute, DriftGrace: 5 * time.Second,
		NudgeRepeat: 2 * time.Minute, IdleAfter: 3 * time.Minute, ReportDir: store.Dir(),
		ReportThisName: config.Default().DeviceLabel(),
	}
	with := func(f func(*optionsSeen)) optionsSeen { o := base; f(&o); return o }
	for _, c := range []struct {
		name, toml string
		want       optionsSeen
	}{
		{"an empty file: the defaults", "", base},
		{"enforcement", `enforcement = "locked"`, with(func(o *optionsSeen) { o.DefaultLevel = service.LevelLocked })},
		{"allowed_classes", `allowed_classes = ["Emacs", "firefox:*GitHub*"]`,
			with(func(o *optionsSeen) { o.DefaultAllowed = []string{"Emacs", "firefox:*GitHub*"} })},
		{"distractions", `distractions = ["Steam"]`, with(func(o *optionsSeen) { o.Distractions = []string{"Steam"} })},
		{"the durations", "drift_grace = \"9s\"\nnudge_repeat = \"7m\"\nbreak_glass_hold = \"1h\"\nidle_after = \"4m\"",
			with(func(o *optionsSeen) {
				o.DriftGrace, o.NudgeRepeat, o.BreakGlassHold, o.IdleAfter = 9*time.Second, 7*time.Minute, time.Hour, 4*time.Minute
			})},
		{"private_classes reach the core and the report", `private_classes = ["KeePassXC"]`,
			with(func(o *optionsSeen) { o.PrivateClasses, o.ReportPrivate = []string{"KeePassXC"}, []string{"KeePassXC"} })},
		{"redact_titles reach the core and the report", `redact_titles = ["\\d{4}-\\d{4}"]`,
			with(func(o *optionsSeen) {
				o.RedactTitles, o.ReportRedacts = []string{`\d{4}-\d{4}`}, []string{`\d{4}-\d{4}`}
			})},
		{"day_starts reaches the report", `day_starts = "04:00"`, with(func(o *optionsSeen) { o.ReportDayStart = 4 * time.Hour })},
		{"judge.site_paths", "[judge]\nsite_paths = true", with(func(o *optionsSeen) { o.JudgeSitePaths = true })},
		{"sync_dir and device_name reach the report", "sync_dir = \"/srv/sync/antidrift\"\ndevice_name = \"laptop\"",
			with(func(o *optionsSeen) { o.ReportSyncDir, o.ReportThisName = "/srv/sync/antidrift", "laptop" })},
	} {
		cfg, problems := config.Parse("config.toml", []byte(c.toml))
		if len(problems) > 0 {
			t.Fatalf("%s: the test's config's problems: got %v, want none", c.name, problems)
		}
		m := &Main{store: store, src: source{name: "x11"}, Version: "1.2.3", log: slog.Default()}
		if got := seen(m.serviceOptions(cfg, []string{"a problem"})); !reflect.DeepEqual(got, c.want) {
			t.Errorf("%s:\n got %+v,\nwant %+v", c.name, got, c.want)
		}
	}
}

// A port whose adapter is missing reaches the core as nil, not as a nil
// pointer in an interface, which the core would call.
func TestServiceOptionsLeaveMissingPortsNil(t *testing.T) {
	store, _, err := persist.Open(t.TempDir())
	if err != nil {
		t.Fatal(err)
	}
	defer store.Close()
	m := &Main{store: store, src: source{name: "none"}}
	got := seen(m.serviceOptions(config.Default(), nil))
	if got.HasJudge || got.HasNotifier || got.HasGuard {
		t.Errorf("got judge %v, notifier %v, guard %v; want none of them", got.HasJudge, got.HasNotifier, got.HasGuard)
	}
}

func patterns(list []*regexp.Regexp) []string {
	var out []string
	for _, r := range list {
		out = append(out, r.String())
	}
	return out
}
