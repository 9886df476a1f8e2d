// The indicator's preferences: whether the label shows, and what the start
// dialog offers first. Nothing about sessions: the daemon's config is the
// one truth for those.

import Adw from 'gi://Adw';
import Gio from 'gi://Gio';
import Gtk from 'gi://Gtk';

import {ExtensionPreferences} from 'resource:///org/gnome/Shell/Extensions/js/extensions/prefs.js';

const LEVELS = ['', 'observe', 'warn', 'block', 'locked'];

export default class AntidriftPreferences extends ExtensionPreferences {
    fillPreferencesWindow(window) {
        const settings = this.getSettings();
        const page = new Adw.PreferencesPage();
        const group = new Adw.PreferencesGroup({
            title: 'Panel',
            description: 'Sessions themselves are configured in ~/.config/antidrift/config.toml.',
        });
        page.add(group);

        const label = new Adw.SwitchRow({title: 'Show time left', subtitle: 'Beside the icon while a session runs'});
        settings.bind('show-label', label, 'active', Gio.SettingsBindFlags.DEFAULT);
        group.add(label);

        const duration = new Adw.SpinRow({
            title: 'Default duration', subtitle: 'Minutes, offered first when starting a session',
            adjustment: new Gtk.Adjustment({lower: 1, upper: 1440, step_increment: 5}),
        });
        settings.bind('default-duration', duration, 'value', Gio.SettingsBindFlags.DEFAULT);
        group.add(duration);

        const level = new Adw.ComboRow({
            title: 'Default enforcement',
            model: Gtk.StringList.new(['The daemon’s default', 'observe', 'warn', 'block', 'locked']),
            selected: Math.max(0, LEVELS.indexOf(settings.get_string('default-level'))),
        });
        level.connect('notify::selected', () => settings.set_string('default-level', LEVELS[level.selected]));
        group.add(level);

        window.add(page);
    }
}
