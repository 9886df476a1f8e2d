// The antidrift GNOME Shell extension. Two parts, each a small class
// created in enable() and destroyed in disable():
//   - evidence.js: the daemon's eyes and hands (Mutter offers Wayland
//     clients no way to see or act on other windows);
//   - indicator.js: the panel indicator that shows and drives the session,
//     on the session bus API alone.
import {Extension} from 'resource:///org/gnome/shell/extensions/extension.js';
import * as Main from 'resource:///org/gnome/shell/ui/main.js';

import {Evidence} from './evidence.js';
import {Indicator} from './indicator.js';
import {loadProxyClass} from './session.js';

export default class AntidriftExtension extends Extension {
    enable() {
        // The Shell calls no disable() after an enable() that threw, so a
        // failure part-way takes down whatever was already made.
        try {
            // First what fails on a broken install (the interface XML or
            // the compiled schema missing), so nothing is on the bus or in
            // the panel when it does.
            const Proxy = loadProxyClass(this.dir);
            const settings = this.getSettings();
            this._evidence = new Evidence();
            this._indicator = new Indicator(settings, Proxy);
            // Where gnome-pomodoro puts its timer: first in the right box.
            Main.panel.addToStatusArea(this.uuid, this._indicator, 1, 'right');
        } catch (e) {
            this.disable();
            throw e;
        }
    }

    disable() {
        this._indicator?.destroy();
        this._indicator = null;
        this._evidence?.destroy();
        this._evidence = null;
    }
}
