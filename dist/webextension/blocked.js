"use strict";
// The page in place of a blocked tab. Every text on it comes from outside
// (the commitment, the address) and is set as text, never as markup.
const api = globalThis.browser ?? globalThis.chrome;
const tabId = new URLSearchParams(location.search).get("tab");

function left(deadline) {
  const mins = Math.max(0, Math.round((deadline * 1000 - Date.now()) / 60000));
  return mins === 1 ? "1 minute left" : mins + " minutes left";
}

async function show() {
  const { blocked = {} } = await api.storage.local.get("blocked");
  const e = blocked[tabId];
  if (!e) {
    return;
  }
  document.getElementById("next").textContent = e.nextAction;
  document.getElementById("done").textContent = e.doneWhen;
  document.getElementById("site").textContent = e.site;
  if (e.deadline > 0) {
    document.getElementById("left").textContent = left(e.deadline);
  }
}

// Back to work: the tab used most recently before this one, in this window.
document.getElementById("back").addEventListener("click", async () => {
  const here = await api.tabs.getCurrent();
  const tabs = await api.tabs.query({ windowId: here.windowId });
  const others = tabs.filter((t) => t.id !== here.id).sort((a, b) => (b.lastAccessed ?? 0) - (a.lastAccessed ?? 0));
  if (others.length > 0) {
    await api.tabs.update(others[0].id, { active: true });
  }
});
show();
document.addEventListener("visibilitychange", show);
