// A one-shot antidrift loads into KWin to act on one window, then unloads.
//
// The daemon fills in the three constants (each checked before: a UUID in
// braces, one of the two actions, a token of hex digits it made) and loads
// a fresh copy per call. Whether the action really happened is decided here,
// inside KWin, in one go, so nothing can change in between:
//
//   minimize  only if the window is still the active one; then read back
//             that KWin did minimize it (a window may refuse)
//   activate  un-minimize it and make it the active window
//
// The outcome goes back to antidriftd with the token, which ties it to the
// call that is waiting for it: minimized, activated, not-active, gone or
// refused.

const target = "@WINDOW@";
const action = "@ACTION@";
const token = "@TOKEN@";

function find(id) {
    const all = workspace.windowList();
    for (let i = 0; i < all.length; i++) {
        if (String(all[i].internalId) === id) {
            return all[i];
        }
    }
    return null;
}

function act() {
    const w = find(target);
    if (!w) {
        return "gone";
    }
    if (action === "minimize") {
        if (workspace.activeWindow !== w) {
            return "not-active";
        }
        w.minimized = true;
        return w.minimized ? "minimized" : "refused";
    }
    w.minimized = false;
    workspace.activeWindow = w;
    return workspace.activeWindow === w ? "activated" : "refused";
}

callDBus("org.antidrift", "/org/antidrift/KWin", "org.antidrift.KWinScript1", "Done", token, act());
