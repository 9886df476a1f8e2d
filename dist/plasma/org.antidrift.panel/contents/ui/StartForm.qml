// The start form: a task to start from (the task managers' open tasks),
// next action (with the coach's help), done when, a duration (presets or
// typed), the level and the allowed window classes. Every rule is the daemon's:
// its refusal is shown as it words it. Each field says its name to a
// screen reader (a form label is only drawn beside it).

import QtQuick
import QtQuick.Layouts

import org.kde.kirigami as Kirigami
import org.kde.plasma.components as PlasmaComponents

import "format.mjs" as Format

ColumnLayout {
    id: form
    property string error: ""
    // Whether the next session is quiet unless changed here: the daemon's
    // Quiet property (config's quiet, or an earlier choice).
    property bool quietDefault: false
    onQuietDefaultChanged: quiet.checked = quietDefault
    // Calls the daemon: (iface, member, args) → a pending reply (main.qml's busCall).
    property var busCall: null
    // taskRef: the task chosen ("" none); Start with it is StartTask.
    signal start(string next, string done, real secs, string level, var allowed, bool quiet, string taskRef)
    signal cancel()

    function focusFirst() {
        next.forceActiveFocus();
        loadTasks();
    }

    // ── The open tasks (ListTasks) ─────────────────────────────────────
    // Read in the background each time the form opens: the form works at
    // once; a source that fails is named in a muted line; with no task
    // manager configured the field is not shown. A reply later than
    // tasksTimeout is dropped (the daemon asks each source for 5 s).
    property var tasks: []          // {ref, title, label}
    property string tasksNote: ""
    property bool tasksShown: false
    property int tasksAsk: 0
    property string taskRef: ""
    property string taskTitle: ""
    Timer {
        id: tasksTimeout
        interval: 10000
        onTriggered: {
            form.tasksAsk++;
            form.tasksShown = true;
            form.tasksNote = i18n("The task managers did not answer in time.");
        }
    }
    function loadTasks() {
        if (!busCall)
            return;
        const ask = ++tasksAsk;
        tasksNote = i18n("Looking for your open tasks…");
        tasksTimeout.restart();
        const reply = busCall("org.antidrift.Session1", "ListTasks", []);
        reply.finished.connect(() => {
            if (ask !== form.tasksAsk)
                return;
            tasksTimeout.stop();
            if (reply.isError) {
                form.tasksShown = reply.error.name !== "org.freedesktop.DBus.Error.UnknownMethod";
                form.tasksNote = reply.error.message;
                return;
            }
            const [list, failures] = reply.values;
            form.tasks = Array.from(list || [], t => ({
                ref: String(t[0]), title: String(t[2]),
                label: [Format.inertLine(String(t[2]), 80),
                    Number(t[3]) > 0 ? i18n("due %1", Qt.formatDate(new Date(Number(t[3]) * 1000), "d MMM yyyy")) : "",
                    Format.inertLine(String(t[5]) ? String(t[1]) + " " + String(t[5]) : String(t[1]), 40)].filter(x => x).join(" · "),
            }));
            const notes = Array.from(failures || [], f => Format.inertLine(String(f[0]) + ": " + String(f[1]), 300));
            if (form.tasks.length === 0 && notes.length > 0)
                notes.unshift(i18n("No open tasks could be read."));
            form.tasksNote = notes.join("\n");
            form.tasksShown = form.tasks.length > 0 || notes.length > 0;
        });
    }
    function chooseTask(index) {
        const t = index > 0 ? form.tasks[index - 1] : null;
        form.taskRef = t ? t.ref : "";
        form.taskTitle = t ? t.title : "";
        if (t && next.text !== t.title)
            next.text = t.title;
    }

    // ── The coach (Coach) ──────────────────────────────────────────────
    // Phrases a rough intention (or the chosen task) into the fields;
    // nothing starts until Start. NoModel and CoachFailed: the daemon's
    // sentence.
    property bool coaching: false
    property string coachNote: ""
    property int coachAsk: 0
    Timer {
        id: coachTimeout
        interval: 65000
        onTriggered: {
            form.coachAsk++;
            form.coaching = false;
            form.coachNote = i18n("The coach did not answer in time.");
        }
    }
    function sentence(text) {
        return text.charAt(0).toUpperCase() + text.slice(1);
    }
    function coach() {
        const intention = next.text.trim();
        if (intention === "" && form.taskRef === "") {
            form.coachNote = i18n("Type roughly what you want to do, or pick a task: the coach phrases it.");
            return;
        }
        const ask = ++coachAsk;
        form.coaching = true;
        form.coachNote = "";
        coachTimeout.restart();
        const reply = busCall("org.antidrift.Session1", "Coach", [intention, form.taskRef]);
        reply.finished.connect(() => {
            if (ask !== form.coachAsk)
                return;
            coachTimeout.stop();
            form.coaching = false;
            if (reply.isError) {
                form.coachNote = sentence(Format.inertLine(reply.error.message, 400));
                return;
            }
            const v = reply.values;
            next.text = String(v[0]);
            done.text = String(v[1]);
            const secs = Number(v[2]);
            if (secs > 0)
                duration.editText = secs % 60 === 0 ? String(secs / 60) + "m" : String(secs) + "s";
            const typed = allowed.text.split(",").map(x => x.trim()).filter(x => x);
            const rules = Array.from(v[3] || [], String).filter(r => !typed.includes(r));
            allowed.text = typed.concat(rules).join(", ");
            form.coachNote = String(v[4]) ? sentence(Format.inertLine(String(v[4]), 400)) : i18n("The coach's proposal: change anything, then Start.");
        });
    }

    Keys.onEscapePressed: form.cancel()

    Kirigami.FormLayout {
        Layout.fillWidth: true
        PlasmaComponents.ComboBox {
            id: task
            visible: form.tasksShown && form.tasks.length > 0
            Kirigami.FormData.label: i18n("From a task:")
            Accessible.name: i18n("Start from a task")
            Component.onCompleted: contentItem.Accessible.name = Accessible.name
            model: [i18n("none: type the next action")].concat(form.tasks.map(t => t.label))
            onActivated: index => form.chooseTask(index)
        }
        PlasmaComponents.Label {
            textFormat: Text.PlainText
            visible: form.tasksShown && form.tasksNote !== ""
            Kirigami.FormData.label: task.visible ? "" : i18n("Tasks:")
            Layout.fillWidth: true
            Layout.maximumWidth: Kirigami.Units.gridUnit * 16
            wrapMode: Text.Wrap
            opacity: 0.7
            font.italic: true
            text: form.tasksNote
        }
        PlasmaComponents.TextField {
            id: next
            Kirigami.FormData.label: i18n("Next action:")
            Accessible.name: i18n("Next action")
            placeholderText: i18n("write the intro")
            onAccepted: form.submit()
            // The task's title is the next action: typed over, the task is let go.
            onTextChanged: {
                if (form.taskRef !== "" && text !== form.taskTitle) {
                    form.taskRef = "";
                    form.taskTitle = "";
                    task.currentIndex = 0;
                }
            }
        }
        RowLayout {
            Layout.fillWidth: true
            Layout.maximumWidth: Kirigami.Units.gridUnit * 16
            PlasmaComponents.Button {
                text: form.coaching ? i18n("Asking…") : i18n("Help me phrase it")
                enabled: !form.coaching
                onClicked: form.coach()
            }
            PlasmaComponents.Label {
                textFormat: Text.PlainText
                visible: form.coachNote !== ""
                Layout.fillWidth: true
                wrapMode: Text.Wrap
                opacity: 0.7
                font.italic: true
                text: form.coachNote
            }
        }
        PlasmaComponents.TextField {
            id: done
            Kirigami.FormData.label: i18n("Done when:")
            Accessible.name: i18n("Done when")
            placeholderText: form.taskRef !== "" ? i18n("empty: the task is done") : i18n("the intro is committed")
            onAccepted: form.submit()
        }
        PlasmaComponents.ComboBox {
            id: duration
            Kirigami.FormData.label: i18n("For:")
            Accessible.name: i18n("Duration")
            // The text typed into it is the combo's own, and says so.
            Component.onCompleted: contentItem.Accessible.name = Accessible.name
            editable: true
            model: ["25m", "50m", "90m"]
        }
        PlasmaComponents.ComboBox {
            id: level
            Kirigami.FormData.label: i18n("Enforcement:")
            Accessible.name: i18n("Enforcement")
            Component.onCompleted: contentItem.Accessible.name = Accessible.name
            // The level words are the config's and the daemon's: as they are.
            model: [i18n("your configured default"), "observe", "warn", "block", "locked"]
        }
        PlasmaComponents.TextField {
            id: allowed
            Kirigami.FormData.label: i18n("Allowed apps:")
            Accessible.name: i18n("Allowed apps")
            placeholderText: i18n("window classes, comma-separated")
            onAccepted: form.submit()
        }
        PlasmaComponents.CheckBox {
            id: quiet
            Kirigami.FormData.label: i18n("Notifications:")
            text: i18n("Do Not Disturb")
            Accessible.name: i18n("Do Not Disturb while the session runs")
            checked: form.quietDefault
        }
    }
    PlasmaComponents.Label {
        textFormat: Text.PlainText
        visible: form.error !== ""
        Layout.fillWidth: true
        wrapMode: Text.Wrap
        color: Kirigami.Theme.negativeTextColor
        text: form.error
    }
    RowLayout {
        Layout.alignment: Qt.AlignRight
        PlasmaComponents.Button {
            text: i18n("Cancel")
            onClicked: form.cancel()
        }
        PlasmaComponents.Button {
            text: i18n("Start")
            onClicked: form.submit()
        }
    }

    function submit() {
        const secs = Format.parseDuration(duration.editText || duration.currentText);
        form.start(next.text, done.text, Number.isFinite(secs) ? secs : 0,
            level.currentIndex === 0 ? "" : level.currentText,
            allowed.text.split(",").map(s => s.trim()).filter(s => s), quiet.checked, form.taskRef);
    }
}
