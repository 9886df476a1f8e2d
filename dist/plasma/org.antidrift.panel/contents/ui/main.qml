// antidrift's Plasma 6 applet: the session in the panel (icon and time
// left), and a popup with the commitment, drift, where the time went, the
// steps the daemon's permission table permits now, and a start form.
//
// Reading: one of two followers, chosen at run time by what the Plasma
// it runs on has. On 6.4 and later, FollowProperties.qml: Plasma's own QML
// D-Bus module follows the daemon's properties. On 6.3, whose module cannot
// receive signals, FollowCommand.qml: `antidrift status --wait-change`
// through plasma5support's executable data engine. The buckets, which grow
// every second without a signal, are read over the bus while the popup is
// open.
// Writing: methods are called directly over the session bus.

import QtQuick
import QtQuick.Layouts
import QtQuick.Controls as QQC2

import org.kde.kirigami as Kirigami
import org.kde.plasma.components as PlasmaComponents
import org.kde.plasma.core as PlasmaCore
import org.kde.plasma.extras as PlasmaExtras
import org.kde.plasma.plasmoid
import org.kde.plasma.workspace.dbus as DBus

import "format.mjs" as Format

PlasmoidItem {
    id: root

    // The daemon's status as `antidrift status --format json` prints it,
    // or {state: "connecting" | "offline" | "not-installed"}.
    property var st: ({ state: "connecting" })
    property real now: Date.now() / 1000
    property string error: ""

    readonly property bool running: ["locked", "planning", "active", "review"].includes(st.state)
    readonly property bool active: st.state === "active" && (st.deadline || 0) > 0
    readonly property real secsLeft: Math.max(0, (st.deadline || 0) - now)
    readonly property var permitted: st.permitted || []

    readonly property string stateIcon: Format.stateIcon(running ? st.state : "", st.drift || "none")
    Plasmoid.icon: stateIcon
    Plasmoid.status: active ? PlasmaCore.Types.ActiveStatus : PlasmaCore.Types.PassiveStatus
    toolTipMainText: running && st.next_action ? st.next_action : "antidrift"
    toolTipSubText: statusLine()
    // Text from outside (the next action, titles, classes, the drift
    // reason a model wrote, the daemon's errors) is shown as text: every
    // label here is plain text, never rich text that would load an
    // <img src> or draw an <a href> (Text.AutoText is the default).
    toolTipTextFormat: Text.PlainText
    // In a panel the applet is small and shows the compact form; given
    // room (on the desktop, in plasmawindowed) it shows the full one.
    switchWidth: Kirigami.Units.gridUnit * 12
    switchHeight: Kirigami.Units.gridUnit * 12

    function driftWord(drift) {
        const text = Format.driftText(drift, st.grace_ends);
        return text ? i18n(text) : (drift || "");
    }

    function statusLine() {
        switch (st.state) {
        case "connecting": return i18n("Connecting…");
        case "offline": return i18n("antidrift is not running");
        case "not-installed": return i18n("The antidrift command was not found on PATH, in ~/.local/bin, in /usr/local/bin or in /usr/bin");
        case "active": return i18n("%1 left", Format.shortLeft(secsLeft)) + (driftWord(st.drift) ? " · " + driftWord(st.drift) : "");
        case "review": return i18n("In review: end and seal it");
        case "planning": return i18n("Planning");
        }
        return i18n("No session");
    }

    // ── Reading ────────────────────────────────────────────────────────────
    // Whether Plasma's QML D-Bus module can follow properties (6.4 and
    // later): a probe, thrown away, whose failure is caught rather than
    // logged.
    function canFollowProperties() {
        try {
            Qt.createQmlObject("import org.kde.plasma.workspace.dbus as DBus\nDBus.Properties {}", root, "probe").destroy();
            return true;
        } catch (e) {
            return false;
        }
    }

    Loader {
        id: follower
        source: root.canFollowProperties() ? "FollowProperties.qml" : "FollowCommand.qml"
        onLoaded: item.refresh()
    }
    Connections {
        target: follower.item
        function onStatus(next) {
            root.st = next;
            root.now = Date.now() / 1000;
        }
    }

    // Read again (after antidrift was installed, or to be sure).
    function watch() {
        if (follower.item)
            follower.item.refresh();
    }

    // Today's totals, from the daemon's Report, read as the popup opens.
    property string today: ""
    onExpandedChanged: () => {
        if (!root.expanded)
            return;
        if (st.state === "not-installed")
            watch();
        loadToday();
        loadBuckets();
        loadProposals();
    }

    // In review: the changes the session's own evidence argues for
    // (ReviewProposals), read as the review begins and as the popup opens;
    // those applied from here (ApplyProposal) and the sentence saying what
    // was written where.
    property var proposals: []
    property var appliedNumbers: []
    property string applied: ""
    property string reviewOf: ""
    function loadProposals() {
        if (st.state !== "review")
            return;
        const of = st.session_id || "";
        const reply = busCall("org.antidrift.Session1", "ReviewProposals", []);
        reply.finished.connect(() => {
            if (reply.isError || root.st.state !== "review" || (root.st.session_id || "") !== of)
                return;
            root.proposals = Array.from(reply.value || [], p => ({
                number: Number(p[0]), kind: String(p[1]), change: String(p[2]), reason: String(p[3]),
            }));
        });
    }
    function applyProposal(number) {
        const reply = call("ApplyProposal", [number]);
        reply.finished.connect(() => {
            if (reply.isError)
                return;
            root.appliedNumbers = root.appliedNumbers.concat([number]);
            root.applied = Format.inertLine(String(reply.value), 600);
        });
    }

    // The buckets, read over the bus as the popup opens and every little
    // while it stays open (not announced by the daemon, left out of the
    // digest). Closed, nothing is read.
    property var buckets: []
    // The buckets' apps by class (BucketApps: their names and icons,
    // announced when they change, so they come with the status).
    property var bucketApps: new Map()
    function loadBuckets() {
        if (!["active", "review"].includes(st.state))
            return;
        const reply = busCall("org.freedesktop.DBus.Properties", "Get", ["org.antidrift.Session1", "Buckets"]);
        reply.finished.connect(() => {
            if (!reply.isError && Array.isArray(reply.value))
                root.buckets = reply.value.map(b => ({ class: b[0], title: b[1], seconds: Number(b[2]) }));
        });
    }
    Timer {
        running: root.expanded && ["active", "review"].includes(root.st.state)
        repeat: true
        interval: 2000
        onTriggered: root.loadBuckets()
    }
    // A status without buckets (one from a PropertiesChanged on Plasma 6.4+,
    // where they cannot be read) leaves them as they are; the reads above
    // bring them up to date.
    onStChanged: {
        if (st.state === "review" && (st.session_id || "") !== reviewOf) {
            reviewOf = st.session_id || "";
            proposals = [];
            appliedNumbers = [];
            applied = "";
            loadProposals();
        } else if (st.state !== "review" && reviewOf !== "") {
            reviewOf = "";
            proposals = [];
            applied = "";
        }
        if (st.buckets !== undefined)
            buckets = st.buckets;
        if (st.bucket_apps !== undefined)
            bucketApps = Format.appsByClass(st.bucket_apps);
    }
    function loadToday() {
        const midnight = new Date();
        midnight.setHours(0, 0, 0, 0);
        const since = Math.floor(midnight.getTime() / 1000);
        const reply = busCall("org.antidrift.Session1", "Report", [since, since + 86400]);
        reply.finished.connect(() => {
            if (reply.isError)
                return;
            const report = JSON.parse(reply.value), totals = report.totals;
            const machines = Format.machinesOf(report);
            // Only once a session is sealed: "0s focused" beside a running
            // session would read as a fault.
            if (totals.sessions === 0) {
                root.today = "";
                return;
            }
            root.today = machines > 1
                // Translators: %3 is the number of machines the sessions ran on, always 2 or more
                ? i18np("Today on %3 machines: %2 focused, %1 session", "Today on %3 machines: %2 focused, %1 sessions",
                    totals.sessions, Format.duration(totals.on_task_seconds), machines)
                : i18np("Today: %2 focused, %1 session", "Today: %2 focused, %1 sessions",
                    totals.sessions, Format.duration(totals.on_task_seconds));
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

    // ── Writing ────────────────────────────────────────────────────────────
    // Plain JavaScript values: with no signature given, the D-Bus module
    // reads the method's from the daemon's introspection and converts each
    // argument to its type (t, x, as).
    function busCall(iface, member, args) {
        return DBus.SessionBus.asyncCall({
            "service": "org.antidrift", "path": "/org/antidrift/Session1", "iface": iface,
            "member": member, "arguments": args || [],
        });
    }

    // A step the person took: its refusal is shown, in the daemon's words
    // (written for people), or, when there is no daemon to answer, in ours
    // rather than the bus's. Reads in the background show nothing.
    function call(member, args) {
        error = "";
        const reply = busCall("org.antidrift.Session1", member, args);
        reply.finished.connect(() => {
            if (!reply.isError)
                return;
            const absent = ["org.freedesktop.DBus.Error.ServiceUnknown", "org.freedesktop.DBus.Error.NameHasNoOwner"];
            root.error = absent.includes(reply.error.name) ? i18n("antidrift is not running") : reply.error.message;
        });
        return reply;
    }

    // ── In the panel ───────────────────────────────────────────────────────
    // A button: Tab reaches it, Enter or Space opens the popup, a screen
    // reader says the state, hovering highlights it. In a vertical panel
    // the icon stands alone (the time is in the tooltip and the popup).
    compactRepresentation: MouseArea {
        id: compact
        readonly property bool vertical: Plasmoid.formFactor === PlasmaCore.Types.Vertical
        Layout.minimumWidth: vertical ? Kirigami.Units.iconSizes.small : row.implicitWidth
        Layout.minimumHeight: vertical ? Kirigami.Units.iconSizes.small : -1
        hoverEnabled: true
        activeFocusOnTab: true
        Accessible.role: Accessible.Button
        Accessible.name: i18n("antidrift: %1", root.running && root.st.next_action ? root.st.next_action + " · " + root.statusLine() : root.statusLine())
        Accessible.onPressAction: root.expanded = !root.expanded
        Keys.onPressed: event => {
            if ([Qt.Key_Space, Qt.Key_Enter, Qt.Key_Return, Qt.Key_Select].includes(event.key)) {
                root.expanded = !root.expanded;
                event.accepted = true;
            }
        }
        onClicked: root.expanded = !root.expanded
        PlasmaExtras.Highlight {
            anchors.fill: parent
            hovered: true
            visible: compact.containsMouse || compact.activeFocus
        }
        RowLayout {
            id: row
            anchors.fill: parent
            spacing: Kirigami.Units.smallSpacing
            Kirigami.Icon {
                source: root.stateIcon
                active: compact.containsMouse
                color: root.st.drift === "drifting" ? Kirigami.Theme.negativeTextColor : Kirigami.Theme.textColor
                Layout.fillWidth: compact.vertical
                Layout.fillHeight: !compact.vertical
                Layout.preferredWidth: Kirigami.Units.iconSizes.smallMedium
                Layout.preferredHeight: Kirigami.Units.iconSizes.smallMedium
            }
            PlasmaComponents.Label {
                textFormat: Text.PlainText
                visible: root.active && !compact.vertical
                text: Format.shortLeft(root.secsLeft)
                font.features: { "tnum": 1 }
            }
        }
    }

    // ── The popup ──────────────────────────────────────────────────────────
    fullRepresentation: PlasmaExtras.Representation {
        Accessible.name: Plasmoid.title
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
                    textFormat: Text.PlainText
                    level: 3
                    Layout.fillWidth: true
                    wrapMode: Text.Wrap
                    text: root.running && root.st.next_action ? root.st.next_action : root.statusLine()
                }
            }
            PlasmaComponents.Label {
                textFormat: Text.PlainText
                visible: root.running && !!root.st.success_condition
                Layout.fillWidth: true
                wrapMode: Text.Wrap
                opacity: 0.7
                text: i18n("Done when: %1", root.st.success_condition || "")
            }
            RowLayout {
                visible: root.active
                PlasmaComponents.ProgressBar {
                    Layout.fillWidth: true
                    from: 0; to: 1
                    value: 1 - root.secsLeft / Math.max(1, root.st.timebox_seconds || 1)
                    Accessible.name: timeLeft.text
                }
                PlasmaComponents.Label {
                    textFormat: Text.PlainText
                    id: timeLeft
                    text: i18n("%1 left of %2", Format.shortLeft(root.secsLeft), Format.duration(root.st.timebox_seconds || 0))
                }
            }
            PlasmaComponents.Label {
                textFormat: Text.PlainText
                visible: root.st.state === "active"
                Layout.fillWidth: true
                wrapMode: Text.Wrap
                color: root.st.drift === "drifting" ? Kirigami.Theme.negativeTextColor : Kirigami.Theme.textColor
                text: [root.driftWord(root.st.drift), root.st.drift_reason].filter(x => x).join(" — ")
            }
            // The window in front, by its app's name and icon (its class
            // when it has no desktop entry): outside text, made inert.
            RowLayout {
                id: currentApp
                readonly property string name: Format.appLabel(root.st.current_app_name || "", root.st.current_class || "")
                visible: root.st.state === "active" && name !== ""
                spacing: Kirigami.Units.smallSpacing
                Layout.fillWidth: true
                // Always there, empty without an icon: the names line up.
                Kirigami.Icon {
                    source: Format.iconSource(root.st.current_app_icon || "")
                    Layout.preferredWidth: Kirigami.Units.iconSizes.small
                    Layout.preferredHeight: Kirigami.Units.iconSizes.small
                }
                PlasmaComponents.Label {
                    textFormat: Text.PlainText
                    Layout.fillWidth: true
                    elide: Text.ElideRight
                    text: i18n("In front: %1", currentApp.name)
                }
            }
            // The page in front of a browser window, as its extension
            // reports it (docs/browsers.md): data, shown as plain text.
            PlasmaComponents.Label {
                id: currentSite
                visible: root.running && !!root.st.current_site
                Layout.fillWidth: true
                elide: Text.ElideMiddle
                textFormat: Text.PlainText
                text: root.st.current_site || ""
            }
            PlasmaComponents.Label {
                textFormat: Text.PlainText
                visible: root.st.state === "active"
                text: i18n("Enforcement: %1", root.st.enforcement || "") + ((root.st.minimize_count || 0) > 0
                    ? " · " + i18np("%1 window minimized", "%1 windows minimized", root.st.minimize_count) : "")
            }
            Kirigami.Heading {
                textFormat: Text.PlainText
                level: 5
                visible: bucketRows.count > 0
                text: i18n("Where the time went")
            }
            Repeater {
                id: bucketRows
                model: (root.st.state === "active" || root.st.state === "review") ? root.buckets.slice(0, 3) : []
                delegate: RowLayout {
                    id: bucketRow
                    required property var modelData
                    readonly property var app: root.bucketApps.get(modelData.class)
                    Layout.fillWidth: true
                    spacing: Kirigami.Units.smallSpacing
                    Kirigami.Icon {
                        source: Format.iconSource(bucketRow.app ? bucketRow.app.icon : "")
                        Layout.preferredWidth: Kirigami.Units.iconSizes.small
                        Layout.preferredHeight: Kirigami.Units.iconSizes.small
                    }
                    PlasmaComponents.Label {
                        textFormat: Text.PlainText
                        Layout.fillWidth: true
                        elide: Text.ElideRight
                        text: Format.duration(bucketRow.modelData.seconds) + "  "
                            + (Format.appLabel(bucketRow.app ? bucketRow.app.name : "", bucketRow.modelData.class) || i18n("(no window)"))
                            + (bucketRow.modelData.title ? " · " + bucketRow.modelData.title : "")
                    }
                }
            }

            PlasmaComponents.Label {
                textFormat: Text.PlainText
                visible: root.today !== ""
                opacity: 0.7
                text: root.today
            }

            // In review: the proposed changes to the person's rules, each
            // with Apply; the model's note on the session when there is one.
            Kirigami.Heading {
                textFormat: Text.PlainText
                level: 5
                visible: root.st.state === "review" && root.proposals.length > 0
                text: i18n("Proposed changes to your rules")
            }
            PlasmaComponents.Label {
                textFormat: Text.PlainText
                visible: root.st.state === "review" && !!root.st.review_note
                Layout.fillWidth: true
                wrapMode: Text.Wrap
                font.italic: true
                text: Format.inertLine(root.st.review_note || "", 600)
            }
            Repeater {
                model: root.st.state === "review" ? root.proposals : []
                delegate: RowLayout {
                    id: proposalRow
                    required property var modelData
                    readonly property bool done: root.appliedNumbers.includes(modelData.number)
                    Layout.fillWidth: true
                    spacing: Kirigami.Units.smallSpacing
                    ColumnLayout {
                        Layout.fillWidth: true
                        spacing: 0
                        PlasmaComponents.Label {
                            textFormat: Text.PlainText
                            Layout.fillWidth: true
                            wrapMode: Text.Wrap
                            font.bold: true
                            text: Format.inertLine(proposalRow.modelData.change, 200)
                        }
                        PlasmaComponents.Label {
                            textFormat: Text.PlainText
                            Layout.fillWidth: true
                            wrapMode: Text.Wrap
                            opacity: 0.7
                            text: Format.inertLine(proposalRow.modelData.reason, 400)
                        }
                    }
                    PlasmaComponents.Button {
                        text: proposalRow.done ? i18n("Applied") : i18n("Apply")
                        enabled: !proposalRow.done
                        Accessible.name: i18n("Apply: %1", Format.inertLine(proposalRow.modelData.change, 200))
                        onClicked: root.applyProposal(proposalRow.modelData.number)
                    }
                }
            }
            PlasmaComponents.Label {
                textFormat: Text.PlainText
                visible: root.st.state === "review" && root.applied !== ""
                Layout.fillWidth: true
                wrapMode: Text.Wrap
                font.italic: true
                text: root.applied
            }

            // The steps: shown where they could apply, enabled exactly when
            // the daemon's Permitted says the call would not be refused.
            Flow {
                Layout.fillWidth: true
                spacing: Kirigami.Units.smallSpacing
                Repeater {
                    model: [
                        { method: "Complete", label: i18n("Complete"), states: ["active"], run: () => root.call("Complete") },
                        { method: "Refocus", label: i18n("Back to work"), states: ["active"], run: () => root.call("Refocus") },
                        { method: "Extend", label: i18n("+10 min"), states: ["active", "review"], run: () => root.call("Extend", [600]) },
                        { method: "End", label: i18n("End & seal"), states: ["review"], run: () => root.call("End") },
                        { method: "Abandon", label: i18n("Abandon…"), states: ["active"], run: () => reasonForm.ask("Abandon") },
                        { method: "BreakGlass", label: i18n("Break glass…"), states: ["active"], level: "locked", run: () => reasonForm.ask("BreakGlass") },
                        { method: "Start", label: i18n("Start a session…"), states: ["locked", "planning"], run: () => { startForm.visible = true; startForm.focusFirst(); } },
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
                quietDefault: root.st.quiet === true
                busCall: root.busCall
                onStart: (next, done, secs, level, allowed, quiet, taskRef) => {
                    const start = () => {
                        // From a task: its title is the next action (StartTask).
                        const reply = taskRef !== ""
                            ? root.call("StartTask", [taskRef, done, secs, level, allowed])
                            : root.call("Start", [next, done, secs, level, allowed]);
                        reply.finished.connect(() => { if (!reply.isError) startForm.visible = false; });
                    };
                    // Start's signature has no room for it: SetQuiet first,
                    // when the choice differs from what Start would do.
                    if (quiet === (root.st.quiet === true)) {
                        start();
                        return;
                    }
                    const set = root.call("SetQuiet", [quiet]);
                    set.finished.connect(() => { if (!set.isError) start(); });
                }
                onCancel: { startForm.visible = false; root.error = ""; }
                error: root.error
            }

            RowLayout {
                id: reasonForm
                property string method: ""
                visible: false
                function ask(method) {
                    reasonForm.method = method;
                    reasonForm.visible = true;
                    reason.forceActiveFocus();
                }
                PlasmaComponents.TextField {
                    id: reason
                    Layout.fillWidth: true
                    placeholderText: i18n("Why? (for your record)")
                    Accessible.name: i18n("Reason")
                    onAccepted: go.clicked()
                    Keys.onEscapePressed: cancelReason.clicked()
                }
                PlasmaComponents.Button {
                    id: go
                    text: reasonForm.method === "BreakGlass" ? i18n("Break glass") : i18n("Abandon")
                    onClicked: {
                        const reply = root.call(reasonForm.method, [reason.text]);
                        reply.finished.connect(() => { if (!reply.isError) reasonForm.visible = false; });
                    }
                }
                PlasmaComponents.Button {
                    id: cancelReason
                    text: i18n("Cancel")
                    onClicked: { reasonForm.visible = false; reason.text = ""; root.error = ""; }
                }
            }

            PlasmaComponents.Label {
                textFormat: Text.PlainText
                visible: root.st.state === "not-installed"
                Layout.fillWidth: true
                wrapMode: Text.Wrap
                text: i18n("Install it from its package, or with make install-user from its source, then look again.")
            }
            PlasmaComponents.Button {
                visible: root.st.state === "not-installed"
                text: i18n("Look again")
                icon.name: "view-refresh"
                onClicked: { root.st = { state: "connecting" }; root.watch(); }
            }

            PlasmaComponents.Label {
                textFormat: Text.PlainText
                visible: root.error !== "" && !startForm.visible
                Layout.fillWidth: true
                wrapMode: Text.Wrap
                color: Kirigami.Theme.negativeTextColor
                text: root.error
            }
        }
    }
}
