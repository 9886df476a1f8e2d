// Test only (internal/testsupport/testenv/gnome.go). GNOME Shell 48 has no
// --unsafe-mode flag, and starts in the Overview, where new windows do not
// get focus; this makes a headless Shell drivable by a test.
import {Extension} from 'resource:///org/gnome/shell/extensions/extension.js';
import * as Main from 'resource:///org/gnome/shell/ui/main.js';
import * as MessageTray from 'resource:///org/gnome/shell/ui/messageTray.js';

export default class TestHarness extends Extension {
    enable() {
        // The Shell announces unsafe mode with a banner; withdrawn, so a
        // test's screenshots and message tray hold only what it made.
        const system = MessageTray.getSystemSource();
        const before = new Set(system.notifications);
        global.context.unsafe_mode = true;
        system.notifications.filter(n => !before.has(n)).forEach(n => n.destroy());
        if (Main.layoutManager._startingUp) {
            this._id = Main.layoutManager.connect('startup-complete', () => Main.overview.hide());
        } else {
            Main.overview.hide();
        }
    }

    disable() {
        if (this._id)
            Main.layoutManager.disconnect(this._id);
        this._id = 0;
    }
}
