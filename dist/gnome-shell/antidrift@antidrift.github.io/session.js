// The indicator's view of the daemon: a proxy of org.antidrift.Session1 on
// the session bus, built from the interface XML packed inside this
// extension, and nothing else (no spawning the CLI, no private channel).
//
// GDBusProxy does the hard parts: when the daemon restarts it re-reads every
// property and says so, so a restart is invisible to the person. It never
// starts the daemon (DO_NOT_AUTO_START): systemd or the person does, with
// the menu's "Start antidrift" or the command line, never a login.

import Gio from 'gi://Gio';
import GLib from 'gi://GLib';

import {gettext as _} from 'resource:///org/gnome/shell/extensions/extension.js';

const BUS_NAME = 'org.antidrift';
const OBJECT_PATH = '/org/antidrift/Session1';

/** Where the daemon stands as far as the indicator can tell. */
export const Presence = Object.freeze({
    CONNECTING: 'connecting',
    RUNNING: 'running',
    STOPPED: 'stopped', // installed (activatable) but not running
    NOT_INSTALLED: 'not-installed',
});

/**
 * The proxy class of org.antidrift.Session1, from the interface XML in the
 * extension's directory. It throws when the file is missing (a broken
 * install): enable() calls it before anything else.
 *
 * @param {Gio.File} dir the extension's directory
 * @returns {Function} the proxy class
 */
export function loadProxyClass(dir) {
    const file = dir.get_child('org.antidrift.Session1.xml');
    const [, bytes] = file.load_contents(null);
    return Gio.DBusProxy.makeProxyWrapper(new TextDecoder().decode(bytes));
}

/**
 * A refusal or failure of a call, as the daemon worded it.
 *
 * @param {Error} e the error a proxy call threw
 * @returns {{name: string, message: string}} the D-Bus error name and message
 */
export function describeError(e) {
    if (e instanceof GLib.Error && Gio.DBusError.is_remote_error(e)) {
        const name = Gio.DBusError.get_remote_error(e);
        Gio.DBusError.strip_remote_error(e);
        return {name, message: e.message};
    }
    return {name: '', message: e.message ?? String(e)};
}

export class Session {
    /**
     * @param {Function} Proxy the proxy class, from loadProxyClass
     * @param {Function} onChange called whenever anything shown may differ
     */
    constructor(Proxy, onChange) {
        this._onChange = onChange;
        this._cancellable = new Gio.Cancellable();
        this.presence = Presence.CONNECTING;
        this.proxy = null;
        new Proxy(Gio.DBus.session, BUS_NAME, OBJECT_PATH, (proxy, error) => {
            // An init that finished as destroy() ran still calls back.
            if (this._destroyed)
                return;
            if (error) {
                if (!error.matches(Gio.IOErrorEnum, Gio.IOErrorEnum.CANCELLED))
                    this._settle(null);
                return;
            }
            this.proxy = proxy;
            this._propsId = proxy.connect('g-properties-changed', () => this._onChange());
            this._ownerId = proxy.connect('notify::g-name-owner', () => this._settle(proxy));
            this._settle(proxy);
        }, this._cancellable, Gio.DBusProxyFlags.DO_NOT_AUTO_START);
    }

    /** The property name of Session1, or undefined when not running. */
    get(name) {
        return this.presence === Presence.RUNNING ? this.proxy[name] : undefined;
    }

    _settle(proxy) {
        if (proxy?.g_name_owner) {
            this.presence = Presence.RUNNING;
            this._onChange();
            return;
        }
        // Nobody owns the name: either it can be activated (stopped) or
        // nothing on this system provides it (not installed).
        Gio.DBus.session.call('org.freedesktop.DBus', '/org/freedesktop/DBus', 'org.freedesktop.DBus',
            'ListActivatableNames', null, new GLib.VariantType('(as)'), Gio.DBusCallFlags.NONE, -1,
            this._cancellable, (conn, res) => {
                if (this._destroyed)
                    return;
                try {
                    const [names] = conn.call_finish(res).deepUnpack();
                    this.presence = names.includes(BUS_NAME) ? Presence.STOPPED : Presence.NOT_INSTALLED;
                } catch (e) {
                    if (e.matches(Gio.IOErrorEnum, Gio.IOErrorEnum.CANCELLED))
                        return;
                    this.presence = Presence.NOT_INSTALLED;
                }
                this._onChange();
            });
    }

    /**
     * Reads again a property the daemon does not announce when it changes
     * (Buckets grows every second), for as long as it is shown.
     *
     * @param {string} name the property name
     */
    async refresh(name) {
        if (this.presence !== Presence.RUNNING)
            return;
        try {
            const reply = await Gio.DBus.session.call(BUS_NAME, OBJECT_PATH, 'org.freedesktop.DBus.Properties', 'Get',
                new GLib.Variant('(ss)', ['org.antidrift.Session1', name]), new GLib.VariantType('(v)'),
                Gio.DBusCallFlags.NO_AUTO_START, -1, this._cancellable);
            if (this._destroyed || !this.proxy)
                return;
            this.proxy.set_cached_property(name, reply.get_child_value(0).get_variant());
            this._onChange();
        } catch {
            // Gone meanwhile: the owner change says so.
        }
    }

    /** Asks the bus to start the daemon (D-Bus activation), when the person asks. */
    async activate() {
        await Gio.DBus.session.call('org.freedesktop.DBus', '/org/freedesktop/DBus', 'org.freedesktop.DBus',
            'StartServiceByName', new GLib.Variant('(su)', [BUS_NAME, 0]), null, Gio.DBusCallFlags.NONE, -1,
            this._cancellable);
    }

    /**
     * Calls a method of Session1. Throws what the daemon said, as
     * describeError words it.
     *
     * @param {string} method the method name
     * @param {...any} args its arguments, as the interface XML types them
     */
    async call(method, ...args) {
        if (!this.proxy)
            throw {name: '', message: _('antidrift is not running')};
        try {
            return await this.proxy[`${method}Async`](...args);
        } catch (e) {
            throw describeError(e);
        }
    }

    /**
     * Calls a method of Session1 that may take a while (it asks a task
     * manager or a model), with a timeout of its own: the reply unpacked,
     * or what the daemon said, as describeError words it. Never blocks:
     * the dialog that asks goes on meanwhile.
     *
     * @param {string} method the method name
     * @param {GLib.Variant|null} args its arguments
     * @param {string} replyType the reply's signature, e.g. '(a(sssxus)a(ss))'
     * @param {number} timeoutMs how long to wait
     */
    async slowCall(method, args, replyType, timeoutMs) {
        try {
            const reply = await Gio.DBus.session.call(BUS_NAME, OBJECT_PATH, 'org.antidrift.Session1', method, args,
                new GLib.VariantType(replyType), Gio.DBusCallFlags.NO_AUTO_START, timeoutMs, this._cancellable);
            return reply.recursiveUnpack();
        } catch (e) {
            const said = describeError(e);
            if (said.name === 'org.freedesktop.DBus.Error.ServiceUnknown' || said.name === 'org.freedesktop.DBus.Error.NameHasNoOwner')
                throw {name: said.name, message: _('antidrift is not running')};
            throw said;
        }
    }

    destroy() {
        this._destroyed = true;
        this._cancellable.cancel();
        if (this.proxy) {
            this.proxy.disconnect(this._propsId);
            this.proxy.disconnect(this._ownerId);
            this.proxy = null;
        }
    }
}
