package service

import (
	"strings"
	"time"
	"unicode"
	"unicode/utf8"

	"github.com/antidrift/antidrift/service/rule"
)

// The limits a caller can hit. They are generous for a person and keep a
// buggy or hostile client from growing the daemon's memory or files.
const (
	MaxTextLen          = 500 // next action, success condition, reasons
	MaxTimebox          = 24 * time.Hour
	MaxAllowed          = 64
	MaxClassLen         = rule.MaxLen // a class, and a rule (service/rule)
	MaxHistoryLimit     = 1000
	DefaultHistoryLimit = 50
)

// startArgs are Start's arguments as checked.
type startArgs struct {
	next, success string
	level         Level // "": the planned or configured one
	classes       []string
	rules         []Rule
}

// checkStart checks Start's arguments, in their order.
func checkStart(nextAction, successCondition string, timeboxSecs uint64, enforcement string, allowed []string) (a startArgs, err *Error) {
	if a.next, err = cleanText("next_action", nextAction, true); err != nil {
		return a, err
	}
	if a.success, err = cleanText("success_condition", successCondition, true); err != nil {
		return a, err
	}
	if err = checkTimebox("timebox_secs", timeboxSecs); err != nil {
		return a, err
	}
	if enforcement != "" {
		if a.level, err = parseLevel("enforcement", enforcement); err != nil {
			return a, err
		}
	}
	a.classes, a.rules, err = cleanRules("allowed_classes", allowed)
	return a, err
}

// CheckCall is what the core checks of a call of m's arguments before it
// looks at any state, as the Fault it would answer; nil when they pass (or
// are not of m's types: the daemon says so). A client checks it before it
// calls, so an argument too large to be sent at all (the daemon reads no
// message over 64 KiB) is said in the same words and with the same exit
// as one a little too long, which the daemon refuses. args are the call's
// D-Bus arguments, in order.
func CheckCall(m Method, args ...any) *Fault {
	str := func(i int) (string, bool) {
		if i >= len(args) {
			return "", false
		}
		v, ok := args[i].(string)
		return v, ok
	}
	var err *Error
	switch m {
	case MethodStart:
		if len(args) != 5 {
			return nil
		}
		next, ok1 := str(0)
		success, ok2 := str(1)
		secs, ok3 := args[2].(uint64)
		level, ok4 := str(3)
		allowed, ok5 := args[4].([]string)
		if !ok1 || !ok2 || !ok3 || !ok4 || !ok5 {
			return nil
		}
		_, err = checkStart(next, success, secs, level, allowed)
	case MethodAbandon, MethodBreakGlass:
		if reason, ok := str(0); ok {
			_, err = cleanText("reason", reason, m == MethodBreakGlass)
		}
	case MethodAllow:
		if entry, ok := str(0); ok {
			_, err = cleanRule("window_class", 0, entry)
		}
	case MethodExtend:
		if len(args) == 1 {
			if secs, ok := args[0].(uint64); ok {
				err = checkTimebox("secs", secs)
			}
		}
	case MethodSetEnforcement:
		if level, ok := str(0); ok {
			_, err = parseLevel("level", level)
		}
	case MethodReportDevice:
		if len(args) == 3 {
			if device, ok := args[2].(string); ok {
				_, err = cleanText("device", device, false)
			}
		}
	}
	if err == nil {
		return nil
	}
	return err.Fault
}

// cleanText trims s and checks it against the text rule; name is the
// argument's name as the caller knows it.
func cleanText(name, s string, required bool) (string, *Error) {
	s = strings.TrimSpace(s)
	if !utf8.ValidString(s) {
		return "", (&Fault{Argument: name, Rule: RuleUTF8}).err()
	}
	n := utf8.RuneCountInString(s)
	switch {
	case required && n == 0:
		return "", (&Fault{Argument: name, Rule: RuleEmpty, Limit: MaxTextLen}).err()
	case n > MaxTextLen:
		return "", (&Fault{Argument: name, Rule: RuleLength, Got: uint64(n), Limit: MaxTextLen}).err()
	case strings.IndexFunc(s, unicode.IsControl) >= 0:
		return "", (&Fault{Argument: name, Rule: RuleControl}).err()
	}
	return s, nil
}

// checkTimebox checks a duration in seconds against 1 s – 24 h.
func checkTimebox(name string, secs uint64) *Error {
	if secs < 1 || secs > uint64(MaxTimebox/time.Second) {
		return (&Fault{Argument: name, Rule: RuleTimebox, Got: secs, Limit: int64(MaxTimebox / time.Second)}).err()
	}
	return nil
}

// parseLevel accepts one of observe, warn, block, locked. Empty is handled
// by the caller, because only Start gives it a meaning.
func parseLevel(name, s string) (Level, *Error) {
	l := Level(s)
	if l.rank() < 0 {
		return "", (&Fault{Argument: name, Rule: RuleLevel, Got: s}).err()
	}
	return l, nil
}

func containsFold(list []string, s string) bool {
	for _, x := range list {
		if strings.EqualFold(x, s) {
			return true
		}
	}
	return false
}
