package main

import (
	"github.com/antidrift/antidrift/apps"
	"github.com/antidrift/antidrift/internal/inert"
	"github.com/antidrift/antidrift/service"

	"bytes"
	"cmp"
	"fmt"
	"io"
	"os"
	"slices"
	"strings"
	"text/tabwriter"
	"time"
	"unicode"
	"unicode/utf8"

	"github.com/godbus/dbus/v5"
)

// status is the daemon's properties, decoded for display. A nil *status
// means the daemon is not there ("offline"), which only status --follow
// shows.
type status struct {
	State, NextAction, SuccessCondition, Outcome, Enforcement      string
	Drift, DriftReason, CurrentClass, CurrentTitle, EvidenceReason string
	TimeboxSeconds                                                 uint64
	Deadline, BreakGlassAt                                         int64
	AllowedClasses, Problems                                       []string
	EvidenceAvailable, BreakDue                                    bool
	SwitchCount, MinimizeCount, AuditPending                       uint32
	Buckets                                                        []bucket
	// The page in front of a browser window, or why there is none.
	CurrentSite, SiteReason string
	// Do Not Disturb: the session is quiet, and what antidrift could do.
	Quiet     bool
	QuietNote string
	// The focused window's desktop entry ("" each when none), and those of
	// the classes in Buckets.
	CurrentAppId, CurrentAppName, CurrentAppIcon string
	BucketApps                                   []bucketApp
	// The session's task (docs/tasks.md): source:id, its title, what
	// became of it.
	TaskRef, TaskTitle, TaskResult string

	raw map[string]dbus.Variant // every property, for --json
}

// bucket is one (class, scrubbed title) and the seconds it held focus.
type bucket struct {
	Class, Title string
	Seconds      uint64
}

// bucketApp is a class's desktop entry: (class, desktop id, name, icon).
type bucketApp struct {
	Class, ID, Name, Icon string
}

// decodeStatus picks the properties the CLI shows out of GetAll's map. A
// property that is missing or of another type stays zero: an older or newer
// daemon still gets a status, not an error.
func decodeStatus(m map[string]dbus.Variant) *status {
	s := &status{raw: m}
	for name, dst := range map[string]any{
		"State": &s.State, "NextAction": &s.NextAction, "SuccessCondition": &s.SuccessCondition,
		"Outcome": &s.Outcome, "Enforcement": &s.Enforcement, "Drift": &s.Drift, "DriftReason": &s.DriftReason,
		"CurrentClass": &s.CurrentClass, "CurrentTitle": &s.CurrentTitle, "EvidenceReason": &s.EvidenceReason,
		"TimeboxSeconds": &s.TimeboxSeconds, "Deadline": &s.Deadline, "BreakGlassAt": &s.BreakGlassAt,
		"AllowedClasses": &s.AllowedClasses, "Problems": &s.Problems, "EvidenceAvailable": &s.EvidenceAvailable, "BreakDue": &s.BreakDue,
		"SwitchCount": &s.SwitchCount, "MinimizeCount": &s.MinimizeCount, "AuditPending": &s.AuditPending,
		"Buckets":     &s.Buckets,
		"CurrentSite": &s.CurrentSite, "SiteReason": &s.SiteReason,
		"Quiet": &s.Quiet, "QuietNote": &s.QuietNote,
		"CurrentAppId": &s.CurrentAppId, "CurrentAppName": &s.CurrentAppName, "CurrentAppIcon": &s.CurrentAppIcon,
		"BucketApps": &s.BucketApps,
		"TaskRef":    &s.TaskRef, "TaskTitle": &s.TaskTitle, "TaskResult": &s.TaskResult,
	} {
		if v, ok := m[name]; ok {
			_ = v.Store(dst)
		}
	}
	// Longest first, whatever order they came in.
	slices.SortStableFunc(s.Buckets, func(a, b bucket) int { return cmp.Compare(b.Seconds, a.Seconds) })
	return s
}

// is reports whether the daemon is in state st.
func (s *status) is(st service.State) bool { return s.State == string(st) }

// left is the time until the deadline (negative once passed).
func (s *status) left(now time.Time) time.Duration {
	return time.Unix(s.Deadline, 0).Sub(now)
}

// percentElapsed is how much of the timebox is used up, 0–100; 0 outside
// active. It is measured back from the deadline, so an Extend (which grows
// both the timebox and the deadline) stays consistent.
func (s *status) percentElapsed(now time.Time) int {
	if !s.is(service.StateActive) || s.TimeboxSeconds == 0 {
		return 0
	}
	total := time.Duration(s.TimeboxSeconds) * time.Second
	p := int(100 * (total - s.left(now)) / total)
	return min(100, max(0, p))
}

// jsonObject is the full property set with snake_case keys (SessionId →
// session_id), Buckets as objects. Properties this CLI does not know are
// included too.
func (s *status) jsonObject() map[string]any {
	out := make(map[string]any, len(s.raw))
	for name, v := range s.raw {
		out[snakeCase(name)] = v.Value()
	}
	if _, ok := s.raw["Buckets"]; ok {
		bs := make([]map[string]any, len(s.Buckets))
		for i, b := range s.Buckets {
			bs[i] = map[string]any{"class": b.Class, "title": b.Title, "seconds": b.Seconds}
		}
		out["buckets"] = bs
	}
	if _, ok := s.raw["BucketApps"]; ok {
		as := make([]map[string]any, len(s.BucketApps))
		for i, a := range s.BucketApps {
			as[i] = map[string]any{"class": a.Class, "desktop_id": a.ID, "name": a.Name, "icon": a.Icon}
		}
		out["bucket_apps"] = as
	}
	return out
}

func snakeCase(name string) string {
	var b strings.Builder
	for i, r := range name {
		if unicode.IsUpper(r) {
			if i > 0 {
				b.WriteByte('_')
			}
			r = unicode.ToLower(r)
		}
		b.WriteRune(r)
	}
	return b.String()
}

// plainMap turns a{sv} into plain values, for JSON.
func plainMap(m map[string]dbus.Variant) map[string]any {
	out := make(map[string]any, len(m))
	for k, v := range m {
		out[k] = v.Value()
	}
	return out
}

// textOpts says how statusText renders.
type textOpts struct {
	colour bool
	// minutes shows the time left to the minute: a panel tooltip then
	// changes once a minute, not every second.
	minutes bool
}

// statusText is the human status: what you committed to, how it is going,
// where your time went. It is for the person's own terminal, so it shows
// the current window title too.
func statusText(s *status, now time.Time, o textOpts) string {
	s = s.forTerminal()
	p := painter(o.colour)
	left := span
	if o.minutes {
		left = service.ShortLeft
	}
	var b strings.Builder
	row := func(label, format string, a ...any) {
		fmt.Fprintf(&b, "  %-12s %s\n", label, fmt.Sprintf(format, a...))
	}
	switch service.State(s.State) {
	case service.StateLocked:
		// Not "locked": that is also an enforcement level.
		fmt.Fprintf(&b, "%s\n", p.bold("no session"))
		row("start one", "antidrift start NEXT_ACTION --done-when TEXT --for 25m")
	case service.StatePlanning:
		fmt.Fprintf(&b, "%s  nothing committed yet\n", p.bold("planning"))
		row("enforcement", "%s", orDefault(s.Enforcement))
		row("next", "antidrift start NEXT_ACTION --done-when TEXT --for 25m")
	case service.StateActive:
		fmt.Fprintf(&b, "%s  %s\n", p.green("active"), p.bold(s.NextAction))
		row("done when", "%s", s.SuccessCondition)
		row("time left", "%s of %s (until %s)", left(s.left(now)), exact(s.TimeboxSeconds),
			time.Unix(s.Deadline, 0).Format("15:04"))
		drift := driftText(s.Drift)
		switch {
		case s.Drift == service.DriftDrifting:
			drift = p.red(drift)
		case s.Drift == service.DriftOnTask:
			drift = p.green(drift)
		}
		// The reason, unless it only repeats why the window is unknown.
		if s.DriftReason != "" && (s.EvidenceReason == "" || !strings.Contains(s.DriftReason, s.EvidenceReason)) {
			drift += ": " + s.DriftReason
		} else if s.BreakDue {
			drift += "; the desktop says a break is due" // the reason says it too, when shown
		}
		row("drift", "%s", drift)
	case service.StateReview:
		fmt.Fprintf(&b, "%s  %s (%s)\n", p.yellow("review"), p.bold(s.NextAction), s.Outcome)
		row("done when", "%s", s.SuccessCondition)
		next := "antidrift end (seals the summary)"
		if service.Outcome(s.Outcome) == service.OutcomeExpired {
			next += ", or antidrift extend DURATION to keep going"
		}
		row("next", "%s", next)
	default:
		fmt.Fprintf(&b, "%s\n", p.bold(s.State))
	}
	if s.is(service.StateActive) || s.is(service.StateReview) {
		enf := s.Enforcement
		if len(s.AllowedClasses) > 0 {
			enf += "; allowed: " + strings.Join(s.AllowedClasses, ", ")
		}
		if s.MinimizeCount > 0 {
			enf += fmt.Sprintf("; %d %s minimized", s.MinimizeCount, plural(int(s.MinimizeCount), "window", "windows"))
		}
		row("enforcement", "%s", enf)
		if s.TaskRef != "" {
			task := s.TaskRef
			if s.TaskResult != "" {
				task += ": " + s.TaskResult
			}
			row("task", "%s", task)
		}
		if s.BreakGlassAt != 0 {
			row("break-glass", "hold started %s", time.Unix(s.BreakGlassAt, 0).Format("15:04:05"))
		}
		if s.Quiet && s.is(service.StateActive) {
			quiet := "other apps' notifications held back while you are here"
			if s.QuietNote != "" {
				quiet = inert.Terminal(s.QuietNote) // it may name the notification server, as it calls itself
			}
			row("quiet", "%s", quiet)
		}
	}
	row("window", "%s", windowText(s))
	if site := siteText(s); site != "" {
		row("site", "%s", site)
	}
	if s.is(service.StateActive) || s.is(service.StateReview) {
		row("switches", "%d", s.SwitchCount)
		b.WriteString(bucketChart(namedBuckets(s.Buckets, s.BucketApps), 5))
	}
	if s.AuditPending > 0 {
		row("audit", "%d %s waiting to be sealed", s.AuditPending, plural(int(s.AuditPending), "summary", "summaries"))
	}
	if len(s.Problems) > 0 {
		fmt.Fprintf(&b, "  %s\n", p.yellow("problems"))
		for _, pr := range s.Problems {
			fmt.Fprintf(&b, "    - %s\n", pr)
		}
	}
	return b.String()
}

// driftText is the Drift property in words that stand alone on a line:
// "on task", "drifting", "drift unknown" (a bare "unknown" says not what).
func driftText(drift string) string {
	switch drift {
	case service.DriftUnknown, "":
		return "drift unknown"
	case service.DriftOnTask:
		return "on task"
	}
	return strings.ReplaceAll(drift, "_", " ")
}

func windowText(s *status) string {
	switch {
	case !s.EvidenceAvailable && s.EvidenceReason != "":
		return "unknown (" + s.EvidenceReason + ")"
	case s.CurrentClass == "" && s.CurrentAppName == "":
		return "unknown"
	case s.CurrentTitle == "":
		return appLabel(s.CurrentAppName, s.CurrentClass)
	}
	return appLabel(s.CurrentAppName, s.CurrentClass) + ": " + truncate(s.CurrentTitle, 60)
}

// appLabel names a window by its app's name, with its class in
// parentheses when the class says something the name does not (apps.Label,
// the report's rule); no name: the class, as before.
func appLabel(name, class string) string {
	return apps.Label(truncate(class, 60), truncate(name, 60))
}

// namedBuckets is bs with each class that has a desktop entry in apps
// named by its app's name instead, for the chart.
func namedBuckets(bs []bucket, apps []bucketApp) []bucket {
	out := slices.Clone(bs)
	for i, b := range out {
		for _, a := range apps {
			if a.Class == b.Class && a.Name != "" {
				out[i].Class = a.Name
				break
			}
		}
	}
	return out
}

// siteText is the page in front of a browser window, or why antidrift
// sees only the window (the browser has no extension, a private window);
// "" when the focused window is no browser's.
func siteText(s *status) string {
	switch {
	case s.CurrentSite != "":
		return truncate(s.CurrentSite, 80)
	case s.SiteReason != "":
		return "none (" + s.SiteReason + ")"
	}
	return ""
}

// bucketChart draws the top n buckets as bars scaled to the longest:
//
//	Editor   main.go   ██████████ 12m
func bucketChart(bs []bucket, n int) string {
	bs = bs[:min(n, len(bs))]
	if len(bs) == 0 || bs[0].Seconds == 0 {
		return ""
	}
	const barWidth = 16
	// Two label columns, class and title; a bucket with no class, such as
	// "(evidence unavailable)", puts its title first.
	labels := make([][2]string, len(bs))
	widths := [2]int{}
	for i, b := range bs {
		labels[i] = [2]string{truncate(b.Class, 20), truncate(b.Title, 32)}
		if b.Class == "" {
			labels[i] = [2]string{truncate(b.Title, 32), ""}
		}
		for j := range widths {
			widths[j] = max(widths[j], utf8.RuneCountInString(labels[i][j]))
		}
	}
	var out strings.Builder
	out.WriteString("  time spent (up to now)\n")
	for i, b := range bs {
		fmt.Fprintf(&out, "    %s  %s  %s %s\n", pad(labels[i][0], widths[0]), pad(labels[i][1], widths[1]),
			pad(bar(b.Seconds, bs[0].Seconds, barWidth), barWidth), short(time.Duration(b.Seconds)*time.Second))
	}
	return out.String()
}

// bar is v/max of width cells, in eighths of a block; any time at all shows.
func bar(v, max uint64, width int) string {
	eighths := int(v * uint64(width*8) / max)
	if eighths == 0 && v > 0 {
		eighths = 1
	}
	s := strings.Repeat("█", eighths/8)
	if r := eighths % 8; r > 0 {
		s += string([]rune("▏▎▍▌▋▊▉")[r-1])
	}
	return s
}

// statusLine is the one-line status of status --follow, or of a one-shot
// status in a panel format. s == nil is the daemon being gone.
func statusLine(format string, s *status, now time.Time) string {
	switch format {
	case "json":
		obj := map[string]any{"state": "offline"}
		if s != nil {
			obj = s.jsonObject()
		}
		var b bytes.Buffer
		writeJSON(&b, obj)
		return strings.TrimSuffix(b.String(), "\n")
	case "waybar":
		return waybarLine(s, now)
	case "polybar":
		return inert.Polybar(panelText(s, now))
	}
	return textLine(s, now)
}

// textLine is the terminal's one-line status: state, time, drift, window.
func textLine(s *status, now time.Time) string {
	if s == nil {
		return "offline: antidriftd is not running"
	}
	s = s.forTerminal()
	parts := []string{s.State}
	switch service.State(s.State) {
	case service.StateLocked:
		parts = []string{"no session"}
	case service.StateActive:
		parts = append(parts, s.NextAction, service.ShortLeft(s.left(now))+" left", driftText(s.Drift))
	case service.StateReview:
		parts = append(parts, s.NextAction, s.Outcome)
	}
	return strings.Join(append(parts, "window "+windowText(s)), " · ")
}

// panelText is the short text for a panel: the time left and what you are
// doing, or the state.
func panelText(s *status, now time.Time) string {
	if s == nil {
		return "antidrift offline"
	}
	s = s.forTerminal()
	switch service.State(s.State) {
	case service.StateLocked:
		return "no session"
	case service.StateActive:
		t := service.ShortLeft(s.left(now)) + " · " + truncate(s.NextAction, 30)
		switch s.Drift {
		case service.DriftDrifting:
			t = "drifting · " + t
		case service.DriftBreak:
			t = "break · " + t
		}
		return t
	case service.StateReview:
		return "review: " + s.Outcome
	}
	return s.State
}

// waybarLine is one JSON object for a waybar custom module with
// "return-type": "json". Waybar reads text and tooltip as Pango markup, so
// both are escaped (inert.Markup), after the text views made the rest inert.
func waybarLine(s *status, now time.Time) string {
	class := []string{"offline"}
	tooltip := "antidriftd is not running.\n" + howToStart
	if s != nil {
		class = []string{s.State}
		if s.Drift == service.DriftDrifting || s.Drift == service.DriftBreak {
			class = append(class, s.Drift)
		}
		tooltip = strings.TrimRight(statusText(s, now, textOpts{minutes: true}), "\n")
	}
	var b bytes.Buffer
	writeJSON(&b, map[string]any{
		"text":       inert.Markup(panelText(s, now)),
		"tooltip":    inert.Markup(tooltip),
		"class":      class,
		"percentage": percentOf(s, now),
	})
	return strings.TrimSuffix(b.String(), "\n")
}

func percentOf(s *status, now time.Time) int {
	if s == nil {
		return 0
	}
	return s.percentElapsed(now)
}

// confirmation is what a command that changed the session prints: the
// change as the daemon now reports it.
func confirmation(method string, s *status, now time.Time) string {
	s = s.forTerminal()
	switch method {
	case "Plan":
		return "Planning: nothing is committed yet. Set a level with 'antidrift enforce LEVEL', then 'antidrift start'."
	case "CancelPlan":
		return "Plan cancelled: no session."
	case "Start":
		return fmt.Sprintf("Started: %s\n  done when %s; %s, until %s; enforcement %s%s",
			s.NextAction, s.SuccessCondition, exact(s.TimeboxSeconds),
			time.Unix(s.Deadline, 0).Format("15:04"), s.Enforcement, allowedSuffix(s))
	case "StartTask":
		return confirmation("Start", s, now) + "\n  task " + s.TaskRef
	case "Complete", "CompleteKeepTask", "Abandon":
		return fmt.Sprintf("%s: %s. Seal it with 'antidrift end'.", upperFirst(s.Outcome), s.NextAction)
	case "Extend":
		return fmt.Sprintf("Extended: %s left, until %s.", span(s.left(now)), time.Unix(s.Deadline, 0).Format("15:04"))
	case "Refocus":
		return "Back to: " + s.NextAction
	case "Allow":
		return "Allowed classes: " + strings.Join(s.AllowedClasses, ", ")
	case "SetEnforcement":
		if s.is(service.StatePlanning) {
			return "Enforcement for the next start: " + s.Enforcement
		}
		return "Enforcement: " + s.Enforcement
	}
	return "Done."
}

func allowedSuffix(s *status) string {
	if len(s.AllowedClasses) == 0 {
		return ""
	}
	return "; allowed: " + strings.Join(s.AllowedClasses, ", ")
}

// historyText is the sealed sessions as a table, newest first.
func historyText(entries []map[string]dbus.Variant) string {
	if len(entries) == 0 {
		return "No sealed sessions yet.\n"
	}
	var b bytes.Buffer
	tw := tabwriter.NewWriter(&b, 0, 0, 2, ' ', 0)
	// With sync_dir the entries come from many machines, each named.
	_, many := entries[0]["device"]
	if many {
		fmt.Fprint(tw, "DEVICE\t")
	}
	fmt.Fprintln(tw, "SEQ\tENDED\tTOOK\tOUTCOME\tLEVEL\tSWITCHES\tDRIFT\tNEXT ACTION")
	for _, e := range entries {
		if many {
			var device string
			_ = e["device"].Store(&device)
			fmt.Fprintf(tw, "%s\t", truncate(inert.Terminal(device), 16))
		}
		var (
			seq, switches              uint32
			started, ended             int64
			drift                      uint64
			outcome, level, nextAction string
		)
		for k, dst := range map[string]any{"seq": &seq, "switch_count": &switches, "started_unix": &started,
			"ended_unix": &ended, "drift_seconds": &drift, "outcome": &outcome, "enforcement": &level, "next_action": &nextAction} {
			if v, ok := e[k]; ok {
				_ = v.Store(dst)
			}
		}
		fmt.Fprintf(tw, "%d\t%s\t%s\t%s\t%s\t%d\t%s\t%s\n", seq, time.Unix(ended, 0).Format("2006-01-02 15:04"),
			short(time.Duration(ended-started)*time.Second), inert.Terminal(outcome), inert.Terminal(level), switches,
			short(time.Duration(drift)*time.Second), truncate(inert.Terminal(nextAction), 50))
	}
	tw.Flush()
	return b.String()
}

// span is a duration to the second: 45s, 12m04s, 1h05m00s. Negative is
// "0s": the deadline has passed.
func span(d time.Duration) string {
	d = max(0, d).Round(time.Second)
	h, m, s := int(d.Hours()), int(d.Minutes())%60, int(d.Seconds())%60
	switch {
	case h > 0:
		return fmt.Sprintf("%dh%02dm%02ds", h, m, s)
	case m > 0:
		return fmt.Sprintf("%dm%02ds", m, s)
	}
	return fmt.Sprintf("%ds", s)
}

// short is a duration to the minute for amounts: 45s, 12m, 1h05m.
func short(d time.Duration) string {
	d = max(0, d)
	switch {
	case d < time.Minute:
		return fmt.Sprintf("%ds", int(d.Seconds()))
	case d < time.Hour:
		return fmt.Sprintf("%dm", int(d.Minutes()))
	}
	return fmt.Sprintf("%dh%02dm", int(d.Hours()), int(d.Minutes())%60)
}

// exact is a whole number of seconds as Go writes durations, without the
// zero tails: 25m, 1h30m, 1m30s.
func exact(secs uint64) string {
	s := (time.Duration(secs) * time.Second).String()
	if strings.HasSuffix(s, "m0s") {
		s = s[:len(s)-2]
	}
	if strings.HasSuffix(s, "h0m") {
		s = s[:len(s)-2]
	}
	return s
}

func truncate(s string, n int) string {
	if utf8.RuneCountInString(s) <= n {
		return s
	}
	return string([]rune(s)[:n-1]) + "…"
}

func pad(s string, width int) string {
	return s + strings.Repeat(" ", max(0, width-utf8.RuneCountInString(s)))
}

func orDefault(level string) string {
	if level == "" {
		return "the configured default (set one with antidrift enforce LEVEL)"
	}
	return level
}

func plural(n int, one, many string) string {
	if n == 1 {
		return one
	}
	return many
}

// useColour says whether w gets ANSI colour: only a terminal, and never
// when NO_COLOR is set (https://no-color.org) or TERM is dumb.
func useColour(w io.Writer) bool {
	f, ok := w.(*os.File)
	if !ok || os.Getenv("NO_COLOR") != "" || os.Getenv("TERM") == "dumb" {
		return false
	}
	fi, err := f.Stat()
	return err == nil && fi.Mode()&os.ModeCharDevice != 0
}

// painter wraps text in ANSI colour, or leaves it alone.
type painter bool

func (p painter) paint(code, s string) string {
	if !p || s == "" {
		return s
	}
	return "\x1b[" + code + "m" + s + "\x1b[0m"
}

func (p painter) bold(s string) string   { return p.paint("1", s) }
func (p painter) green(s string) string  { return p.paint("32", s) }
func (p painter) yellow(s string) string { return p.paint("33", s) }
func (p painter) red(s string) string    { return p.paint("1;31", s) }
