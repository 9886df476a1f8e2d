// antidrift's Plasma 6 applet: the session in the panel (icon and time
// left), and a popup with the commitment, drift, where the time went, the
// steps the daemon's permission table permits now, and a start form.
//
// Reading: Plasma 6.3's QML D-Bus module can call methods but not follow
// signals, so changes arrive through the executable data engine, which runs
// a command to completion: `antidrift status --format json --wait-change D`
// blocks on the bus until the status differs from the one whose digest D the
// applet last saw, prints it and exits; the applet then runs it again. No
// polling: the command sleeps on the bus until the daemon signals.
// Writing: methods are called directly over the session bus.

import QtQuick
import QtQuick.Layouts
import QtQuick.Controls as QQC2

import org.kde.kirigami as Kirigami
import org.kde.plasma.components as PlasmaComponents
import org.kde.plasma.core as PlasmaCore
import org.kde.plasma.extras as PlasmaExtras
import org.kde.plasma.plasma5support as P5Support
import org.kde.plasma.plasmoid
import org.kde.plasma.workspace.dbus as DBus

import "format.mjs" as Format

PlasmoidItem {
    id: root

    // The daemon's status as `antidrift status --format json` prints it,
    // or {state: "connecting" | "offline" | "not-installed"}.
    property var st: ({ state: "connecting" })
    property string digest: ""
    property real now: Date.now() / 1000
    property string error: ""
    property int failures: 0

    readonly property bool running: ["locked", "planning", "active", "review"].includes(st.state)
    readonly property bool active: st.state === "active" && (st.deadline || 0) > 0
    readonly property real secsLeft: Math.max(0, (st.deadline || 0) - now)
    readonly property var permitted: st.permitted || []

    readonly property string stateIcon: Format.stateIcon(running ? st.state : "", st.drift || "none")
    Plasmoid.icon: stateIcon
    Plasmoid.status: active ? PlasmaCore.Types.ActiveStatus : PlasmaCore.Types.PassiveStatus
    toolTipMainText: running && st.next_action ? st.next_action : "antidrift"
    toolTipSubText: statusLine()
    // In a panel the applet is small and shows the compact form; given
    // room (on the desktop, in plasmawindowed) it shows the full one.
    switchWidth: Kirigami.Units.gridUnit * 12
    switchHeight: Kirigami.Units.gridUnit * 12

    function statusLine() {
        switch (st.state) {
        case "connecting": return "Connecting…";
        case "offline": return "antidrift is not running";
        case "not-installed": return "antidrift is not installed: run make install-user";
        case "active": return Format.shortLeft(secsLeft) + " left · " + (Format.driftWords[st.drift] || st.drift);
        case "review": return "In review: end and seal it";
        case "planning": return "Planning";
        }
        return "No session";
    }

    // ── Reading ────────────────────────────────────────────────────────────
    P5Support.DataSource {
        id: watcher
        engine: "executable"
        onNewData: (source, data) => {
            disconnectSource(source);
            root.received(data["exit code"], data["stdout"] || "");
        }
    }

    function watch() {
        watcher.connectSource("antidrift status --format json --wait-change '" + (digest || "none") + "'");
    }

    function received(code, out) {
        const line = out.trim().split("\n").pop();
        if (code === 127) { // no antidrift on PATH: nothing to wait for
            st = { state: "not-installed" };
            return;
        }
        try {
            const next = JSON.parse(line);
            digest = next.digest || "";
            st = next;
            failures = 0;
            now = Date.now() / 1000;
            watch();
        } catch (e) {
            // The command failed (bus gone, a refusal): say so, retry with
            // backoff rather than at once.
            st = { state: "offline" };
            failures++;
            retry.interval = Math.min(60, 2 ** failures) * 1000;
            retry.start();
        }
    }

    Timer { id: retry; repeat: false; onTriggered: root.watch() }

    // Today's totals, from the daemon's Report, read as the popup opens.
    property string today: ""
    onExpandedChanged: () => {
        if (root.expanded)
            loadToday();
    }
    function loadToday() {
        const midnight = new Date();
        midnight.setHours(0, 0, 0, 0);
        const since = Math.floor(midnight.getTime() / 1000);
        const reply = call("Report", [since, since + 86400]);
        reply.finished.connect(() => {
            if (reply.isError)
                return;
            const totals = JSON.parse(reply.value).totals;
            root.today = "Today: " + Format.duration(totals.on_task_seconds) + " focused, " + totals.sessions
                + (totals.sessions === 1 ? " session" : " sessions");
        });
    }

    // The countdown: only while active, each second in the last minute,
    // else when the rounded-up minute ticks over.
    Timer {
        id: countdown
        running: root.active && root.secsLeft > 0
        repeat: false
        interval: root.secsLeft <= 61 ? 1000 : Math.max(1000, ((root.secsLeft % 60) || 60) * 1000)
        onTriggered: { root.now = Date.now() / 1000; restart(); }
    }

    Component.onCompleted: watch()

    // ── Writing ────────────────────────────────────────────────────────────
    // Plain JavaScript values: with no signature given, the D-Bus module
    // reads the method's from the daemon's introspection and converts each
    // argument to its type (t, x, as).
    function call(member, args) {
        error = "";
        const reply = DBus.SessionBus.asyncCall({
            "service": "org.antidrift", "path": "/org/antidrift/Session1", "iface": "org.antidrift.Session1",
            "member": member, "arguments": args || [],
        });
        reply.finished.connect(() => {
            if (reply.isError)
                root.error = reply.error.message;
        });
        return reply;
    }

    // ── In the panel ───────────────────────────────────────────────────────
    compactRepresentation: MouseArea {
        Layout.minimumWidth: row.implicitWidth
        onClicked: root.expanded = !root.expanded
        RowLayout {
            id: row
            anchors.fill: parent
            spacing: Kirigami.Units.smallSpacing
            Kirigami.Icon {
                source: root.stateIcon
                color: root.st.drift === "drifting" ? Kirigami.Theme.negativeTextColor : Kirigami.Theme.textColor
                Layout.preferredWidth: Kirigami.Units.iconSizes.smallMedium
                Layout.preferredHeight: Kirigami.Units.iconSizes.smallMedium
            }
            PlasmaComponents.Label {
                visible: root.active
                text: Format.shortLeft(root.secsLeft)
                font.features: { "tnum": 1 }
            }
        }
    }

    // ── The popup ──────────────────────────────────────────────────────────
    fullRepresentation: PlasmaExtras.Representation {
        Layout.preferredWidth: Kirigami.Units.gridUnit * 22
        Layout.preferredHeight: column.implicitHeight + Kirigami.Units.largeSpacing * 2

        ColumnLayout {
            id: column
            anchors.left: parent.left
            anchors.right: parent.right
            anchors.top: parent.top
            anchors.margins: Kirigami.Units.largeSpacing
            spacing: Kirigami.Units.smallSpacing

            RowLayout {
                spacing: Kirigami.Units.smallSpacing
                Kirigami.Icon {
                    source: root.stateIcon
                    color: root.st.drift === "drifting" ? Kirigami.Theme.negativeTextColor : Kirigami.Theme.textColor
                    Layout.preferredWidth: Kirigami.Units.iconSizes.medium
                    Layout.preferredHeight: Kirigami.Units.iconSizes.medium
                }
                Kirigami.Heading {
                    level: 3
                    Layout.fillWidth: true
                    wrapMode: Text.Wrap
                    text: root.running && root.st.next_action ? root.st.next_action : root.statusLine()
                }
            }
            PlasmaComponents.Label {
                visible: root.running && !!root.st.success_condition
                Layout.fillWidth: true
                wrapMode: Text.Wrap
                opacity: 0.7
                text: "Done when: " + (root.st.success_condition || "")
            }
            RowLayout {
                visible: root.active
                PlasmaComponents.ProgressBar {
                    Layout.fillWidth: true
                    from: 0; to: 1
                    value: 1 - root.secsLeft / Math.max(1, root.st.timebox_seconds || 1)
                }
                PlasmaComponents.Label {
                    text: Format.shortLeft(root.secsLeft) + " left of " + Format.duration(root.st.timebox_seconds || 0)
                }
            }
            PlasmaComponents.Label {
                visible: root.st.state === "active"
                Layout.fillWidth: true
                wrapMode: Text.Wrap
                color: root.st.drift === "drifting" ? Kirigami.Theme.negativeTextColor : Kirigami.Theme.textColor
                text: [Format.driftWords[root.st.drift] || root.st.drift, root.st.drift_reason].filter(x => x).join(" — ")
            }
            PlasmaComponents.Label {
                visible: root.st.state === "active"
                text: "Enforcement: " + root.st.enforcement + ((root.st.minimize_count || 0) > 0
                    ? " · " + root.st.minimize_count + (root.st.minimize_count === 1 ? " window" : " windows") + " minimized" : "")
            }
            Kirigami.Heading {
                level: 5
                visible: buckets.count > 0
                text: "Where the time went"
            }
            Repeater {
                id: buckets
                model: (root.st.state === "active" || root.st.state === "review") ? (root.st.buckets || []).slice(0, 3) : []
                delegate: PlasmaComponents.Label {
                    required property var modelData
                    Layout.fillWidth: true
                    elide: Text.ElideRight
                    text: Format.duration(modelData.seconds) + "  " + modelData.class + (modelData.title ? " · " + modelData.title : "")
                }
            }

            PlasmaComponents.Label {
                visible: root.today !== ""
                opacity: 0.7
                text: root.today
            }

            // The steps: shown where they could apply, enabled exactly when
            // the daemon's Permitted says the call would not be refused.
            Flow {
                Layout.fillWidth: true
                spacing: Kirigami.Units.smallSpacing
                Repeater {
                    model: [
                        { method: "Complete", label: "Complete", states: ["active"], run: () => root.call("Complete") },
                        { method: "Refocus", label: "Back to work", states: ["active"], run: () => root.call("Refocus") },
                        { method: "Extend", label: "+10 min", states: ["active", "review"], run: () => root.call("Extend", [600]) },
                        { method: "End", label: "End & seal", states: ["review"], run: () => root.call("End") },
                        { method: "Abandon", label: "Abandon…", states: ["active"], run: () => { reasonForm.method = "Abandon"; reasonForm.visible = true; } },
                        { method: "BreakGlass", label: "Break glass…", states: ["active"], level: "locked", run: () => { reasonForm.method = "BreakGlass"; reasonForm.visible = true; } },
                        { method: "Start", label: "Start a session…", states: ["locked", "planning"], run: () => { startForm.visible = true; } },
                    ]
                    delegate: PlasmaComponents.Button {
                        required property var modelData
                        visible: modelData.states.includes(root.st.state) && (!modelData.level || modelData.level === root.st.enforcement)
                        enabled: root.permitted.includes(modelData.method)
                        text: modelData.label
                        onClicked: modelData.run()
                    }
                }
            }

            StartForm {
                id: startForm
                visible: false
                Layout.fillWidth: true
                onStart: (next, done, secs, level, allowed) => {
                    const reply = root.call("Start", [next, done, secs, level, allowed]);
                    reply.finished.connect(() => { if (!reply.isError) startForm.visible = false; });
                }
                error: root.error
            }

            RowLayout {
                id: reasonForm
                property string method: ""
                visible: false
                PlasmaComponents.TextField {
                    id: reason
                    Layout.fillWidth: true
                    placeholderText: "Why? (for your record)"
                    onAccepted: go.clicked()
                }
                PlasmaComponents.Button {
                    id: go
                    text: reasonForm.method === "BreakGlass" ? "Break glass" : "Abandon"
                    onClicked: {
                        const reply = root.call(reasonForm.method, [reason.text]);
                        reply.finished.connect(() => { if (!reply.isError) reasonForm.visible = false; });
                    }
                }
            }

            PlasmaComponents.Label {
                visible: root.error !== "" && !startForm.visible
                Layout.fillWidth: true
                wrapMode: Text.Wrap
                color: Kirigami.Theme.negativeTextColor
                text: root.error
            }
        }
    }
}
