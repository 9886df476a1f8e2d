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

// why is the person-readable reason of r, the middle of its message.
func (r *Refusal) why() string {
	switch r.Because {
	case BecauseState:
		return fmt.Sprintf("antidrift is %s, and %s works only when it is %s", r.State.phrase(), r.Method, joinStates(r.WorksIn))
	case BecauseUnclassified:
		return fmt.Sprintf("%s is not in antidrift's permission table, so no state permits it", r.Method)
	case BecauseLocked:
		return "this session is at enforcement level locked, which refuses Abandon before the deadline; a BreakGlass hold permits it once the hold has elapsed"
	case BecauseHold:
		return fmt.Sprintf("this session is at enforcement level locked and its break-glass hold has %s left", time.Duration(r.HoldLeft)*time.Second)
	case BecauseWidening:
		return "this session is at enforcement level locked, which refuses anything that widens the session's allowlist before the deadline"
	case BecauseLowering:
		return "this session is at enforcement level locked, which refuses lowering the level before the deadline"
	case BecauseOutcome:
		return fmt.Sprintf("this session is in review with outcome %s; only an expired session can be extended back to active", r.Outcome)
	case BecauseNotLocked:
		return fmt.Sprintf("this session is at enforcement level %s, not locked, so there is no glass to break: Abandon works as it is", r.Level)
	}
	return string(r.Because)
}

func (r *Refusal) err() *Error {
	now := make([]string, len(r.Permitted))
	for i, m := range r.Permitted {
		now[i] = string(m)
	}
	return &Error{Kind: NotPermitted, Refusal: r, Msg: fmt.Sprintf(
		"%s is not permitted: %s. It is the session's state refusing, not a fault, so retrying will not help. What works now: %s.",
		r.Method, r.why(), strings.Join(now, ", "))}
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

// message is the person-readable sentence of f.
func (f *Fault) message() string {
	name := f.Argument
	if f.Entry > 0 {
		name = fmt.Sprintf("%s entry %d", f.Argument, f.Entry)
	}
	switch f.Rule {
	case RuleUTF8:
		return name + " must be valid UTF-8"
	case RuleEmpty:
		return fmt.Sprintf("%s must not be empty (1–%d characters after trimming)", name, f.Limit)
	case RuleLength:
		return fmt.Sprintf("%s is %v characters; at most %d are allowed", name, f.Got, f.Limit)
	case RuleControl:
		return name + " must not contain control characters (newlines, tabs, escapes)"
	case RuleTimebox:
		return fmt.Sprintf("%s must be between 1 second and 24 hours (%d s); got %v s", name, f.Limit, f.Got)
	case RuleLevel:
		return fmt.Sprintf("%s must be one of observe, warn, block, locked; got %s", name, Quote(fmt.Sprint(f.Got)))
	case RuleEntry:
		return fmt.Sprintf("%s %s is not a valid entry: %s", name, Quote(fmt.Sprint(f.Got)), f.Detail)
	case RuleEntries:
		return fmt.Sprintf("%s has %v entries; at most %d are allowed", name, f.Got, f.Limit)
	case RuleTimeboxTotal:
		return fmt.Sprintf("%s: extending by %v s would make the timebox %s; a session is at most 24 hours", name, f.Got, time.Duration(f.Total)*time.Second)
	case RuleAllowFull:
		return fmt.Sprintf("%s: this session already allows %d classes, the most there can be", name, f.Limit)
	case RuleAtMost:
		return fmt.Sprintf("%s must be at most %d; got %v", name, f.Limit, f.Got)
	case RuleTime:
		return fmt.Sprintf("%s must be a time from 1970 to the end of the year 9999 (0 to %d); got %v", name, f.Limit, f.Got)
	case RuleAfter:
		return fmt.Sprintf("until_unix must be after since_unix; got until_unix %v, since_unix %d", f.Got, f.Limit)
	case RuleDays:
		return fmt.Sprintf("the range may be at most %d days; got %v days", f.Limit, f.Got)
	case RuleDevice:
		return fmt.Sprintf("%s: %s", name, (&NoSuchDevice{Device: fmt.Sprint(f.Got), Devices: f.Choices}).Error())
	case RuleProposal:
		if f.Limit == 0 {
			return fmt.Sprintf("%s is %v, but this session's review proposes nothing", name, f.Got)
		}
		return fmt.Sprintf("%s is %v, but this session's review has proposals 1 to %d", name, f.Got, f.Limit)
	}
	return name + " is not valid"
}

func (f *Fault) err() *Error {
	return &Error{Kind: InvalidArgument, Fault: f, Msg: f.message()}
}

// invalid is an InvalidArgument whose message is all there is: for a rule
// no one argument breaks alone.
func invalid(format string, args ...any) *Error {
	return &Error{Kind: InvalidArgument, Msg: fmt.Sprintf(format, args...)}
}
