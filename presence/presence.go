// Package presence follows whether the person is at the desk, as the
// desktop's own services say it: the screen saver on the session bus
// (org.freedesktop.ScreenSaver, org.gnome.ScreenSaver), GNOME Shell's break
// reminders (org.gnome.Shell.ScreenTime: a break the desktop asked for is
// away too) and logind on the system bus (the session's LockedHint,
// PrepareForSleep). Each watcher
// believes only the current owner of its service's name, learnt through
// internal/busname, and reports an Event per change; the daemon hands them
// to the core as away reasons.
package presence

import "errors"

// Event says the person went away (or came back) for a reason.
//
// Each watcher reports what its own source says, one event per change: the
// same (Reason, Away) is never reported twice in a row by one watcher. Two
// sources can both say "locked" (the screen saver on the session bus and
// logind's LockedHint on the system bus); Source tells them apart, so the core
// can keep a set of (Source, Reason) and count the person away while any of
// them is.
type Event struct {
	Reason string // ReasonLocked, ReasonSleep or ReasonBreak
	Away   bool   // true: went away; false: came back
	Source string // SourceScreenSaver, SourceLogind or SourceScreenTime
}

// Reasons and sources of an Event.
const (
	ReasonLocked = "locked" // the screen is locked
	ReasonSleep  = "sleep"  // the machine is about to suspend (Away) or has resumed

	SourceScreenSaver = "screensaver" // org.freedesktop.ScreenSaver / org.gnome.ScreenSaver
	SourceLogind      = "logind"      // org.freedesktop.login1 on the system bus
)

// ErrNoLogind says logind could not be reached on the system bus: there is
// none (no systemd-logind or elogind), it did not answer in time, or there is
// no system bus connection at all.
var ErrNoLogind = errors.New("logind is not reachable on the system bus")

// The freedesktop properties interface, whose PropertiesChanged logind
// sends.
const (
	properties        = "org.freedesktop.DBus.Properties"
	propertiesChanged = properties + ".PropertiesChanged"
)

// What the watchers log when they drop a malformed signal, with the
// attributes "signal" (interface.member) and "sender" (a unique name).
const logMalformedSignal = "ignoring a malformed signal"
