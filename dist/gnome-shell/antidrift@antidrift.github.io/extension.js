// The antidrift GNOME Shell extension. Mutter offers Wayland clients no way
// to see or act on other windows, so the daemon's eyes and hands live here,
// inside the Shell. Each part is a small class created in enable() and
// destroyed in disable(); the evidence part is in evidence.js.
import {Extension} from 'resource:///org/gnome/shell/extensions/extension.js';

import {Evidence} from './evidence.js';

export default class AntidriftExtension extends Extension {
    enable() {
        this._evidence = new Evidence();
    }

    disable() {
        this._evidence?.destroy();
        this._evidence = null;
    }
}
