// Evidence for the antidrift daemon: which window has focus (reported to
// org.antidrift.Evidence1.ReportFocus), and the hands the daemon calls back
// (org.antidrift.Shell1 on /org/antidrift/Shell).
//
// Both go over the Shell's own session bus connection, Gio.DBus.session:
// it owns org.gnome.Shell, which is how the daemon tells the Shell's
// reports from anyone else's, and how the daemon knows the answers to its
// calls come from the compositor.
//
// The hands answer only the daemon: the connection that owns org.antidrift
// at the moment of the call, asked of the bus each time (never remembered,
// so a daemon that gave up its name is refused at once). Anyone else on the
// session bus gets org.freedesktop.DBus.Error.AccessDenied: otherwise any
// program could read the focused window's title or minimize windows.
//
// Window titles are private: nothing here logs them.
import Gio from 'gi://Gio';
import GLib from 'gi://GLib';

import * as Main from 'resource:///org/gnome/shell/ui/main.js';

const DAEMON_NAME = 'org.antidrift';
const DAEMON_PATH = '/org/antidrift/Session1';
const EVIDENCE_IFACE = 'org.antidrift.Evidence1';
const HANDS_PATH = '/org/antidrift/Shell';
const ACCESS_DENIED = 'org.freedesktop.DBus.Error.AccessDenied';

const HANDS_XML = `<node>
  <interface name="org.antidrift.Shell1">
    <method name="Focus">
      <arg type="s" direction="out" name="handle"/>
      <arg type="s" direction="out" name="app_id"/>
      <arg type="s" direction="out" name="title"/>
    </method>
    <method name="Minimize">
      <arg type="s" direction="in" name="handle"/>
      <arg type="b" direction="out" name="minimized"/>
    </method>
    <method name="Activate">
      <arg type="s" direction="in" name="handle"/>
      <arg type="b" direction="out" name="activated"/>
    </method>
  </interface>
</node>`;

/**
 * A window's handle: Mutter's window id, stable for the window's life and
 * never reused within a Shell's run.
 *
 * @param {Meta.Window} win - the window
 * @returns {string}
 */
function handleOf(win) {
    return String(win.get_id());
}

export class Evidence {
    constructor() {
        this._window = null; // the focused window whose title we follow
        this._titleId = 0;
        this._daemonHere = false;
        // One ReportFocus call is in flight at a time and the newest
        // pending report replaces older ones: the daemon sees reports in
        // order, and a burst of title changes costs one call, not many.
        this._inFlight = false;
        this._pending = false;
        this._cancellable = new Gio.Cancellable();

        // The methods are the *Async forms: GJS hands them the invocation,
        // whose sender is checked before anything is answered.
        this._hands = Gio.DBusExportedObject.wrapJSObject(HANDS_XML, {
            FocusAsync: (_args, invocation) => this._answer(invocation, () => new GLib.Variant('(sss)', this.focus())),
            MinimizeAsync: ([handle], invocation) => this._answer(invocation, () => new GLib.Variant('(b)', [this._minimize(handle)])),
            ActivateAsync: ([handle], invocation) => this._answer(invocation, () => new GLib.Variant('(b)', [this._activate(handle)])),
        });
        this._hands.export(Gio.DBus.session, HANDS_PATH);

        this._focusId = global.display.connect('notify::focus-window', () => this._followFocus());
        this._followFocus();

        // The daemon is not started for us: reports are made only while it
        // is on the bus, and the current focus is reported again whenever
        // it appears (started, restarted).
        this._watchId = Gio.bus_watch_name_on_connection(Gio.DBus.session, DAEMON_NAME,
            Gio.BusNameWatcherFlags.NONE,
            () => {
                this._daemonHere = true;
                this._report();
            },
            () => {
                this._daemonHere = false;
            });
    }

    destroy() {
        if (this._watchId)
            Gio.bus_unwatch_name(this._watchId);
        this._watchId = 0;
        if (this._focusId)
            global.display.disconnect(this._focusId);
        this._focusId = 0;
        this._unfollowTitle();
        this._hands.unexport();
        this._cancellable.cancel();
        this._daemonHere = false;
    }

    /**
     * Answers a call to the hands with what answer() returns, if and only
     * if its sender owns org.antidrift now; anyone else is refused.
     *
     * @param {Gio.DBusMethodInvocation} invocation - the call
     * @param {Function} answer - makes the reply's GLib.Variant
     */
    _answer(invocation, answer) {
        const sender = invocation.get_sender();
        Gio.DBus.session.call('org.freedesktop.DBus', '/org/freedesktop/DBus', 'org.freedesktop.DBus',
            'GetNameOwner', new GLib.Variant('(s)', [DAEMON_NAME]), new GLib.VariantType('(s)'),
            Gio.DBusCallFlags.NONE, -1, this._cancellable, (conn, res) => {
                let owner = '';
                try {
                    [owner] = conn.call_finish(res).deepUnpack();
                } catch (e) {
                    if (e.matches(Gio.IOErrorEnum, Gio.IOErrorEnum.CANCELLED)) {
                        invocation.return_dbus_error('org.freedesktop.DBus.Error.Failed', 'the antidrift extension was disabled');
                        return;
                    }
                    // NameHasNoOwner: nobody may call.
                }
                if (!sender || owner !== sender) {
                    invocation.return_dbus_error(ACCESS_DENIED,
                        `org.antidrift.Shell1 answers only the antidrift daemon (the owner of ${DAEMON_NAME})`);
                    return;
                }
                let reply;
                try {
                    reply = answer();
                } catch (e) {
                    invocation.return_dbus_error('org.freedesktop.DBus.Error.Failed', e.message);
                    return;
                }
                invocation.return_value(reply);
            });
    }

    _followFocus() {
        this._unfollowTitle();
        const win = global.display.focus_window;
        if (win) {
            this._window = win;
            this._titleId = win.connect('notify::title', () => this._report());
        }
        this._report();
    }

    _unfollowTitle() {
        if (this._window && this._titleId)
            this._window.disconnect(this._titleId);
        this._window = null;
        this._titleId = 0;
    }

    _report() {
        if (!this._daemonHere)
            return;
        if (this._inFlight) {
            this._pending = true;
            return;
        }
        const args = this.focus();
        this._inFlight = true;
        this._pending = false;
        Gio.DBus.session.call(DAEMON_NAME, DAEMON_PATH, EVIDENCE_IFACE, 'ReportFocus',
            new GLib.Variant('(sss)', args), null, Gio.DBusCallFlags.NO_AUTO_START,
            -1, this._cancellable, (conn, res) => {
                try {
                    conn.call_finish(res);
                } catch (e) {
                    if (e.matches(Gio.IOErrorEnum, Gio.IOErrorEnum.CANCELLED))
                        return;
                    // Refused (another evidence source is in use) or the
                    // daemon left: the next change or its return reports again.
                    console.debug(`antidrift: ReportFocus failed: ${e.message}`);
                }
                this._inFlight = false;
                if (this._pending)
                    this._report();
            });
    }

    /**
     * What ReportFocus reports, and org.antidrift.Shell1.Focus answers for
     * the daemon to ask when it may have missed a report (it takes its bus
     * name a moment before it believes the Shell's reports).
     *
     * @returns {string[]} handle, app id (WM class) and title; all empty
     *   when no window has focus
     */
    focus() {
        const win = this._window;
        if (!win)
            return ['', '', ''];
        return [handleOf(win), win.get_wm_class() ?? '', win.get_title() ?? ''];
    }

    /**
     * org.antidrift.Shell1.Minimize: minimizes the window only while it
     * still has focus, so a person who moved on is never surprised.
     *
     * @param {string} handle - the window's handle, as reported
     * @returns {boolean} whether it was minimized
     */
    _minimize(handle) {
        const win = global.display.focus_window;
        if (!win || handleOf(win) !== handle)
            return false;
        if (!win.can_minimize())
            throw new Error('this window cannot be minimized');
        win.minimize();
        return win.minimized;
    }

    /**
     * org.antidrift.Shell1.Activate: gives the window focus, unminimizing
     * it and switching to its workspace.
     *
     * @param {string} handle - the window's handle, as reported
     * @returns {boolean} false when there is no such window any more
     */
    _activate(handle) {
        const actor = global.get_window_actors().find(a => handleOf(a.meta_window) === handle);
        if (!actor)
            return false;
        const win = actor.meta_window;
        if (win.minimized)
            win.unminimize();
        Main.activateWindow(win, global.display.get_current_time_roundtrip());
        return true;
    }
}
