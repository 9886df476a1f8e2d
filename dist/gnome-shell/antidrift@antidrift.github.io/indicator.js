// The panel indicator: the session at a glance (icon and time left), and a
// menu that shows the commitment and drives the daemon through exactly the
// calls its permission table permits now.

import Clutter from 'gi://Clutter';
import Gio from 'gi://Gio';
import GLib from 'gi://GLib';
import GObject from 'gi://GObject';
import St from 'gi://St';

import * as Main from 'resource:///org/gnome/shell/ui/main.js';
import * as PanelMenu from 'resource:///org/gnome/shell/ui/panelMenu.js';
import * as PopupMenu from 'resource:///org/gnome/shell/ui/popupMenu.js';
import {BarLevel} from 'resource:///org/gnome/shell/ui/barLevel.js';

import {gettext as _, ngettext} from 'resource:///org/gnome/shell/extensions/extension.js';

import * as Format from './format.mjs';
import {ReasonDialog, StartDialog} from './dialogs.js';
import {Presence, Session} from './session.js';

const EXTEND_SECS = 600;
const TOP_BUCKETS = 3;
// While the menu is open, how often the buckets (not announced on the bus:
// they grow every second) are read again. Closed, nothing is read.
const BUCKETS_REFRESH_MS = 2000;

/**
 * The menu's actions: the method each calls, its label, the states in which
 * it is shown at all, and what it does. Whether it can be clicked is the
 * daemon's Permitted property, never a rule of ours.
 */
const ACTIONS = [
    {method: 'Start', label: () => _('Start a session…'), states: ['locked', 'planning'], run: ind => ind._openStart()},
    {method: 'Complete', label: () => _('Complete'), states: ['active'], run: ind => ind._call('Complete')},
    {method: 'Refocus', label: () => _('Back to work'), states: ['active'], run: ind => ind._call('Refocus')},
    {method: 'Extend', label: () => _('+10 min'), states: ['active', 'review'], run: ind => ind._call('Extend', EXTEND_SECS)},
    {method: 'End', label: () => _('End & seal'), states: ['review'], run: ind => ind._call('End')},
    {method: 'Abandon', label: () => _('Abandon…'), states: ['active'], run: ind => ind._askReason('Abandon')},
    {method: 'BreakGlass', label: () => _('Break glass…'), states: ['active'], level: 'locked', run: ind => ind._askReason('BreakGlass')},
];

/**
 * A row of the menu that shows something rather than does something: it
 * takes keyboard focus and is read by a screen reader like any other row,
 * in the menu's normal colours, and activating it does nothing (the menu
 * stays open).
 */
const InfoItem = GObject.registerClass(
class AntidriftInfoItem extends PopupMenu.PopupMenuItem {
    activate(_event) {}
});

/**
 * One change the session in review argues for: the change and its reason
 * (the figures behind it), and Apply. Activating the row (a click, Enter)
 * applies it, as every action row of the menu acts; the menu stays open
 * so the sentence saying what was written can be read.
 */
const ProposalItem = GObject.registerClass(
class AntidriftProposalItem extends PopupMenu.PopupBaseMenuItem {
    /**
     * @param {Array} proposal (number, kind, change, reason) from ReviewProposals
     * @param {Function} onApply called with the proposal's number
     */
    _init(proposal, onApply) {
        super._init({style_class: 'antidrift-proposal'});
        const [number, , change, reason] = proposal;
        this._number = number;
        this._onApply = onApply;
        const box = new St.BoxLayout({orientation: Clutter.Orientation.VERTICAL, x_expand: true, style_class: 'antidrift-proposal-text'});
        this._change = new St.Label({text: Format.inertLine(change, 200), style_class: 'antidrift-proposal-change'});
        this._reason = new St.Label({text: Format.inertLine(reason, 400), style_class: 'antidrift-proposal-reason'});
        for (const label of [this._change, this._reason]) {
            label.clutter_text.line_wrap = true;
            label.clutter_text.ellipsize = 0; // Pango.EllipsizeMode.NONE
            box.add_child(label);
        }
        this.add_child(box);
        this._button = new St.Label({text: _('Apply'), y_align: Clutter.ActorAlign.CENTER, style_class: 'antidrift-apply'});
        this.add_child(this._button);
        this.label_actor = this._change;
        this.accessible_name = `${_('Apply')}: ${this._change.text}. ${this._reason.text}`;
    }

    /** Applied: said so in place of the button, and never applied twice from here. */
    applied() {
        this._button.text = _('Applied');
        this._button.add_style_class_name('antidrift-done');
        this.setSensitive(false);
    }

    activate(_event) {
        if (this.sensitive)
            this._onApply(this._number, this);
    }
});

export const Indicator = GObject.registerClass(
class AntidriftIndicator extends PanelMenu.Button {
    /**
     * @param {Gio.Settings} settings the extension's settings
     * @param {Function} Proxy the Session1 proxy class (session.js)
     */
    _init(settings, Proxy) {
        super._init(0.5, 'antidrift');
        this._settings = settings;

        const box = new St.BoxLayout({style_class: 'panel-status-menu-box'});
        this._icon = new St.Icon({style_class: 'system-status-icon'});
        this._label = new St.Label({y_align: Clutter.ActorAlign.CENTER, style_class: 'antidrift-label'});
        box.add_child(this._icon);
        box.add_child(this._label);
        this.add_child(box);

        this._buildMenu();
        this._session = new Session(Proxy, () => this._sync());
        this._settingsId = this._settings.connect('changed', () => this._sync());
        this.menu.connect('open-state-changed', (_menu, open) => {
            if (open)
                this._menuOpened();
            else
                this._stopRefresh();
        });
        this._sync();
    }

    _item(text, styleClass = '') {
        const item = new InfoItem(text, {style_class: styleClass});
        item.label.clutter_text.ellipsize = 3; // Pango.EllipsizeMode.END
        this.menu.addMenuItem(item);
        return item;
    }

    /** A row naming an app: its icon (when it has one) before its name. */
    _appItem(styleClass = '') {
        const item = this._item('', styleClass);
        // Always there, empty for an app without an icon: the names line up.
        const icon = new St.Icon({style_class: 'popup-menu-icon antidrift-app-icon'});
        item.insert_child_below(icon, item.label);
        item._appIcon = icon;
        return item;
    }

    /**
     * Shows an app in a row made by _appItem: the name its desktop entry
     * gives, else the class; the entry's icon, a theme icon or an image
     * file, else an empty space.
     */
    _showApp(item, text, icon) {
        item.label.text = text;
        const which = Format.iconOf(icon);
        const actor = item._appIcon;
        actor.gicon = which?.name ? new Gio.ThemedIcon({name: which.name})
            : which?.file ? new Gio.FileIcon({file: Gio.File.new_for_path(which.file)}) : null;
    }

    _buildMenu() {
        this._status = this._item('');
        this._startDaemon = new PopupMenu.PopupMenuItem(_('Start antidrift'));
        this._startDaemon.connect('activate', () => this._session.activate().catch(e => this._refused(e)));
        this.menu.addMenuItem(this._startDaemon);

        this._nextAction = this._item('', 'antidrift-next-action');
        this._doneWhen = this._item('', 'antidrift-done-when');

        this._progress = new InfoItem('');
        this._progress.label.visible = false;
        this._bar = new BarLevel({style_class: 'slider antidrift-progress', x_expand: true});
        this._progressLabel = new St.Label({y_align: Clutter.ActorAlign.CENTER, style_class: 'antidrift-progress-label'});
        this._progress.add_child(this._bar);
        this._progress.add_child(this._progressLabel);
        this._progress.label_actor = this._progressLabel;
        this.menu.addMenuItem(this._progress);

        this._drift = this._item('');
        // The window in front, by its app's name and icon (its class when
        // it has no desktop entry).
        this._app = this._appItem('antidrift-app');
        // The page in front of a browser window, as its extension reports it.
        this._site = this._item('', 'antidrift-site');
        this._enforcement = this._item('');

        this._bucketsHeader = this._item(_('Where the time went'), 'antidrift-heading');
        this._buckets = [];
        for (let i = 0; i < TOP_BUCKETS; i++)
            this._buckets.push(this._appItem());
        this._today = this._item('', 'antidrift-today');

        // In review: what the session's evidence argues to change in the
        // rules (ReviewProposals), each applied by a click (ApplyProposal),
        // and the model's note on the session (ReviewNote) when there is one.
        this._reviewHeader = this._item(_('Proposed changes to your rules'), 'antidrift-heading');
        this._reviewNote = this._item('', 'antidrift-review-note');
        this._reviewNote.label.clutter_text.line_wrap = true;
        this._reviewNote.label.clutter_text.ellipsize = 0;
        // The proposals' rows go between the note and this line.
        this._proposalRows = [];
        this._applied = this._item('', 'antidrift-applied');
        this._applied.label.clutter_text.line_wrap = true;
        this._applied.label.clutter_text.ellipsize = 0;
        this._proposalList = [];
        this._appliedNumbers = new Set();

        this._separator = new PopupMenu.PopupSeparatorMenuItem();
        this.menu.addMenuItem(this._separator);
        this._actions = ACTIONS.map(action => {
            const item = new PopupMenu.PopupMenuItem(action.label());
            item.connect('activate', () => action.run(this));
            this.menu.addMenuItem(item);
            return {action, item};
        });
    }

    _menuOpened() {
        this._loadToday();
        this._loadProposals();
        this._refreshBuckets();
    }

    /** Reads the buckets now, and again every little while until the menu closes. */
    _refreshBuckets() {
        this._stopRefresh();
        this._session.refresh('Buckets');
        this._refreshId = GLib.timeout_add(GLib.PRIORITY_DEFAULT, BUCKETS_REFRESH_MS, () => {
            this._session.refresh('Buckets');
                return GLib.SOURCE_CONTINUE;
        });
    }

    _stopRefresh() {
        if (this._refreshId)
            GLib.source_remove(this._refreshId);
        this._refreshId = 0;
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
            [Presence.CONNECTING]: _('Connecting to antidrift…'),
            [Presence.STOPPED]: _('antidrift is not running'),
            [Presence.NOT_INSTALLED]: _('The antidrift daemon is not installed'),
        }[s.presence] ?? '';
        this._startDaemon.visible = s.presence === Presence.STOPPED;

        const inSession = running && (state === 'active' || state === 'review' || state === 'planning');
        const nextAction = s.get('NextAction') ?? '';
        this._nextAction.visible = inSession && nextAction !== '';
        this._nextAction.label.text = nextAction;
        const doneWhen = s.get('SuccessCondition') ?? '';
        this._doneWhen.visible = inSession && doneWhen !== '';
        this._doneWhen.label.text = _('Done when: %s').format(doneWhen);
        if (running && state === 'locked') {
            this._nextAction.visible = true;
            this._nextAction.label.text = _('No session');
        }

        const active = running && state === 'active';
        this._drift.visible = active;
        const reason = s.get('DriftReason') ?? '';
        const driftText = Format.driftText(drift, s.get('GraceEnds'));
        const driftWord = driftText ? _(driftText) : drift;
        this._drift.label.text = [driftWord, reason].filter(x => x).join(' — ');
        const app = Format.appLabel(s.get('CurrentAppName') ?? '', s.get('CurrentClass') ?? '');
        this._app.visible = active && app !== '';
        this._showApp(this._app, _('In front: %s').format(app), s.get('CurrentAppIcon') ?? '');
        const site = s.get('CurrentSite') ?? '';
        this._site.visible = running && site !== '';
        this._site.label.text = site;

        const level = s.get('Enforcement') ?? '';
        const minimized = s.get('MinimizeCount') ?? 0;
        this._enforcement.visible = active;
        this._enforcement.label.text = _('Enforcement: %s').format(level) + (minimized > 0
            ? ` · ${ngettext('%d window minimized', '%d windows minimized', minimized).format(minimized)}` : '');

        const buckets = running && (state === 'active' || state === 'review') ? s.get('Buckets') ?? [] : [];
        const apps = Format.appsByClass(s.get('BucketApps'));
        this._bucketsHeader.visible = buckets.length > 0;
        this._buckets.forEach((item, i) => {
            const b = buckets[i];
            item.visible = b !== undefined;
            if (!b)
                return;
            const entry = apps.get(b[0]);
            const name = Format.appLabel(entry?.name ?? '', b[0]) || _('(no window)');
            this._showApp(item, `${Format.duration(Number(b[2]))}  ${[name, b[1]].filter(x => x).join(' · ')}`, entry?.icon ?? '');
        });
        this._today.visible = running && this._todayText !== undefined;
        this._today.label.text = this._todayText ?? '';

        const review = running && state === 'review';
        const sessionId = s.get('SessionId') ?? '';
        if (review && (this._reviewOf !== sessionId || this._proposalsState !== 'review')) {
            // A new review: its own list, nothing applied yet.
            this._reviewOf = sessionId;
            this._appliedNumbers.clear();
            this._appliedText = '';
            this._loadProposals();
        }
        this._proposalsState = review ? 'review' : state;
        const note = s.get('ReviewNote') ?? '';
        this._reviewNote.visible = review && note !== '';
        this._reviewNote.label.text = Format.inertLine(note, 600);
        this._reviewHeader.visible = review && this._proposalList.length > 0;
        for (const row of this._proposalRows)
            row.visible = review;
        this._applied.visible = review && this._appliedText !== '' && this._appliedText !== undefined;
        this._applied.label.text = this._appliedText ?? '';

        const permitted = s.get('Permitted') ?? [];
        let anyAction = false;
        for (const {action, item} of this._actions) {
            item.visible = running && action.states.includes(state) && (!action.level || action.level === level);
            item.setSensitive(permitted.includes(action.method));
            anyAction ||= item.visible;
        }
        this._separator.visible = anyAction;
        this._tick();
        this.accessible_name = this._summary(running, state, drift);
    }

    /** What a screen reader says of the panel button: the state at a glance. */
    _summary(running, state, drift) {
        const s = this._session;
        if (!running)
            return `antidrift: ${this._status.label.text}`;
        if (state === 'active') {
            const left = Math.max(0, Number(s.get('Deadline') ?? 0) - GLib.get_real_time() / 1e6);
            const words = [_('%s left').format(Format.shortLeft(left))];
            const driftText = Format.driftText(drift, s.get('GraceEnds'));
            if (driftText)
                words.push(_(driftText));
            return `antidrift: ${s.get('NextAction') ?? ''} · ${words.join(' · ')}`;
        }
        return `antidrift: ${{
            locked: _('No session'),
            planning: _('Planning'),
            review: _('In review: end and seal it'),
        }[state] ?? state}`;
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
        this._progressLabel.text = _('%s left of %s').format(Format.shortLeft(left), Format.duration(total));
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
            const report = JSON.parse(json), {totals} = report;
            const machines = Format.machinesOf(report);
            // Only once a session is sealed: "0s focused" beside a running
            // session would read as a fault.
            this._todayText = totals.sessions === 0 ? undefined
                : machines > 1
                    // Translators: the first %d is the number of machines the sessions ran on, always 2 or more
                    ? ngettext('Today on %d machines: %s focused, %d session', 'Today on %d machines: %s focused, %d sessions', totals.sessions)
                        .format(machines, Format.duration(totals.on_task_seconds), totals.sessions)
                    : ngettext('Today: %s focused, %d session', 'Today: %s focused, %d sessions', totals.sessions)
                        .format(Format.duration(totals.on_task_seconds), totals.sessions);
        } catch {
            this._todayText = undefined;
        }
        this._sync();
    }

    /** The review's proposals, read anew (in review only; nothing else asks). */
    async _loadProposals() {
        if (this._session.get('State') !== 'review')
            return;
        const of = this._session.get('SessionId') ?? '';
        let list = [];
        try {
            [list] = await this._session.call('ReviewProposals');
        } catch {
            list = []; // left review meanwhile, or gone: nothing to offer
        }
        if (this._destroyed || of !== (this._session.get('SessionId') ?? ''))
            return;
        this._proposalList = list;
        for (const row of this._proposalRows)
            row.destroy();
        this._proposalRows = [];
        let at = this.menu._getMenuItems().indexOf(this._applied);
        for (const p of list) {
            const item = new ProposalItem(p, (number, row) => this._apply(number, row));
            if (this._appliedNumbers.has(p[0]))
                item.applied();
            this.menu.addMenuItem(item, at++);
            this._proposalRows.push(item);
        }
        this._sync();
    }

    /** Applies proposal number, and says what was written where. */
    async _apply(number, row) {
        try {
            const [applied] = await this._session.call('ApplyProposal', number);
            this._appliedNumbers.add(number);
            this._appliedText = Format.inertLine(applied, 600);
            if (!this._destroyed)
                row.applied();
        } catch (e) {
            this._appliedText = Format.inertLine(e.message ?? String(e), 600);
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
        this._openDialog(new StartDialog(this._session, this._settings));
    }

    _askReason(method) {
        this._openDialog(new ReasonDialog(this._session, method));
    }

    /** Shows dialog in place of any other; it forgets itself once it is gone. */
    _openDialog(dialog) {
        this._dialog?.destroy();
        this._dialog = dialog;
        dialog.connect('destroy', () => {
            if (this._dialog === dialog)
                this._dialog = null;
        });
        dialog.open();
    }

    destroy() {
        this._destroyed = true;
        if (this._timeoutId)
            GLib.source_remove(this._timeoutId);
        this._timeoutId = 0;
        this._stopRefresh();
        this._settings.disconnect(this._settingsId);
        this._dialog?.destroy();
        this._dialog = null;
        this._session.destroy();
        const menu = this.menu;
        super.destroy();
        // The panel follows the menu's open state for the Panel
        // (panel.js _onMenuSet, GNOME Shell 48) and never lets go: the
        // Panel's 'destroy' handler, and the Shell's signal tracker for the
        // menu, would keep this whole indicator reachable after every
        // disable() (every screen lock). Untracked, it is collected.
        menu.disconnectObject(Main.panel);
    }
});
