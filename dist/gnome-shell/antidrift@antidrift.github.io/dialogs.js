// The indicator's dialogs, in the Shell's own style: starting a session in
// a few keystrokes, and asking the reason the daemon needs for Abandon and
// BreakGlass. Every rule is the daemon's: a refusal is shown beside the
// field it names, in the daemon's words.

import Atk from 'gi://Atk';
import Clutter from 'gi://Clutter';
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

        this._next = entry(_('e.g. write the intro'));
        this._errors = {next_action: field(content, _('Next action'), this._next)};
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
            await this._session.call('Start', v.nextAction, v.successCondition, v.secs, v.level, v.allowed);
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
