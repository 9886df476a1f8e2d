// The start form: next action, done when, a duration (presets or typed),
// the level and the allowed window classes. Every rule is the daemon's:
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
    signal start(string next, string done, real secs, string level, var allowed, bool quiet)
    signal cancel()

    function focusFirst() {
        next.forceActiveFocus();
    }

    Keys.onEscapePressed: form.cancel()

    Kirigami.FormLayout {
        Layout.fillWidth: true
        PlasmaComponents.TextField {
            id: next
            Kirigami.FormData.label: i18n("Next action:")
            Accessible.name: i18n("Next action")
            placeholderText: i18n("write the intro")
            onAccepted: form.submit()
        }
        PlasmaComponents.TextField {
            id: done
            Kirigami.FormData.label: i18n("Done when:")
            Accessible.name: i18n("Done when")
            placeholderText: i18n("the intro is committed")
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
            allowed.text.split(",").map(s => s.trim()).filter(s => s), quiet.checked);
    }
}
