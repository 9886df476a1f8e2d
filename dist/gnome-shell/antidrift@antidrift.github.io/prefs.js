// The indicator's preferences: whether the label shows, and what the start
// dialog offers first. Nothing about sessions: the daemon's config is the
// one truth for those.

import Adw from 'gi://Adw';
import Gio from 'gi://Gio';
import Gtk from 'gi://Gtk';

import {ExtensionPreferences, gettext as _} from 'resource:///org/gnome/Shell/Extensions/js/extensions/prefs.js';

// default-level's choices, in the combo row's order.
const LEVELS = ['', 'observe', 'warn', 'block', 'locked'];

export default class AntidriftPreferences extends ExtensionPreferences {
    fillPreferencesWindow(window) {
        const settings = this.getSettings();
        const page = new Adw.PreferencesPage();
        const group = new Adw.PreferencesGroup({
            title: _('Panel'),
            description: _('Sessions themselves are configured in ~/.config/antidrift/config.toml.'),
        });
        page.add(group);

        const label = new Adw.SwitchRow({title: _('Show time left'), subtitle: _('Beside the icon while a session runs')});
        settings.bind('show-label', label, 'active', Gio.SettingsBindFlags.DEFAULT);
        group.add(label);

        const duration = new Adw.SpinRow({
            title: _('Default duration'), subtitle: _('Minutes, offered first when starting a session'),
            adjustment: new Gtk.Adjustment({lower: 1, upper: 1440, step_increment: 5}),
        });
        settings.bind('default-duration', duration, 'value', Gio.SettingsBindFlags.DEFAULT);
        group.add(duration);

        // Bound both ways, as settings.bind would bind it if a string could
        // map to an index: a change made elsewhere (dconf, another window)
        // shows here too.
        const level = new Adw.ComboRow({
            title: _('Default enforcement'),
            model: Gtk.StringList.new([_('The daemon’s default'), 'observe', 'warn', 'block', 'locked']),
        });
        const show = () => {
            level.selected = Math.max(0, LEVELS.indexOf(settings.get_string('default-level')));
        };
        show();
        const changedId = settings.connect('changed::default-level', show);
        level.connect('notify::selected', () => {
            if (settings.get_string('default-level') !== LEVELS[level.selected])
                settings.set_string('default-level', LEVELS[level.selected]);
        });
        window.connect('close-request', () => settings.disconnect(changedId));
        group.add(level);

        window.add(page);
    }
}
