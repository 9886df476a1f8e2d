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

    // The module hands each value over typed (DBus.string, DBus.uint64, …,
    // lists as arrays of those); the applet reads plain JavaScript values,
    // by the daemon's property types (its interface XML): numbers for
    // t, x and u, lists of strings for as, the buckets' a(sst), strings for
    // the rest (booleans come through as they are).
    readonly property var numbers: ["TimeboxSeconds", "StartedAt", "Deadline", "GraceEnds", "MinimizeCount", "SwitchCount", "BreakGlassAt", "AuditPending"]
    readonly property var lists: ["AllowedClasses", "Problems", "Permitted"]
    function plain(name, v) {
        if (typeof v === "boolean" || v === undefined || v === null)
            return v;
        if (numbers.includes(name))
            return Number(v);
        if (lists.includes(name))
            return Array.from(v, String);
        if (name === "Buckets") {
            // Read whole (GetAll), the module decodes a(sst) into arrays;
            // from a PropertiesChanged it hands the raw D-Bus argument over,
            // which QML cannot read: then the applet keeps the buckets it
            // has, and reads them over the bus while the popup is open.
            if (typeof v !== "object" || v.length === undefined)
                return undefined;
            return Array.from(v, b => ({ class: String(b[0]), title: String(b[1]), seconds: Number(b[2]) }));
        }
        if (name === "BucketApps") {
            // a(ssss), read as Buckets is (whole from GetAll, kept otherwise)
            if (typeof v !== "object" || v.length === undefined)
                return undefined;
            return Array.from(v, a => ({ class: String(a[0]), desktop_id: String(a[1]), name: String(a[2]), icon: String(a[3]) }));
        }
        if (name === "Proposal")
            return undefined; // (sstass): the start form takes the coach's reply itself
        return String(v);
    }

    function publish() {
        const p = props.properties;
        const names = p.keys();
        if (!owner.registered || !names.includes("State"))
            return; // not read yet, or gone (said by the watcher)
        const st = {};
        for (const name of names) {
            const v = plain(name, p[name]);
            if (v !== undefined)
                st[snakeCase(name)] = v;
        }
        status(st);
    }
}
