// A test's one-shot look into KWin: optionally activate one window (as a
// person clicking it would), then report every window and which is active
// to the test's own bus name, tagged with the query's token.
const activate = "@ACTIVATE@";
const all = workspace.windowList();
const out = [];
for (let i = 0; i < all.length; i++) {
    const w = all[i];
    if (activate !== "" && String(w.internalId) === activate) {
        w.minimized = false;
        workspace.activeWindow = w;
    }
}
for (let i = 0; i < all.length; i++) {
    const w = all[i];
    out.push({
        id: String(w.internalId),
        app_id: String(w.resourceClass),
        title: String(w.captionNormal),
        minimized: w.minimized,
        active: workspace.activeWindow === w,
    });
}
callDBus("@REPLY_TO@", "/", "org.antidrift.test.KWinQuery", "Answer", "@TOKEN@", JSON.stringify(out));
