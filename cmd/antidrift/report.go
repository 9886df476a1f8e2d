package main

import (
	"bytes"
	"encoding/json"
	"errors"
	"flag"
	"fmt"
	"os"
	"os/exec"
	"time"

	"github.com/antidrift/antidrift/apps"
	"github.com/antidrift/antidrift/config"
	"github.com/antidrift/antidrift/internal/inert"
	"github.com/antidrift/antidrift/persist"
	"github.com/antidrift/antidrift/report"
)

// reportNow is the report's "now"; tests pin it.
var reportNow = time.Now

var cmdReport = &command{
	name: "report", method: "Report", also: []string{"ReportDevice"},
	synopsis: "[--today|--week|--month|--since DATE [--until DATE]] [--html FILE [--open]] [--device NAME|--this-device] [--state-dir DIR | --daemon]",
	summary:  "see the week: totals, days, sessions and windows, as text, JSON or an HTML page (reads the state directory; no daemon needed, unless --daemon asks it)",
	setup:    setupReport,
}

// setupReport is `antidrift report`: the one command that does not talk
// to the daemon. It reads the state directory itself (read-only, without
// the daemon's lock), so it works whether or not the daemon runs. With
// --daemon it asks the daemon instead (Report, ReportDevice): the report
// of the daemon's own state directory and sync_dir, as the panels get it.
func setupReport(fs *flag.FlagSet) func(*invocation) error {
	today := fs.Bool("today", false, "report on today")
	week := fs.Bool("week", false, "report on the last 7 days, today included (the default)")
	month := fs.Bool("month", false, "report on the last 30 days, today included")
	since := fs.String("since", "", "report from `DATE` (YYYY-MM-DD, local time)")
	until := fs.String("until", "", "with --since: report through `DATE` (included; default today)")
	htmlOut := fs.String("html", "", "write a self-contained HTML page to `FILE` (- for stdout)")
	open := fs.Bool("open", false, "with --html FILE: open the page with xdg-open")
	stateDir := fs.String("state-dir", "", "read `DIR` instead of $XDG_STATE_HOME/antidrift")
	configPath := fs.String("config", "", "take private_classes and redact_titles from `FILE` instead of the default config")
	daemon := fs.Bool("daemon", false, "ask the running daemon instead, of its own state directory and sync_dir: the report the panels show")
	devices := deviceFlags(fs)
	return func(x *invocation) error {
		cfg := reportConfig(*configPath)
		span, err := reportSpan(*today, *week, *month, *since, *until, reportNow(), cfg.DayStarts)
		if err != nil {
			return x.cmd.usageError("%s", err)
		}
		switch {
		case *open && (*htmlOut == "" || *htmlOut == "-"):
			return x.cmd.usageError("--open needs --html FILE")
		case x.json && *htmlOut != "":
			return x.cmd.usageError("--json and --html are two different outputs; pick one")
		case *daemon && (*stateDir != "" || *configPath != ""):
			return x.cmd.usageError("--daemon reads what the daemon reads, with its settings; --state-dir and --config are for reading a directory yourself")
		case *daemon && *devices.this:
			return x.cmd.usageError("--daemon covers the machines the daemon sees; name this one with --device NAME")
		}
		if *daemon {
			r, doc, err := daemonReport(x, span, *devices.only)
			if err != nil || x.json {
				if err == nil {
					// As the daemon wrote it, and inert even from a daemon
					// older than inert.JSON.
					_, err = x.stdout.Write(inert.JSON(doc))
				}
				return err
			}
			return writeReport(x, r, span.Since.Location(), *htmlOut, *open)
		}
		dir := *stateDir
		if dir == "" {
			if dir, err = persist.DefaultDir(); err != nil {
				return err
			}
		}
		// An empty report of a directory that is not there would read
		// like an empty week.
		if fi, err := os.Stat(dir); err != nil || !fi.IsDir() {
			why := "does not exist"
			switch {
			case err == nil:
				why = "is not a directory"
			case !errors.Is(err, os.ErrNotExist):
				why = "cannot be read: " + err.Error()
			}
			if *stateDir != "" {
				return x.cmd.usageError("--state-dir %s %s", inert.Terminal(dir), why)
			}
			return &exitError{code: exitRefused, msg: fmt.Sprintf("antidrift report: %s %s: antidriftd has recorded no session as this user yet (it creates the directory when it first starts)", inert.Terminal(dir), why)}
		}
		opts := report.Options{PrivateClasses: cfg.PrivateClasses, RedactTitles: cfg.RedactTitles}
		// Apps by the names and icons the desktop shows (docs/reports.md),
		// read once: a report needs no watch (nor an inotify instance).
		opts.Apps = apps.Read("")
		which, err := devices.pick(cfg)
		if err != nil {
			return x.cmd.usageError("%s", err)
		}
		which.Now = reportNow()
		r, err := report.BuildAll(persist.NewReader(dir), span, opts, which)
		if err != nil && which.Only != "" {
			return deviceError(x.cmd, err)
		}
		if err != nil {
			return &exitError{code: exitRefused, msg: fmt.Sprintf("antidrift report: cannot read %s: %v", inert.Terminal(dir), inert.Terminal(err.Error()))}
		}
		if x.json {
			return report.JSON(x.stdout, r)
		}
		return writeReport(x, r, span.Since.Location(), *htmlOut, *open)
	}
}

// writeReport shows r as text, or as the HTML page with htmlOut.
func writeReport(x *invocation, r *report.Report, loc *time.Location, htmlOut string, open bool) error {
	switch {
	case htmlOut == "-":
		return report.HTML(x.stdout, r, loc)
	case htmlOut != "":
		return writeHTML(x, r, loc, htmlOut, open)
	}
	return report.Text(x.stdout, r, loc, useColour(x.stdout))
}

// daemonReport is the daemon's report of span: Report, or ReportDevice
// when device names one machine. doc is the JSON as the daemon sent it.
func daemonReport(x *invocation, span report.Span, device string) (r *report.Report, doc []byte, err error) {
	method, args := "Report", []any{span.Since.Unix(), span.Until.Unix()}
	if device != "" {
		method, args = "ReportDevice", append(args, device)
	}
	var text string
	if err := x.call(method, args, &text); err != nil {
		return nil, nil, err
	}
	r = new(report.Report)
	if err := json.Unmarshal([]byte(text), r); err != nil {
		return nil, nil, &exitError{code: exitRefused, msg: fmt.Sprintf("antidrift report: the daemon's report is not JSON this antidrift reads: %v (is antidriftd the same version as antidrift %s?)", err, version)}
	}
	return r, []byte(text), nil
}

// reportSpan is the period the flags name; at most one may be given.
func reportSpan(today, week, month bool, since, until string, now time.Time, dayStart time.Duration) (report.Span, error) {
	n := 0
	for _, b := range []bool{today, week, month, since != ""} {
		if b {
			n++
		}
	}
	switch {
	case n > 1:
		return report.Span{}, fmt.Errorf("give one of --today, --week, --month and --since")
	case until != "" && since == "":
		return report.Span{}, fmt.Errorf("--until needs --since")
	case today:
		return report.LastDays(now, 1, dayStart), nil
	case month:
		return report.LastDays(now, 30, dayStart), nil
	case since != "":
		return report.Dates(since, until, now, dayStart)
	}
	return report.LastDays(now, 7, dayStart), nil
}

// reportConfig is the config file a report honours: private_classes,
// redact_titles and day_starts. A bad file does not stop a report, as it
// does not stop the daemon; but its problems are said, since they may
// concern the very keys that hide titles.
func reportConfig(path string) config.Config {
	if path == "" {
		p, err := config.DefaultPath()
		if err != nil {
			return config.Default()
		}
		path = p
	}
	cfg, problems := config.Load(path)
	for _, p := range problems {
		fmt.Fprintln(os.Stderr, "antidrift report:", inert.TerminalLines(p.String()))
	}
	return cfg
}

// writeHTML writes the page privately (window titles: 0600) and, with
// open, hands it to xdg-open.
func writeHTML(x *invocation, r *report.Report, loc *time.Location, path string, open bool) error {
	var page bytes.Buffer
	if err := report.HTML(&page, r, loc); err != nil {
		return err
	}
	if err := os.WriteFile(path, page.Bytes(), 0o600); err != nil {
		return &exitError{code: exitRefused, msg: "antidrift report: " + err.Error()}
	}
	fmt.Fprintf(x.stdout, "Wrote %s.\n", inert.Terminal(path))
	if !open {
		return nil
	}
	if err := exec.Command("xdg-open", path).Start(); err != nil {
		return &exitError{code: exitRefused, msg: fmt.Sprintf("antidrift report: wrote %s, but xdg-open failed: %v", path, err)}
	}
	return nil
}
