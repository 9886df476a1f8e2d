package service

import (
	"fmt"
	"strings"
	"time"
)

// ErrorKind names why the core refused or failed a call. dbusapi maps each
// kind to an org.antidrift.Error.* name.
type ErrorKind int

const (
	// NotPermitted: the state or enforcement level refuses the call. The
	// message says so, that retrying will not help, and what works now.
	NotPermitted ErrorKind = iota + 1
	// InvalidArgument: an argument broke a rule; the message names both.
	InvalidArgument
	// Storage: the disk failed a read the caller asked for.
	Storage
	// TaskSourceFailed: a task manager could not be asked (a task binary
	// missing or hanging, a CalDAV server down or refusing).
	TaskSourceFailed
	// NoModel: the coach was asked and no model is configured.
	NoModel
	// CoachFailed: the coach's model did not answer in time, could not be
	// reached, or answered something that is not a usable proposal; the
	// message says which. Nothing was changed.
	CoachFailed
)

func (k ErrorKind) String() string {
	switch k {
	case NotPermitted:
		return "NotPermitted"
	case InvalidArgument:
		return "InvalidArgument"
	case Storage:
		return "Storage"
	case TaskSourceFailed:
		return "TaskSource"
	case NoModel:
		return "NoModel"
	case CoachFailed:
		return "CoachFailed"
	}
	return fmt.Sprintf("ErrorKind(%d)", int(k))
}

// Error is a refusal or failure with a message written for a person, and,
// for a refusal, what it says as data: a client words it in its own terms
// or acts on it from these, never by reading Msg.
type Error struct {
	Kind    ErrorKind
	Msg     string
	Refusal *Refusal // set on every NotPermitted
	Fault   *Fault   // set on InvalidArgument, except a few without one argument at fault
}

func (e *Error) Error() string { return e.Msg }

// Refusal is a NotPermitted as data: the method refused, the state and
// level refusing it, which condition of the permission table refused, and
// what works now.
type Refusal struct {
	Method    Method
	State     State    // the session's state
	Level     Level    // the session's enforcement level; "" when there is no session
	Because   Because  // the condition that refused
	WorksIn   []State  // BecauseState: the states Method works in
	Outcome   Outcome  // BecauseOutcome: the reviewed session's outcome
	HoldLeft  uint64   // BecauseHold: seconds left of the break-glass hold
	Permitted []Method // what the state and level permit now, for a person (not evidence)
}

// Because names the condition of the permission table that refused a
// call. The values are part of the bus API (docs/dbus-api.md).
type Because string

const (
	BecauseState        Because = "state"           // Method does not work in State
	BecauseUnclassified Because = "unclassified"    // no state permits Method: it is not in the table
	BecauseLocked       Because = "locked"          // level locked refuses Abandon until the deadline or an elapsed break-glass hold
	BecauseHold         Because = "hold"            // level locked, and the break-glass hold has HoldLeft to run
	BecauseWidening     Because = "locked_widening" // level locked refuses widening the allowlist before the deadline
	BecauseLowering     Because = "locked_lowering" // level locked refuses lowering the level before the deadline
	BecauseOutcome      Because = "outcome"         // in review with Outcome: only an expired session can be extended
	BecauseNotLocked    Because = "not_locked"      // BreakGlass at Level, which has no glass to break
)

// Words are how a reader names what a refusal speaks of. The sentences
// of refusals (Refusal.Why) and of arguments at fault (Fault.Say) are
// written once, here, in these words: the daemon's message on the bus says
// them in the bus's own (BusWords: methods, arguments, seconds), and the
// CLI in a person's at a prompt (commands, flags, durations such as 25m),
// from the data the error carries. A change to a sentence is made here and
// read in both.
type Words struct {
	Method   func(m Method) string              // how m is called: "Abandon", "antidrift abandon"
	Argument func(m Method, name string) string // how m's argument name is given: "timebox_secs", "--for"
	Secs     func(secs uint64) string           // seconds as an argument gives them: "90 s", "1m30s"
	Duration func(secs uint64) string           // a length of time: "4m30s"
}

// BusWords are the bus's own words: the method and argument names of the
// interface, an argument's seconds as the number sent, and a length of
// time as Go writes a duration (4m30s).
var BusWords = Words{
	Method:   func(m Method) string { return string(m) },
	Argument: func(_ Method, name string) string { return name },
	Secs:     func(secs uint64) string { return fmt.Sprintf("%d s", secs) },
	Duration: func(secs uint64) string { return (time.Duration(secs) * time.Second).String() },
}

// stateIs says where antidrift is in state; stateWhen, where a method
// works ("locked" is also an enforcement level, so it is never said of a
// state).
var (
	stateIs = map[State]string{
		StateLocked:   "there is no session",
		StatePlanning: "a session is being planned",
		StateActive:   "a session is active",
		StateReview:   "a session is in review",
	}
	stateWhen = map[State]string{
		StateLocked:   "there is no session",
		StatePlanning: "planning",
		StateActive:   "a session is active",
		StateReview:   "a session is in review",
	}
)

// Known reports whether b is one of the conditions this build words.
func (b Because) Known() bool {
	switch b {
	case BecauseState, BecauseUnclassified, BecauseLocked, BecauseHold, BecauseWidening, BecauseLowering, BecauseOutcome, BecauseNotLocked:
		return true
	}
	return false
}

// Why is the reason of r in w's words: the middle of its message.
func (r *Refusal) Why(w Words) string {
	m := w.Method(r.Method)
	switch r.Because {
	case BecauseState:
		when := make([]string, len(r.WorksIn))
		for i, st := range r.WorksIn {
			when[i] = stateWhen[st]
		}
		return fmt.Sprintf("%s, and %s works only when %s", stateIs[r.State], m, strings.Join(when, " or "))
	case BecauseUnclassified:
		return m + " is not in antidrift's permission table, so no state permits it"
	case BecauseLocked:
		return "this session is at enforcement level locked, which refuses " + m +
			" before the deadline; a break-glass hold (" + w.Method(MethodBreakGlass) + ") permits it once the hold has elapsed"
	case BecauseHold:
		return "this session is at enforcement level locked and its break-glass hold has " + w.Duration(r.HoldLeft) + " left"
	case BecauseWidening:
		return "this session is at enforcement level locked, which refuses anything that widens the session's allowlist before the deadline"
	case BecauseLowering:
		return "this session is at enforcement level locked, which refuses lowering the level before the deadline"
	case BecauseOutcome:
		return fmt.Sprintf("this session is in review with outcome %s; only an expired session can be extended back to active", r.Outcome)
	case BecauseNotLocked:
		return fmt.Sprintf("this session is at enforcement level %s, not locked, so there is no glass to break: %s works as it is", r.Level, w.Method(MethodAbandon))
	}
	return string(r.Because)
}

// Retry says what trying again would do, after Why: nothing, while the
// state or level stays as it is; once the hold has elapsed, it works. ""
// where Why already says it all (there is no session: nothing to refuse
// but its absence).
func (r *Refusal) Retry() string {
	switch {
	case r.Because == BecauseState && r.State == StateLocked:
		return ""
	case r.Because == BecauseHold:
		return "That is the session's state refusing, not a fault: it works once the hold has elapsed."
	}
	return "That is the session's state refusing, not a fault: retrying will not help."
}

func (r *Refusal) err() *Error {
	now := make([]string, len(r.Permitted))
	for i, m := range r.Permitted {
		now[i] = string(m)
	}
	return &Error{Kind: NotPermitted, Refusal: r, Msg: fmt.Sprintf(
		"%s is not permitted: %s. It is the session's state refusing, not a fault, so retrying will not help. What works now: %s.",
		r.Method, r.Why(BusWords), strings.Join(now, ", "))}
}

// Fault is an InvalidArgument as data: the argument at fault, the rule it
// broke, what it was and the rule's limit.
type Fault struct {
	Argument string // as the method names it: timebox_secs, allowed_classes
	Entry    int    // which entry of a list argument, from 1; 0: the argument as a whole
	Rule     ArgRule
	// Got is what the argument was: a uint64 (seconds, characters,
	// entries), an int64 (a Unix time) or a string (a level as sent, an
	// entry as trimmed); nil where the rule needs none.
	Got   any
	Limit int64  // the rule's bound (characters, seconds, entries, days, a Unix time); 0 if none
	Total uint64 // RuleTimeboxTotal: the timebox in seconds the call would make
	// Detail is the rest of the reason where a rule has more to say:
	// RuleEntry's why the entry does not parse, and the syntax.
	Detail string
	// Choices are the values the argument may take, where they are few
	// and known only now: RuleDevice's names of the machines.
	Choices []string
}

// ArgRule names a rule an argument can break. The values are part of the
// bus API (docs/dbus-api.md).
type ArgRule string

const (
	RuleUTF8         ArgRule = "utf8"          // text must be valid UTF-8
	RuleEmpty        ArgRule = "empty"         // text must not be empty after trimming; Limit characters at most
	RuleLength       ArgRule = "length"        // text is Got characters, more than Limit
	RuleControl      ArgRule = "control"       // text must not hold control characters
	RuleTimebox      ArgRule = "timebox"       // seconds must be 1 to Limit; Got was not
	RuleLevel        ArgRule = "level"         // not an enforcement level: Got as sent
	RuleEntry        ArgRule = "entry"         // entry Got of a list does not parse; Detail says why
	RuleEntries      ArgRule = "entries"       // a list has Got entries, more than Limit
	RuleTimeboxTotal ArgRule = "timebox_total" // extending by Got seconds would make the timebox Total, past Limit
	RuleAllowFull    ArgRule = "allow_full"    // the session already allows Limit classes, the most there can be
	RuleAtMost       ArgRule = "at_most"       // a number is Got, more than Limit
	RuleTime         ArgRule = "time"          // a Unix time must be 0 to Limit; Got was not
	RuleAfter        ArgRule = "after"         // until_unix Got must be after since_unix Limit
	RuleDays         ArgRule = "days"          // the range is Got days, more than Limit
	RuleDevice       ArgRule = "device"        // no machine sharing sync_dir is named Got; Choices are their names
	RuleProposal     ArgRule = "proposal"      // the review has no proposal Got; it has 1 to Limit (0: none)
)

// Known reports whether r is one of the rules this build words.
func (r ArgRule) Known() bool {
	switch r {
	case RuleUTF8, RuleEmpty, RuleLength, RuleControl, RuleTimebox, RuleLevel, RuleEntry, RuleEntries,
		RuleTimeboxTotal, RuleAllowFull, RuleAtMost, RuleTime, RuleAfter, RuleDays, RuleDevice, RuleProposal:
		return true
	}
	return false
}

// Say is f, an argument of method m at fault, in w's words.
func (f *Fault) Say(w Words, m Method) string {
	arg := func(name string) string { return w.Argument(m, name) }
	name := arg(f.Argument)
	flag := strings.HasPrefix(name, "--") // a flag, given once per entry (the CLI's --allow)
	if f.Entry > 0 && !flag {
		name = fmt.Sprintf("%s entry %d", name, f.Entry)
	}
	got := fmt.Sprint(f.Got)
	gotSecs := func() string { n, _ := f.Got.(uint64); return w.Secs(n) }
	switch f.Rule {
	case RuleUTF8:
		return name + " must be valid UTF-8"
	case RuleEmpty:
		return fmt.Sprintf("%s must not be empty (1–%d characters after trimming)", name, f.Limit)
	case RuleLength:
		return fmt.Sprintf("%s is %s characters; at most %d are allowed", name, got, f.Limit)
	case RuleControl:
		return name + " must not contain control characters (newlines, tabs, escapes)"
	case RuleTimebox:
		return fmt.Sprintf("%s must be between 1 second and 24 hours (%s); got %s", name, w.Secs(uint64(f.Limit)), gotSecs())
	case RuleLevel:
		return fmt.Sprintf("%s must be one of observe, warn, block, locked; got %s", name, Quote(got))
	case RuleEntry:
		return fmt.Sprintf("%s %s is not a valid entry: %s", name, Quote(got), f.Detail)
	case RuleEntries:
		if flag {
			return fmt.Sprintf("%s is given %s times; at most %d are allowed", name, got, f.Limit)
		}
		return fmt.Sprintf("%s has %s entries; at most %d are allowed", name, got, f.Limit)
	case RuleTimeboxTotal:
		return fmt.Sprintf("%s: extending by %s would make the timebox %s; a session is at most 24 hours", name, gotSecs(), w.Duration(f.Total))
	case RuleAllowFull:
		return fmt.Sprintf("%s: this session already allows %d classes, the most there can be", name, f.Limit)
	case RuleAtMost:
		return fmt.Sprintf("%s must be at most %d; got %s", name, f.Limit, got)
	case RuleTime:
		return fmt.Sprintf("%s must be a time from 1970 to the end of the year 9999 (0 to %d); got %s", name, f.Limit, got)
	case RuleAfter:
		return fmt.Sprintf("%s must be after %s; got %s %s, %s %d", arg("until_unix"), arg("since_unix"), arg("until_unix"), got, arg("since_unix"), f.Limit)
	case RuleDays:
		return fmt.Sprintf("the range may be at most %d days; got %s days", f.Limit, got)
	case RuleDevice:
		return fmt.Sprintf("%s: %s", name, (&NoSuchDevice{Device: got, Devices: f.Choices}).Error())
	case RuleProposal:
		if f.Limit == 0 {
			return fmt.Sprintf("%s %s: this session's review proposes nothing", name, got)
		}
		return fmt.Sprintf("%s %s: this session's review has proposals 1 to %d (%s lists them)", name, got, f.Limit, w.Method(MethodReviewProposals))
	}
	return name + " is not valid"
}

func (f *Fault) err() *Error {
	return &Error{Kind: InvalidArgument, Fault: f, Msg: f.Say(BusWords, "")}
}

// invalid is an InvalidArgument whose message is all there is: for a rule
// no one argument breaks alone.
func invalid(format string, args ...any) *Error {
	return &Error{Kind: InvalidArgument, Msg: fmt.Sprintf(format, args...)}
}
