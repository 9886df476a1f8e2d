// The panel indicator: the session at a glance (icon and time left), and a
// menu that shows the commitment and drives the daemon through exactly the
// calls its permission table permits now.

import Clutter from 'gi://Clutter';
import GLib from 'gi://GLib';
import GObject from 'gi://GObject';
import St from 'gi://St';

import * as Main from 'resource:///org/gnome/shell/ui/main.js';
import * as PanelMenu from 'resource:///org/gnome/shell/ui/panelMenu.js';
import * as PopupMenu from 'resource:///org/gnome/shell/ui/popupMenu.js';
import {BarLevel} from 'resource:///org/gnome/shell/ui/barLevel.js';

import * as Format from './format.mjs';
import {ReasonDialog, StartDialog} from './dialogs.js';
import {Presence, Session} from './session.js';

const EXTEND_SECS = 600;
const TOP_BUCKETS = 3;

/**
 * The menu's actions: the method each calls, its label, the states in which
 * it is shown at all, and what it does. Whether it can be clicked is the
 * daemon's Permitted property, never a rule of ours.
 */
const ACTIONS = [
    {method: 'Start', label: 'Start a session…', states: ['locked', 'planning'], run: ind => ind._openStart()},
    {method: 'Complete', label: 'Complete', states: ['active'], run: ind => ind._call('Complete')},
    {method: 'Refocus', label: 'Back to work', states: ['active'], run: ind => ind._call('Refocus')},
    {method: 'Extend', label: '+10 min', states: ['active', 'review'], run: ind => ind._call('Extend', EXTEND_SECS)},
    {method: 'End', label: 'End & seal', states: ['review'], run: ind => ind._call('End')},
    {method: 'Abandon', label: 'Abandon…', states: ['active'], run: ind => ind._askReason('Abandon')},
    {method: 'BreakGlass', label: 'Break glass…', states: ['active'], level: 'locked', run: ind => ind._askReason('BreakGlass')},
];

export const Indicator = GObject.registerClass(
class AntidriftIndicator extends PanelMenu.Button {
    _init(extension) {
        super._init(0.5, 'antidrift');
        this._settings = extension.getSettings();

        const box = new St.BoxLayout({style_class: 'panel-status-menu-box'});
        this._icon = new St.Icon({style_class: 'system-status-icon'});
        this._label = new St.Label({y_align: Clutter.ActorAlign.CENTER, style_class: 'antidrift-label'});
        box.add_child(this._icon);
        box.add_child(this._label);
        this.add_child(box);

        this._buildMenu();
        this._session = new Session(extension.dir, () => this._sync());
        this._settingsId = this._settings.connect('changed', () => this._sync());
        this.menu.connect('open-state-changed', (_menu, open) => {
            if (open)
                this._menuOpened();
        });
        this._sync();
    }

    _item(text, styleClass = '') {
        const item = new PopupMenu.PopupMenuItem(text, {reactive: false, style_class: styleClass});
        item.label.clutter_text.ellipsize = 3; // Pango.EllipsizeMode.END
        this.menu.addMenuItem(item);
        return item;
    }

    _buildMenu() {
        this._status = this._item('');
        this._startDaemon = new PopupMenu.PopupMenuItem('Start antidrift');
        this._startDaemon.connect('activate', () => this._session.activate().catch(e => this._refused(e)));
        this.menu.addMenuItem(this._startDaemon);

        this._nextAction = this._item('', 'antidrift-next-action');
        this._doneWhen = this._item('', 'antidrift-done-when');

        this._progress = new PopupMenu.PopupBaseMenuItem({reactive: false});
        this._bar = new BarLevel({style_class: 'slider antidrift-progress', x_expand: true});
        this._progressLabel = new St.Label({y_align: Clutter.ActorAlign.CENTER, style_class: 'antidrift-progress-label'});
        this._progress.add_child(this._bar);
        this._progress.add_child(this._progressLabel);
        this.menu.addMenuItem(this._progress);

        this._drift = this._item('');
        this._enforcement = this._item('');

        this._bucketsHeader = this._item('Where the time went', 'antidrift-heading');
        this._buckets = [];
        for (let i = 0; i < TOP_BUCKETS; i++)
            this._buckets.push(this._item(''));
        this._today = this._item('', 'antidrift-today');

        this._separator = new PopupMenu.PopupSeparatorMenuItem();
        this.menu.addMenuItem(this._separator);
        this._actions = ACTIONS.map(action => {
            const item = new PopupMenu.PopupMenuItem(action.label);
            item.connect('activate', () => action.run(this));
            this.menu.addMenuItem(item);
            return {action, item};
        });
    }

    _menuOpened() {
        if (this._session.presence === Presence.STOPPED)
            this._session.activate().catch(() => {});
        this._loadToday();
    }

    /** Shows everything anew from the proxy's cached properties. */
    _sync() {
        if (this._destroyed) // an answer that arrived after disable()
            return;
        const s = this._session;
        const running = s.presence === Presence.RUNNING;
        const state = s.get('State') ?? '';
        const drift = s.get('Drift') ?? 'none';
        this._icon.icon_name = Format.stateIcon(running ? state : '', drift);
        this._setStyle(this, 'antidrift-drifting', running && drift === 'drifting');

        this._status.visible = !running;
        this._status.label.text = {
            [Presence.CONNECTING]: 'Connecting to antidrift…',
            [Presence.STOPPED]: 'antidrift is not running',
            [Presence.NOT_INSTALLED]: 'antidrift is not installed: run make install-user',
        }[s.presence] ?? '';
        this._startDaemon.visible = s.presence === Presence.STOPPED;

        const inSession = running && (state === 'active' || state === 'review' || state === 'planning');
        const nextAction = s.get('NextAction') ?? '';
        this._nextAction.visible = inSession && nextAction !== '';
        this._nextAction.label.text = nextAction;
        const doneWhen = s.get('SuccessCondition') ?? '';
        this._doneWhen.visible = inSession && doneWhen !== '';
        this._doneWhen.label.text = `Done when: ${doneWhen}`;
        if (running && state === 'locked') {
            this._nextAction.visible = true;
            this._nextAction.label.text = 'No session';
        }

        const active = running && state === 'active';
        this._drift.visible = active;
        const reason = s.get('DriftReason') ?? '';
        this._drift.label.text = [Format.driftWords[drift] ?? drift, reason].filter(x => x).join(' — ');

        const level = s.get('Enforcement') ?? '';
        const minimized = s.get('MinimizeCount') ?? 0;
        this._enforcement.visible = active;
        this._enforcement.label.text = `Enforcement: ${level}${minimized > 0
            ? ` · ${minimized} window${minimized === 1 ? '' : 's'} minimized` : ''}`;

        const buckets = running && (state === 'active' || state === 'review') ? s.get('Buckets') ?? [] : [];
        this._bucketsHeader.visible = buckets.length > 0;
        this._buckets.forEach((item, i) => {
            const b = buckets[i];
            item.visible = b !== undefined;
            if (b)
                item.label.text = `${Format.duration(Number(b[2]))}  ${[b[0] || '(no window)', b[1]].filter(x => x).join(' · ')}`;
        });
        this._today.visible = running && this._todayText !== undefined;
        this._today.label.text = this._todayText ?? '';

        const permitted = s.get('Permitted') ?? [];
        let anyAction = false;
        for (const {action, item} of this._actions) {
            item.visible = running && action.states.includes(state) && (!action.level || action.level === level);
            item.setSensitive(permitted.includes(action.method));
            anyAction ||= item.visible;
        }
        this._separator.visible = anyAction;
        this._tick();
    }

    /** The countdown: the label and the progress bar, and when to look again. */
    _tick() {
        if (this._timeoutId) {
            GLib.source_remove(this._timeoutId);
            this._timeoutId = 0;
        }
        const s = this._session;
        const deadline = Number(s.get('Deadline') ?? 0);
        const active = s.get('State') === 'active' && deadline > 0;
        this._progress.visible = active;
        this._label.visible = active && this._settings.get_boolean('show-label');
        if (!active)
            return;
        const now = GLib.get_real_time() / 1e6;
        const left = Math.max(0, deadline - now);
        const total = Math.max(1, Number(s.get('TimeboxSeconds') ?? 1));
        this._label.text = Format.shortLeft(left);
        this._bar.value = Math.min(1, Math.max(0, (total - left) / total));
        this._progressLabel.text = `${Format.shortLeft(left)} left of ${Format.duration(total)}`;
        if (left <= 0)
            return; // the daemon moves to review and says so
        // Wake when the label next changes: every second in the last minute,
        // else when the rounded-up minute ticks over.
        const wait = left <= 60 ? left - Math.floor(left - 1e-3) || 1 : left - (Math.ceil(left / 60) - 1) * 60;
        this._timeoutId = GLib.timeout_add(GLib.PRIORITY_DEFAULT, Math.max(50, Math.ceil(wait * 1000)), () => {
            this._timeoutId = 0;
            this._tick();
            return GLib.SOURCE_REMOVE;
        });
    }

    _setStyle(actor, cls, on) {
        if (on)
            actor.add_style_class_name(cls);
        else
            actor.remove_style_class_name(cls);
    }

    /** Today's totals, from the daemon's Report (what `antidrift report --today` says). */
    async _loadToday() {
        try {
            const now = GLib.DateTime.new_now_local();
            const midnight = GLib.DateTime.new_local(now.get_year(), now.get_month(), now.get_day_of_month(), 0, 0, 0);
            const [json] = await this._session.call('Report', midnight.to_unix(), midnight.add_days(1).to_unix());
            const {totals} = JSON.parse(json);
            this._todayText = `Today: ${Format.duration(totals.on_task_seconds)} focused, ` +
                `${totals.sessions} session${totals.sessions === 1 ? '' : 's'}`;
        } catch {
            this._todayText = undefined;
        }
        this._sync();
    }

    async _call(method, ...args) {
        try {
            await this._session.call(method, ...args);
        } catch (e) {
            this._refused(e);
        }
    }

    _refused(e) {
        Main.notifyError('antidrift', e.message ?? String(e));
    }

    _openStart() {
        this._dialog?.destroy();
        this._dialog = new StartDialog(this._session, this._settings);
        this._dialog.open();
    }

    _askReason(method) {
        this._dialog?.destroy();
        this._dialog = new ReasonDialog(this._session, method, this._settings);
        this._dialog.open();
    }

    destroy() {
        this._destroyed = true;
        if (this._timeoutId)
            GLib.source_remove(this._timeoutId);
        this._timeoutId = 0;
        this._settings.disconnect(this._settingsId);
        this._dialog?.destroy();
        this._dialog = null;
        this._session.destroy();
        super.destroy();
    }
});
