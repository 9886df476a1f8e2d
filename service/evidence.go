package service

// The contract every source of evidence keeps.
//
// A source (x11, wayland, kwin, gnomeshell) tells the core which window has
// focus by calling the report function its Run is given, with a Window
// that says one of three things:
//
//   - A window has focus: Focused. Available is set; ID is the source's
//     own handle for it (opaque to the core, handed back to the source's
//     Guard), Class the WM_CLASS class or Wayland app id ("" when the
//     window has none), Instance the WM_CLASS instance where there is one,
//     Title the raw title. The core decides its verdict.
//
//   - No window has focus: NoFocus. The person clicked the desktop or
//     closed the only window. This is not drift: the core takes it as no
//     evidence (the time accrues to "(unavailable)"), decides nothing,
//     nudges nobody and minimizes nothing. A source never reports it as an
//     Available window without a class: that is a window, and the core
//     would decide it.
//
//   - The source cannot see: CannotSee, with a sentence a person reads in
//     EvidenceReason (and the journal) that says why, and what would fix it
//     where something would: "GNOME Shell is running but the antidrift
//     extension is not enabled: gnome-extensions enable …". The core takes
//     it as no evidence, as for NoFocus.
//
// Order. report is called from one goroutine, never concurrently, and not
// after Run returns; each call is the newest thing the source knows, so
// when focus changes faster than the core takes it, the source drops the
// stale middle (newest wins, internal/latest) and never reports an older
// window after a newer one. Consecutive identical windows may be reported
// once or more: the core ignores a repeat.
//
// The compositors that push (the KWin script, the GNOME Shell extension)
// send ReportFocus(handle, app, title) over org.antidrift.Evidence1; the
// daemon believes only the connection that owns the compositor's bus name
// when the report is read, orders a connection's reports by their message
// serials (afresh when the name changes hands), and hands them to the
// source's Push(handle, app, title), which turns them into a Window with
// ReportedWindow.

// ReasonNoFocus is the Reason of a NoFocus window.
const ReasonNoFocus = "no window has focus"

// Focused is the window a source sees with focus.
func Focused(id, class, instance, title string) Window {
	return Window{ID: id, Class: class, Instance: instance, Title: title, Available: true}
}

// NoFocus says no window has focus: no evidence, never drift.
func NoFocus() Window { return Window{Reason: ReasonNoFocus} }

// CannotSee says the source cannot see which window has focus, and why.
func CannotSee(reason string) Window { return Window{Reason: reason} }

// ReportedWindow is the window a compositor's ReportFocus(handle, app,
// title) describes: NoFocus when handle is "", else the window, whose app
// id is its class.
func ReportedWindow(handle, app, title string) Window {
	if handle == "" {
		return NoFocus()
	}
	return Focused(handle, app, "", title)
}
