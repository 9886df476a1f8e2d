// The indicator's dialogs, in the Shell's own style: starting a session in
// a few keystrokes, and asking the reason the daemon needs for Abandon and
// BreakGlass. Every rule is the daemon's: a refusal is shown beside the
// field it names, in the daemon's words.

import Atk from 'gi://Atk';
import Clutter from 'gi://Clutter';
import GLib from 'gi://GLib';
import GObject from 'gi://GObject';
import Shell from 'gi://Shell';
import St from 'gi://St';

import * as Dialog from 'resource:///org/gnome/shell/ui/dialog.js';
import * as ModalDialog from 'resource:///org/gnome/shell/ui/modalDialog.js';

import {gettext as _} from 'resource:///org/gnome/shell/extensions/extension.js';

import * as Format from './format.mjs';

const PRESETS = [25, 50, 90]; // minutes
const LEVELS = ['observe', 'warn', 'block', 'locked'];
const MAX_APPS = 12;
const MAX_TASKS = 8;
// ListTasks asks every source in parallel with 5 s each; the coach's model
// has its own timeout in the daemon (coach_timeout, 30 s by default). These
// are only so a daemon that never answers cannot leave the dialog waiting.
const TASKS_TIMEOUT_MS = 10000;
const COACH_TIMEOUT_MS = 65000;
const START_TASK_TIMEOUT_MS = 30000;
// The level words are the config's and the daemon's: shown as they are.

const VERTICAL = {orientation: Clutter.Orientation.VERTICAL};

/**
 * A labelled field: a caption, the control, and a line for the daemon's
 * refusal. The caption names the control for a screen reader.
 */
function field(parent, caption, control, named = control) {
    const box = new St.BoxLayout({...VERTICAL, style_class: 'antidrift-field'});
    if (caption) {
        const label = new St.Label({text: caption, style_class: 'antidrift-field-caption'});
        box.add_child(label);
        named.label_actor = label;
    }
    box.add_child(control);
    const error = new St.Label({style_class: 'prompt-dialog-error-label antidrift-field-error', visible: false});
    error.clutter_text.line_wrap = true;
    box.add_child(error);
    parent.add_child(box);
    return error;
}

function entry(hint, text = '', styleClass = 'antidrift-entry') {
    return new St.Entry({style_class: styleClass, hint_text: hint, text, can_focus: true, x_expand: true});
}

/**
 * Toggle buttons of which one (or, with many, any) is checked, in rows of
 * at most perRow: a long list wraps instead of widening the dialog. Each
 * says its name to a screen reader.
 */
function toggles(items, {many = false, checked = [], perRow = 4} = {}) {
    const row = new St.BoxLayout({...VERTICAL, style_class: 'antidrift-toggles'});
    let line = null;
    const buttons = items.map(({label, value, icon}) => {
        const button = new St.Button({
            style_class: 'antidrift-toggle button', toggle_mode: true, can_focus: true,
            checked: checked.includes(value), accessible_name: label,
            accessible_role: many ? Atk.Role.TOGGLE_BUTTON : Atk.Role.RADIO_BUTTON,
        });
        const content = new St.BoxLayout({style_class: 'antidrift-toggle-content'});
        if (icon)
            content.add_child(icon);
        const text = new St.Label({text: label, y_align: Clutter.ActorAlign.CENTER});
        text.clutter_text.ellipsize = 0; // Pango.EllipsizeMode.NONE: a chip says all of its word
        content.add_child(text);
        button.set_child(content);
        button._value = value;
        if (!line || line.get_n_children() === perRow) {
            line = new St.BoxLayout({style_class: 'antidrift-toggles'});
            row.add_child(line);
        }
        line.add_child(button);
        return button;
    });
    if (!many) {
        for (const b of buttons) {
            b.connect('clicked', () => {
                for (const other of buttons)
                    other.checked = other === b;
            });
        }
    }
    return {row, values: () => buttons.filter(b => b.checked).map(b => b._value), buttons};
}

/**
 * A duration as the dialog's entry takes it back: whole minutes as a
 * number of minutes ("25"), else seconds ("45s").
 *
 * @param {number} secs seconds
 */
function typedDuration(secs) {
    return secs % 60 === 0 ? String(secs / 60) : `${secs}s`;
}

/** A task as its row says it: title, due date, the short id a person types. */
function taskLabel([, source, title, due, , short]) {
    const parts = [Format.inertLine(title, 80)];
    if (Number(due) > 0)
        parts.push(_('due %s').format(GLib.DateTime.new_from_unix_local(Number(due)).format('%e %b').trim()));
    parts.push(Format.inertLine(short ? `${source} ${short}` : source, 40));
    return parts.join(' · ');
}

/** Running applications as allowed-class choices: their WM class, name and icon. */
function runningApps() {
    const seen = new Set();
    const apps = [];
    for (const app of Shell.AppSystem.get_default().get_running()) {
        const cls = app.get_windows().map(w => w.get_wm_class()).find(c => c) ??
            app.get_id()?.replace(/\.desktop$/, '');
        if (!cls || seen.has(cls.toLowerCase()))
            continue;
        seen.add(cls.toLowerCase());
        // The class is the program's: sent as itself, never as a pattern.
        apps.push({label: app.get_name(), value: Format.literalRule(cls), icon: app.create_icon_texture(16)});
    }
    return apps.slice(0, MAX_APPS);
}

export const StartDialog = GObject.registerClass(
class AntidriftStartDialog extends ModalDialog.ModalDialog {
    _init(session, settings) {
        super._init({styleClass: 'antidrift-start-dialog'});
        this._session = session;
        const content = new Dialog.MessageDialogContent({
            title: _('Start a session'),
            description: _('One next action, how you will know it is done, and a timebox.'),
        });
        this.contentLayout.add_child(content);

        this._errors = {};
        // The open tasks of the configured task managers (ListTasks), read
        // in the background: the dialog works at once, a slow or failing
        // source only says so in a muted line, and with no task manager
        // configured the field is not shown at all.
        this._task = null;
        this._taskButtons = [];
        this._taskList = new St.BoxLayout({...VERTICAL, style_class: 'antidrift-tasks'});
        this._tasksNote = new St.Label({text: _('Looking for your open tasks…'), style_class: 'antidrift-muted'});
        this._tasksNote.clutter_text.line_wrap = true;
        this._tasksNote.clutter_text.ellipsize = 0; // Pango.EllipsizeMode.NONE: every reason whole
        const tasksBox = new St.BoxLayout({...VERTICAL, style_class: 'antidrift-tasks-box'});
        tasksBox.add_child(this._taskList);
        tasksBox.add_child(this._tasksNote);
        this._errors.ref = field(content, _('Start from a task'), tasksBox, this._taskList);
        this._tasksField = tasksBox.get_parent();

        this._next = entry(_('e.g. write the intro'));
        // The coach (Coach): a rough intention, or the chosen task, phrased
        // into a next action, a success condition, a timebox and the apps,
        // filled in here; nothing starts until Start.
        this._coachButton = new St.Button({
            label: _('Help me phrase it'), style_class: 'button antidrift-coach', can_focus: true,
            x_expand: false, x_align: Clutter.ActorAlign.START, y_align: Clutter.ActorAlign.START,
        });
        this._coachButton.connect('clicked', () => this._coach());
        const nextBox = new St.BoxLayout({...VERTICAL, style_class: 'antidrift-next-box'});
        nextBox.add_child(this._next);
        const coachRow = new St.BoxLayout({style_class: 'antidrift-next-row'});
        coachRow.add_child(this._coachButton);
        this._coachNote = new St.Label({style_class: 'antidrift-muted', visible: false, y_align: Clutter.ActorAlign.CENTER, x_expand: true});
        this._coachNote.clutter_text.line_wrap = true;
        this._coachNote.clutter_text.ellipsize = 0;
        coachRow.add_child(this._coachNote);
        nextBox.add_child(coachRow);
        this._errors.next_action = field(content, _('Next action'), nextBox, this._next);
        // The task's title is the next action: typed over, the task is let go.
        this._next.clutter_text.connect('text-changed', () => {
            if (this._task && this._next.text !== this._task.title)
                this._chooseTask(null);
        });
        this._done = entry(_('e.g. the intro is committed'));
        this._errors.success_condition = field(content, _('Done when'), this._done);

        const minutes = settings.get_uint('default-duration');
        this._presets = toggles(PRESETS.map(m => ({label: _('%d min').format(m), value: m})),
            {checked: [PRESETS.includes(minutes) ? minutes : -1]});
        this._duration = entry(_('or type: 45, 1h30m'), PRESETS.includes(minutes) ? '' : String(minutes), 'antidrift-duration-entry');
        this._duration.accessible_name = _('Duration');
        const durationBox = new St.BoxLayout({style_class: 'antidrift-duration'});
        durationBox.add_child(this._presets.row);
        durationBox.add_child(this._duration);
        this._errors.timebox_secs = field(content, _('For'), durationBox, this._duration);
        // Typing a duration un-checks the presets; picking one clears it.
        this._duration.clutter_text.connect('text-changed', () => {
            if (this._duration.text !== '')
                this._presets.buttons.forEach(b => (b.checked = false));
        });
        this._presets.buttons.forEach(b => b.connect('clicked', () => this._duration.set_text('')));

        const level = settings.get_string('default-level');
        this._level = toggles(LEVELS.map(l => ({label: l, value: l})), {checked: [level]});
        this._errors.enforcement = field(content, _('Enforcement (none picked: your configured default)'), this._level.row);

        this._apps = toggles(runningApps(), {many: true, perRow: 3});
        const appsBox = new St.BoxLayout({...VERTICAL, style_class: 'antidrift-apps'});
        appsBox.add_child(this._apps.row);
        this._otherApps = entry(_('other window classes, comma-separated'));
        this._otherApps.accessible_name = _('Other allowed window classes');
        appsBox.add_child(this._otherApps);
        this._errors.allowed_classes = field(content, _('Allowed apps'), appsBox, this._apps.row);
        this._errors.window = this._errors.allowed_classes; // "window class …" refusals
        // Do Not Disturb: checked as the next session would be (the Quiet
        // property: config's quiet, or what was chosen before Start).
        this._quiet = toggles([{label: _('Do Not Disturb'), value: true}], {many: true, checked: [session.get('Quiet') === true]});
        field(content, _('Other apps\' notifications while you focus'), this._quiet.row);
        this._errors.other = field(content, '', new St.Widget());

        for (const e of [this._next, this._done, this._duration, this._otherApps])
            e.clutter_text.connect('activate', () => this._start());
        this.setInitialKeyFocus(this._next.clutter_text);
        this.addButton({label: _('Cancel'), action: () => this.close(), key: Clutter.KEY_Escape});
        this.addButton({label: _('Start'), action: () => this._start(), default: true});
        this.connect('destroy', () => (this._gone = true));
        this._loadTasks();
    }

    async _loadTasks() {
        let tasks = [], failures = [];
        try {
            [tasks, failures] = await this._session.slowCall('ListTasks', null, '(a(sssxus)a(ss))', TASKS_TIMEOUT_MS);
        } catch (e) {
            if (this._gone)
                return;
            if (e.name === 'org.freedesktop.DBus.Error.UnknownMethod') {
                this._tasksField.visible = false; // a daemon without tasks
                return;
            }
            failures = [['', e.message]];
        }
        if (this._gone)
            return;
        this._tasksField.visible = tasks.length > 0 || failures.length > 0;
        for (const t of tasks.slice(0, MAX_TASKS)) {
            const [ref, , title] = t;
            const label = taskLabel(t);
            // The label is the button's own child: what St.Button makes of a
            // label property differs between releases (on 48 it has no clutter_text).
            const text = new St.Label({text: label});
            text.clutter_text.ellipsize = 3; // Pango.EllipsizeMode.END
            const button = new St.Button({
                style_class: 'antidrift-toggle antidrift-task button', toggle_mode: true, can_focus: true,
                child: text, accessible_name: label, accessible_role: Atk.Role.RADIO_BUTTON, x_align: Clutter.ActorAlign.START,
            });
            button._task = {ref, title};
            button.connect('clicked', () => this._chooseTask(button.checked ? button._task : null));
            this._taskList.add_child(button);
            this._taskButtons.push(button);
        }
        const notes = failures.map(([source, why]) => Format.inertLine(source ? `${source}: ${why}` : why, 300));
        if (tasks.length > MAX_TASKS)
            notes.unshift(_('and %d more (antidrift tasks lists them all)').format(tasks.length - MAX_TASKS));
        if (tasks.length === 0 && failures.length > 0)
            notes.unshift(_('No open tasks could be read.'));
        this._tasksNote.text = notes.join('\n');
        this._tasksNote.visible = notes.length > 0;
    }

    /** Starts from task (or from what is typed, with null): its title is the next action. */
    _chooseTask(task) {
        this._task = task;
        for (const b of this._taskButtons)
            b.checked = task !== null && b._task.ref === task.ref;
        if (task && this._next.text !== task.title)
            this._next.set_text(task.title);
        this._done.hint_text = task ? _('empty: the task is done') : _('e.g. the intro is committed');
    }

    async _coach() {
        const intention = this._next.text.trim();
        if (intention === '' && !this._task) {
            this._coachSays(_('Type roughly what you want to do, or pick a task: the coach phrases it.'));
            return;
        }
        this._coachButton.reactive = false;
        this._coachButton.label = _('Asking…');
        try {
            const [next, done, secs, rules, why] = await this._session.slowCall('Coach',
                new GLib.Variant('(ss)', [intention, this._task?.ref ?? '']), '(sstass)', COACH_TIMEOUT_MS);
            if (this._gone)
                return;
            this._next.set_text(next);
            this._done.set_text(done);
            if (Number(secs) > 0)
                this._duration.set_text(typedDuration(Number(secs)));
            const typed = this._otherApps.text.split(',').map(x => x.trim()).filter(x => x);
            this._otherApps.set_text([...typed, ...rules.filter(r => !typed.includes(r))].join(', '));
            this._coachSays(why ? Format.inertLine(why, 400) : _('The coach\'s proposal: change anything, then Start.'));
        } catch (e) {
            if (this._gone)
                return;
            this._coachSays(e.message || (e.name === 'org.antidrift.Error.NoModel'
                ? _('No model is configured, so there is no coach: see the judge in your configuration.')
                : _('The coach could not help this time.')));
        } finally {
            if (!this._gone) {
                this._coachButton.reactive = true;
                this._coachButton.label = _('Help me phrase it');
            }
        }
    }

    _coachSays(text) {
        // The daemon's sentences begin in lower case (they follow a name in
        // the CLI's words); on their own they begin as a sentence.
        this._coachNote.text = text.charAt(0).toUpperCase() + text.slice(1);
        this._coachNote.visible = text !== '';
    }

    _showError(message) {
        for (const label of Object.values(this._errors))
            label.visible = false;
        if (!message)
            return;
        // The daemon's InvalidArgument message begins with the argument it
        // refused (next_action, success_condition, timebox_secs, …).
        const key = Object.keys(this._errors).find(k => message.startsWith(k)) ?? 'other';
        this._errors[key].text = message;
        this._errors[key].visible = true;
    }

    /** What the form asks for, as Start's arguments. */
    values() {
        const typed = this._duration.text.trim();
        const secs = typed !== '' ? Format.parseDuration(typed) : (this._presets.values()[0] ?? 0) * 60;
        const other = this._otherApps.text.split(',').map(s => s.trim()).filter(s => s);
        return {
            nextAction: this._next.text,
            successCondition: this._done.text,
            secs,
            level: this._level.values()[0] ?? '',
            allowed: [...this._apps.values(), ...other],
            quiet: this._quiet.values().length > 0,
        };
    }

    async _start() {
        const v = this.values();
        if (!Number.isFinite(v.secs) || v.secs <= 0) {
            this._showError(`timebox_secs: ${_('pick a duration, or type one such as 25, 45m or 1h30m')}`);
            return;
        }
        try {
            // Start's signature has no room for it: SetQuiet first, when the
            // choice differs from what Start would do anyway.
            if (v.quiet !== (this._session.get('Quiet') === true))
                await this._session.call('SetQuiet', v.quiet);
            if (this._task) {
                await this._session.slowCall('StartTask', new GLib.Variant('(sstsas)',
                    [this._task.ref, v.successCondition, v.secs, v.level, v.allowed]), '(s)', START_TASK_TIMEOUT_MS);
            } else {
                await this._session.call('Start', v.nextAction, v.successCondition, v.secs, v.level, v.allowed);
            }
            this.close();
        } catch (e) {
            this._showError(e.message);
        }
    }
});

/** Asks for the reason Abandon and BreakGlass need, then calls. */
export const ReasonDialog = GObject.registerClass(
class AntidriftReasonDialog extends ModalDialog.ModalDialog {
    _init(session, method) {
        super._init({styleClass: 'antidrift-reason-dialog'});
        this._session = session;
        this._method = method;
        const words = {
            Abandon: [_('Abandon this session?'), _('It ends now, recorded as abandoned. Why?'), _('Abandon')],
            BreakGlass: [_('Break the glass?'), _('This session is locked. After the hold you may abandon it. Why?'), _('Break glass')],
        }[method];
        const content = new Dialog.MessageDialogContent({title: words[0], description: words[1]});
        this.contentLayout.add_child(content);
        this._reason = entry(_('the reason, for your record'));
        this._reason.accessible_name = _('Reason');
        this._error = field(content, '', this._reason);
        this._reason.clutter_text.connect('activate', () => this._go());
        this.setInitialKeyFocus(this._reason.clutter_text);
        this.addButton({label: _('Cancel'), action: () => this.close(), key: Clutter.KEY_Escape});
        this.addButton({label: words[2], action: () => this._go(), default: true});
    }

    async _go() {
        try {
            const [wait] = await this._session.call(this._method, this._reason.text);
            if (this._method === 'BreakGlass' && Number(wait) > 0) {
                this._error.text = _('The hold has begun: Abandon is permitted in %s.').format(Format.duration(Number(wait)));
                this._error.visible = true;
                return;
            }
            this.close();
        } catch (e) {
            this._error.text = e.message;
            this._error.visible = true;
        }
    }
});
