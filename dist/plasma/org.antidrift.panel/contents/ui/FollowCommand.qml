// How the applet follows the daemon on Plasma 6.3, whose QML D-Bus module
// (org.kde.plasma.workspace.dbus) can call methods but cannot receive
// signals (DBus.Properties, which follows PropertiesChanged, came with
// 6.4): through Plasma's executable data engine (plasma5support, the
// Plasma 5 compatibility layer 6.3 still installs with plasma-workspace),
// which runs a command to completion. `antidrift status --format json
// --wait-change D` blocks on the bus until the status differs from the one
// whose digest D the applet last saw, prints it and exits; the applet then
// runs it again. No polling: the command sleeps on the bus until the daemon
// signals. The command is looked for on PATH, then where make install-user
// (~/.local/bin) and packages (/usr/local/bin, /usr/bin) put it; when it is
// nowhere the applet says so.

import QtQuick

import org.kde.plasma.plasma5support as P5Support

Item {
    id: follower

    // A new status, as `antidrift status --format json` prints it, or
    // {state: "offline" | "not-installed"}.
    signal status(var st)

    property string digest: ""
    property int failures: 0

    P5Support.DataSource {
        id: watcher
        engine: "executable"
        onNewData: (source, data) => {
            disconnectSource(source);
            follower.received(data["exit code"], data["stdout"] || "");
        }
    }

    // The engine runs the command with /bin/sh; the digest is hex or "none".
    readonly property string command: 'PATH="$PATH:$HOME/.local/bin:/usr/local/bin:/usr/bin" antidrift status --format json --wait-change '

    // Start following, or look again (the command may have been installed
    // since).
    function refresh() {
        watch();
    }

    function watch() {
        watcher.connectSource(command + (/^[0-9a-f]+$/.test(digest) ? digest : "none"));
    }

    function received(code, out) {
        const line = out.trim().split("\n").pop();
        if (code === 127) {
            // The shell found no antidrift: nothing to wait for until it is
            // installed. Tried again when the popup opens, or from its button.
            status({ state: "not-installed" });
            return;
        }
        try {
            const next = JSON.parse(line);
            digest = next.digest || "";
            failures = 0;
            status(next);
            watch();
        } catch (e) {
            // The command failed (bus gone, a refusal): say so, retry with
            // backoff rather than at once.
            status({ state: "offline" });
            failures++;
            retry.interval = Math.min(60, 2 ** failures) * 1000;
            retry.start();
        }
    }

    Timer { id: retry; repeat: false; onTriggered: follower.watch() }
}
