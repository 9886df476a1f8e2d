// antidrift's browser extension: the background script (a service worker in
// Chromium, an event page in Firefox; one source for both).
//
// Once the person agreed on the consent page, it reports the active tab of
// the focused browser window to the native host (antidrift-native-host,
// which passes it to the antidrift daemon on this computer over the session
// bus) on every tab switch, navigation and window focus change. Before that
// it reports nothing and connects to nothing. A private window's tab is
// reported as only "private", unless the person opted in on the consent
// page. Each report names the tab's id and its address as the browser
// parsed it (partsOf). When the daemon blocks a drifting tab, the host
// relays the order naming that tab's id; its page is replaced with
// blocked.html and the daemon is told so ("blocked"); when the session
// ends, the pages come back.
"use strict";

const api = globalThis.browser ?? globalThis.chrome;
const HOST = "org.antidrift.native_host";
const BLOCKED_PAGE = "blocked.html";
// What the daemon is told when one of this extension's own pages is in
// front (the consent page, a blocked tab's page): "antidrift:NAME", not a
// site, and never drift (docs/browsers.md).
const OWN_SCHEME = "antidrift:";

let port = null;
let lastSent = "";

async function settings() {
  const s = await api.storage.local.get(["consent", "privateOptIn"]);
  return { consent: s.consent === true, privateOptIn: s.privateOptIn === true };
}

// connect opens the native host, once consent is given. No timers: a host
// that is missing or went away is tried again at the next event.
function connect() {
  if (port) {
    return port;
  }
  try {
    port = api.runtime.connectNative(HOST);
  } catch (e) {
    console.warn("antidrift: cannot start the native host", e);
    port = null;
    return null;
  }
  lastSent = "";
  port.onMessage.addListener(onHostMessage);
  port.onDisconnect.addListener((p) => {
    const err = (p && p.error) || api.runtime.lastError;
    if (err) {
      console.warn("antidrift: the native host disconnected:", err.message ?? err);
    }
    port = null;
  });
  return port;
}

function post(msg) {
  const text = JSON.stringify(msg);
  if (text === lastSent) {
    return;
  }
  const p = connect();
  if (!p) {
    return;
  }
  try {
    p.postMessage(msg);
    lastSent = text;
  } catch (e) {
    console.warn("antidrift: reporting failed", e);
    port = null;
  }
}

function isOurPage(url) {
  return typeof url === "string" && url.startsWith(api.runtime.getURL(""));
}

function isBlockedPage(url) {
  return typeof url === "string" && url.startsWith(api.runtime.getURL(BLOCKED_PAGE));
}

// partsOf is the address of url as the daemon is told it: the browser's
// own parse (WHATWG URL) split into scheme (without its ":"), host and
// path, never the query or the fragment. The daemon makes the site of
// these (service.SiteFromParts) and parses nothing again, so no address
// the browser shows is dropped or read differently. For a scheme other
// than http and https only the scheme is told (a file's path is private);
// this extension's own pages are "antidrift". testdata/site-vectors.json
// holds the cases the extension, the host and the daemon agree on.
function partsOf(url) {
  if (isOurPage(url)) {
    return { scheme: OWN_SCHEME.slice(0, -1), host: "", path: "" };
  }
  let u;
  try {
    u = new URL(url);
  } catch (e) {
    return null;
  }
  const scheme = u.protocol.replace(/:$/, "");
  if (scheme !== "http" && scheme !== "https") {
    return { scheme, host: "", path: "" };
  }
  return { scheme, host: u.hostname, path: u.pathname };
}

// reportedParts: what was last told of each tab (by its id), so that a
// block is carried out only on the page it was ordered for.
const reportedParts = new Map();

function partsKey(p) {
  return p ? JSON.stringify([p.scheme, p.host, p.path]) : "";
}

// report tells the daemon the active tab of the focused browser window.
async function report() {
  const { consent, privateOptIn } = await settings();
  if (!consent) {
    return;
  }
  let win = null;
  try {
    win = await api.windows.getLastFocused({ windowTypes: ["normal"] });
  } catch (e) {
    win = null;
  }
  // The last focused window even when the browser says it has lost focus:
  // on Wayland it does not always know, and the daemon believes a report
  // only for the window the compositor says has focus anyway.
  if (!win) {
    post({ type: "none" });
    return;
  }
  const [tab] = await api.tabs.query({ active: true, windowId: win.id });
  if (!tab) {
    post({ type: "none" });
    return;
  }
  if (tab.incognito && !privateOptIn) {
    post({ type: "tab", private: true });
    return;
  }
  const parts = partsOf(tab.url ?? "");
  if (!parts) {
    return; // no address yet (a tab still loading): its next update reports it
  }
  reportedParts.set(tab.id, partsKey(parts));
  post({
    type: "tab",
    tab_id: tab.id,
    scheme: parts.scheme,
    host: parts.host,
    path: parts.path,
    title: tab.title ?? "",
    private: tab.incognito,
    private_opt_in: tab.incognito && privateOptIn,
  });
}

async function onHostMessage(msg) {
  if (!msg || typeof msg !== "object") {
    return;
  }
  if (msg.type === "block") {
    await block(msg);
  } else if (msg.type === "restore") {
    await restore();
  }
}

// block replaces the page of the tab the daemon names (by the id this
// extension reported) with ours, when it still shows the page it was
// reported with, and tells the daemon it did (the daemon minimizes the
// window when it hears nothing). Other tabs are left alone, and the window
// stays where it is.
async function block(msg) {
  const id = Number(msg.tab_id);
  let tab;
  try {
    tab = await api.tabs.get(id);
  } catch (e) {
    return; // closed meanwhile
  }
  if (!tab || isOurPage(tab.url) || reportedParts.get(id) !== partsKey(partsOf(tab.url ?? ""))) {
    return;
  }
  const { blocked = {} } = await api.storage.local.get("blocked");
  blocked[tab.id] = {
    url: tab.url,
    site: String(msg.site ?? ""),
    nextAction: String(msg.next_action ?? ""),
    doneWhen: String(msg.done_when ?? ""),
    deadline: Number(msg.deadline_unix ?? 0),
  };
  await api.storage.local.set({ blocked });
  await api.tabs.update(tab.id, { url: api.runtime.getURL(BLOCKED_PAGE) + "?tab=" + tab.id });
  send({ type: "blocked", tab_id: tab.id });
}

// send writes msg to the host as it is (a confirmation, never repeated).
function send(msg) {
  const p = connect();
  if (!p) {
    return;
  }
  try {
    p.postMessage(msg);
  } catch (e) {
    console.warn("antidrift: telling the native host failed", e);
    port = null;
  }
}

// restore puts every blocked page back: the session is over.
async function restore() {
  const { blocked = {} } = await api.storage.local.get("blocked");
  await api.storage.local.set({ blocked: {} });
  for (const [id, entry] of Object.entries(blocked)) {
    try {
      const tab = await api.tabs.get(Number(id));
      if (isBlockedPage(tab.url)) {
        await api.tabs.update(tab.id, { url: entry.url });
      }
    } catch (e) {
      // The tab was closed meanwhile.
    }
  }
}

api.runtime.onInstalled.addListener(async (details) => {
  const { consent } = await settings();
  if (details.reason === "install" || !consent) {
    if (!consent) {
      await api.tabs.create({ url: api.runtime.getURL("consent.html") });
    }
  }
});

api.runtime.onMessage.addListener(async (msg) => {
  if (!msg || msg.type !== "consent-changed") {
    return;
  }
  const { consent } = await settings();
  if (!consent && port) {
    // Withdrawn: close the host, which tells antidrift this browser is gone.
    port.disconnect();
    port = null;
  }
  lastSent = "";
  report();
});
api.runtime.onStartup.addListener(report);
api.tabs.onActivated.addListener(report);
api.tabs.onUpdated.addListener((tabId, change, tab) => {
  if (tab.active && (change.url !== undefined || change.title !== undefined || change.status === "complete")) {
    report();
  }
});
// Focus left every window this extension may see: another program, or a
// private window it is not allowed in (whose title may well be the same
// as a page's here). Say so, rather than let the last tab stand for it.
api.windows.onFocusChanged.addListener(async (id) => {
  if (id !== api.windows.WINDOW_ID_NONE) {
    report();
    return;
  }
  const { consent } = await settings();
  if (consent) {
    post({ type: "none" });
  }
});
report();
