// antidrift's KWin script: it tells antidriftd which window has focus.
//
// KWin offers no foreign-toplevel protocol to Wayland clients, so the daemon
// loads this script into KWin (org.kde.kwin.Scripting.loadScript) and it
// reports from the inside: once now, on every activation (null when no window
// has focus) and when the active window's title or class changes. Reports go
// to org.antidrift.Evidence1.ReportFocus(handle, app_id, title), which the
// daemon believes only from KWin's own bus connection.
//
// handle is the window's internalId, a UUID in braces; app_id is resourceClass
// (KWin puts a Wayland app id there; resourceName is empty for those); title
// is captionNormal, the title the application set, without the " <2>" KWin
// appends to tell windows with the same caption apart.

let watched = null;

function report() {
    const w = workspace.activeWindow;
    callDBus("org.antidrift", "/org/antidrift/Session1", "org.antidrift.Evidence1", "ReportFocus",
        w ? String(w.internalId) : "", w ? String(w.resourceClass) : "", w ? String(w.captionNormal) : "");
}

function follow(w) {
    if (watched) {
        try {
            watched.captionChanged.disconnect(report);
            watched.windowClassChanged.disconnect(report);
        } catch (e) {
            // The window was closed and its object is gone: nothing to undo.
        }
    }
    watched = w;
    if (w) {
        w.captionChanged.connect(report);
        w.windowClassChanged.connect(report);
    }
    report();
}

workspace.windowActivated.connect(follow);
follow(workspace.activeWindow);
