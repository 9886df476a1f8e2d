// The start form: next action, done when, a duration (presets or typed),
// the level and the allowed window classes. Every rule is the daemon's:
// its refusal is shown as it words it.

import QtQuick
import QtQuick.Layouts

import org.kde.kirigami as Kirigami
import org.kde.plasma.components as PlasmaComponents

import "format.mjs" as Format

ColumnLayout {
    id: form
    property string error: ""
    signal start(string next, string done, real secs, string level, var allowed)

    Kirigami.FormLayout {
        Layout.fillWidth: true
        PlasmaComponents.TextField {
            id: next
            Kirigami.FormData.label: "Next action:"
            placeholderText: "write the intro"
            onAccepted: form.submit()
        }
        PlasmaComponents.TextField {
            id: done
            Kirigami.FormData.label: "Done when:"
            placeholderText: "the intro is committed"
            onAccepted: form.submit()
        }
        PlasmaComponents.ComboBox {
            id: duration
            Kirigami.FormData.label: "For:"
            editable: true
            model: ["25m", "50m", "90m"]
        }
        PlasmaComponents.ComboBox {
            id: level
            Kirigami.FormData.label: "Enforcement:"
            model: ["default", "observe", "warn", "block", "locked"]
        }
        PlasmaComponents.TextField {
            id: allowed
            Kirigami.FormData.label: "Allowed apps:"
            placeholderText: "window classes, comma-separated"
            onAccepted: form.submit()
        }
    }
    PlasmaComponents.Label {
        visible: form.error !== ""
        Layout.fillWidth: true
        wrapMode: Text.Wrap
        color: Kirigami.Theme.negativeTextColor
        text: form.error
    }
    PlasmaComponents.Button {
        Layout.alignment: Qt.AlignRight
        text: "Start"
        onClicked: form.submit()
    }

    function submit() {
        const secs = Format.parseDuration(duration.editText || duration.currentText);
        form.start(next.text, done.text, Number.isFinite(secs) ? secs : 0,
            level.currentIndex === 0 ? "" : level.currentText,
            allowed.text.split(",").map(s => s.trim()).filter(s => s));
    }
}
