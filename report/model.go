package report

// Schema is the version of the JSON document. It changes only when a key
// changes meaning or goes away; new keys may be added without a change.
const Schema = 1

// Report is one period's picture. Its JSON form is the documented schema
// (docs/reports.md, "The JSON schema"): every duration is whole seconds, every instant unix
// seconds (milliseconds in timelines), every share a fraction 0–1.
type Report struct {
	Schema int    `json:"schema"`
	Period Period `json:"period"`
	// Chain is the audit chain's verification, done before anything else
	// is read: a broken chain is said first.
	Chain Chain `json:"chain"`
	// Pending counts ended sessions not yet sealed into the chain; they
	// are included (their Pending is true).
	Pending int `json:"pending"`
	// Problems are sentences about what could not be read.
	Problems []string `json:"problems"`
	Totals   Totals   `json:"totals"`
	// Previous is the same figures for the period of the same length just
	// before this one.
	Previous Totals       `json:"previous"`
	Days     []Day        `json:"days"`
	Sessions []Session    `json:"sessions"`
	Windows  []WindowTime `json:"windows"`
	// Devices is each machine's figures when the report covers the
	// machines sharing sync_dir (absent when it covers this one alone);
	// Totals is then all of them together.
	Devices []DeviceTotals `json:"devices,omitempty"`
	// Sites is the hosts with the most time in front of a browser window
	// (its extension reporting them, docs/browsers.md).
	Sites []SiteTime `json:"sites"`
}

// Period is the time reported on: sessions that started in
// [since_unix, until_unix).
type Period struct {
	SinceUnix int64  `json:"since_unix"`
	UntilUnix int64  `json:"until_unix"`
	FirstDay  string `json:"first_day"` // YYYY-MM-DD, local
	LastDay   string `json:"last_day"`  // YYYY-MM-DD, local, inclusive
	Days      int    `json:"days"`
	TimeZone  string `json:"time_zone"`
}

// Chain is the result of verifying audit.jsonl.
type Chain struct {
	OK      bool   `json:"ok"`
	Entries uint32 `json:"entries"`
	Problem string `json:"problem"`
}

// Totals sums the sessions of a period.
type Totals struct {
	SinceUnix int64 `json:"since_unix"`
	UntilUnix int64 `json:"until_unix"`
	Sessions  int   `json:"sessions"`
	Completed int   `json:"completed"`
	Expired   int   `json:"expired"`
	Abandoned int   `json:"abandoned"`
	// CompletionRate is completed / sessions (0 with no sessions).
	CompletionRate float64 `json:"completion_rate"`
	// CommittedSeconds sums the timeboxes; ActiveSeconds the time the
	// sessions were active (their buckets), which OnTask, Drift, Away and
	// Unavailable (no window was known) split.
	CommittedSeconds   uint64 `json:"committed_seconds"`
	ActiveSeconds      uint64 `json:"active_seconds"`
	OnTaskSeconds      uint64 `json:"on_task_seconds"`
	DriftSeconds       uint64 `json:"drift_seconds"`
	AwaySeconds        uint64 `json:"away_seconds"`
	UnavailableSeconds uint64 `json:"unavailable_seconds"`
	Switches           uint64 `json:"switches"`
	// SwitchesPerHour is context switches per hour at the desk (active
	// time less away).
	SwitchesPerHour float64 `json:"switches_per_hour"`
	Minimized       uint64  `json:"minimized"`   // windows iconified
	BreakGlass      int     `json:"break_glass"` // sessions abandoned through a break-glass hold
	// OverlapSeconds is, over many machines, the active time during which
	// sessions ran on two or more at once: ActiveSeconds counts it once
	// (the union of the sessions' time), the parts (on task, drift, …)
	// are each machine's and add up to ActiveSeconds + OverlapSeconds.
	OverlapSeconds uint64 `json:"overlap_seconds,omitempty"`
}

// Day is one local calendar day of the period; a session counts on the
// day it started.
type Day struct {
	Date               string `json:"date"` // YYYY-MM-DD
	Sessions           int    `json:"sessions"`
	OnTaskSeconds      uint64 `json:"on_task_seconds"`
	DriftSeconds       uint64 `json:"drift_seconds"`
	AwaySeconds        uint64 `json:"away_seconds"`
	UnavailableSeconds uint64 `json:"unavailable_seconds"`
}

// Session is one ended session, oldest first.
type Session struct {
	Seq                uint64  `json:"seq"` // 0 while pending
	SessionID          string  `json:"session_id"`
	Pending            bool    `json:"pending"`
	StartedUnix        int64   `json:"started_unix"`
	EndedUnix          int64   `json:"ended_unix"`
	NextAction         string  `json:"next_action"`
	Outcome            string  `json:"outcome"`
	Enforcement        string  `json:"enforcement"`
	TimeboxSeconds     uint64  `json:"timebox_seconds"`
	ActiveSeconds      uint64  `json:"active_seconds"`
	OnTaskSeconds      uint64  `json:"on_task_seconds"`
	DriftSeconds       uint64  `json:"drift_seconds"`
	AwaySeconds        uint64  `json:"away_seconds"`
	UnavailableSeconds uint64  `json:"unavailable_seconds"`
	DriftShare         float64 `json:"drift_share"` // drift / active
	Switches           uint32  `json:"switches"`
	Minimized          uint32  `json:"minimized"`
	BreakGlass         bool    `json:"break_glass"`
	// Timeline is which window had focus when, from the raw log; null once
	// the raw log is pruned.
	Timeline []Stretch `json:"timeline"`
	// Top is the session's longest buckets from its summary (at most 5).
	Top []Bucket `json:"top"`
	// Device and DeviceID name the machine the session ran on, when the
	// report covers the machines sharing sync_dir.
	Device   string `json:"device,omitempty"`
	DeviceID string `json:"device_id,omitempty"`
}

// DeviceTotals is one machine's part of a report over many: its chain's
// verification and its figures. A machine whose copy does not verify is
// listed with OK false and its Problem, and counts in no figure.
type DeviceTotals struct {
	DeviceID   string `json:"device_id"`
	Name       string `json:"name"`
	ThisDevice bool   `json:"this_device"`
	// Form is "chain" (its sealed summaries with titles), "totals" (titles
	// kept on that machine) or "state" (this machine, read from its state
	// directory).
	Form    string `json:"form"`
	OK      bool   `json:"ok"`
	Entries uint32 `json:"entries"`
	Problem string `json:"problem"`
	Totals  Totals `json:"totals"`
	// Key is the fingerprint of the key the machine's copy is held to
	// (its pinned key; this machine's own for this one); Pinned says, the
	// first time this machine read the copy, that its key was pinned then.
	Key    string `json:"key,omitempty"`
	Pinned string `json:"pinned,omitempty"`
}

// Stretch is a span of a session's active time in one kind and window
// class. Kind is on_task, drift, away or unavailable.
type Stretch struct {
	FromUnixMillis int64  `json:"from_unix_millis"`
	ToUnixMillis   int64  `json:"to_unix_millis"`
	Kind           string `json:"kind"`
	Class          string `json:"class"`
	App
}

// App is the desktop entry of a window class, beside the class wherever
// one appears, when the desktop knows one (Options.Apps); each key is
// omitted otherwise. Name is localized as the desktop shows it; all three
// are outside text, exact here and neutralized where rendered.
type App struct {
	Name      string `json:"app,omitempty"`        // the entry's Name, e.g. "Firefox"
	DesktopID string `json:"desktop_id,omitempty"` // e.g. "org.mozilla.firefox", no ".desktop"
	Icon      string `json:"icon,omitempty"`       // its Icon=: a theme icon name or an absolute path
}

// Bucket is time in one window class and title; the title as today's
// private_classes and redact_titles allow it ("" when private). Reserved
// buckets have an empty class and a title like "(away)".
type Bucket struct {
	Class string `json:"class"`
	App
	Title   string `json:"title"`
	Seconds uint64 `json:"seconds"`
}

// WindowTime is a window class's time over the period, longest first.
// UnsplitSeconds is time from sessions whose raw log is pruned and that
// drifted: their summary records a window's time but not whether it was
// on task or drift.
type WindowTime struct {
	Class string `json:"class"`
	App
	OnTaskSeconds  uint64   `json:"on_task_seconds"`
	DriftSeconds   uint64   `json:"drift_seconds"`
	UnsplitSeconds uint64   `json:"unsplit_seconds"`
	Titles         []Bucket `json:"titles"` // the class's longest titles (at most 3)
}
