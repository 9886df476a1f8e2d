// How the applet follows the daemon on Plasma 6.4 and later: Plasma's own
// D-Bus QML module (org.kde.plasma.workspace.dbus) reads the daemon's
// properties and, from 6.4 on, follows its PropertiesChanged signals
// (DBus.Properties). Nothing runs but the applet, nothing polls, and no
// antidrift command is needed. The properties are read only while
// org.antidrift has an owner, so the applet never starts the daemon by
// D-Bus activation; when it goes, the applet says so.

import QtQuick

import org.kde.plasma.workspace.dbus as DBus

Item {
    id: follower

    // A new status, as `antidrift status --format json` prints it (the
    // properties with snake_case names, the buckets as objects), or
    // {state: "offline"}.
    signal status(var st)

    DBus.DBusServiceWatcher {
        id: owner
        busType: DBus.BusType.Session
        watchedService: "org.antidrift"
        onRegisteredChanged: {
            if (!registered)
                follower.status({ state: "offline" });
        }
    }

    DBus.Properties {
        id: props
        busType: DBus.BusType.Session
        service: owner.registered ? "org.antidrift" : ""
        path: "/org/antidrift/Session1"
        iface: "org.antidrift.Session1"
        onRefreshed: follower.publish()
        onPropertiesChanged: follower.publish()
    }

    // Look again: the whole set read anew.
    function refresh() {
        if (owner.registered)
            props.updateAll();
        else
            status({ state: "offline" });
    }

    function snakeCase(name) {
        return name.replace(/[A-Z]/g, (c, i) => (i > 0 ? "_" : "") + c.toLowerCase());
    }

    function publish() {
        const p = props.properties;
        const names = p.keys();
        if (!owner.registered || !names.includes("State"))
            return; // not read yet, or gone (said by the watcher)
        const st = {};
        for (const name of names) {
            const v = p[name];
            st[snakeCase(name)] = typeof v === "object" && v !== null && v.length !== undefined ? Array.from(v) : v;
        }
        st.buckets = (st.buckets || []).map(b => ({ class: b[0], title: b[1], seconds: Number(b[2]) }));
        status(st);
    }

    Component.onCompleted: {
        if (!owner.registered)
            status({ state: "offline" });
    }
}
