// Package kwin is antidrift's eyes and hands on KDE Plasma 6, where KWin
// offers no foreign-toplevel protocol to Wayland clients.
//
// The daemon loads a KWin script of its own into KWin over D-Bus
// (org.kde.kwin.Scripting, on KWin's org.kde.KWin name): dist/kwin/focus.js
// reports the active window back to org.antidrift.Evidence1.ReportFocus,
// whose gate believes only KWin's connection. The Sensor turns those reports
// into service.Windows, says why there is no evidence while KWin is gone or
// the script is not loaded, and loads the script again into a KWin that
// restarted. The Guard acts through one-shot scripts (dist/kwin/act.js) that
// decide inside KWin whether to minimize or activate a window, and report
// the outcome back on a private object.
//
// Scripts are written to a directory only the user can write
// ($XDG_RUNTIME_DIR/antidrift/kwin): KWin runs them with full power over the
// session. A window handle (KWin's internalId) comes back from KWin, but is
// treated as data: it goes into script text only after it has been checked
// to be a UUID in braces.
//
// Nothing polls: the sensor sleeps until KWin reports or the bus says
// KWin's name changed owner.
package kwin
