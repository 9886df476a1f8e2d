// Runs the extension's background script (dist/webextension/background.js)
// in node with a stand-in for the browser's API, and checks its partsOf
// against the shared vectors: what it would send of each address is what
// the native host and the daemon expect (testdata/site-vectors.json). Then
// the block: only the tab named by the id it reported, still showing that
// page, is replaced, and only then confirmed.
// node's URL is the WHATWG URL parser, as the browsers' are.
// Usage: node extension-vectors.js BACKGROUND_JS VECTORS_JSON
"use strict";
const fs = require("fs");
const vm = require("vm");

const [script, vectorsFile] = process.argv.slice(2);
const noop = { addListener() {} };
// The browser as the script sees it: tabs by id, what it stored, what it
// told the host and which tabs it navigated.
const browser = { tabs: new Map(), stored: {}, posted: [], updated: [], focused: null };
const chrome = {
  runtime: {
    getURL: (p) => "chrome-extension://abcdefghijklmnopabcdefghijklmnop/" + p,
    onInstalled: noop,
    onMessage: noop,
    onStartup: noop,
    connectNative() {
      return { onMessage: noop, onDisconnect: noop, postMessage: (m) => browser.posted.push(JSON.parse(JSON.stringify(m))) };
    },
  },
  storage: {
    local: {
      get: async (keys) => Object.fromEntries([].concat(keys).filter((k) => k in browser.stored).map((k) => [k, browser.stored[k]])),
      set: async (o) => Object.assign(browser.stored, o),
    },
  },
  tabs: {
    onActivated: noop,
    onUpdated: noop,
    query: async () => (browser.focused === null ? [] : [browser.tabs.get(browser.focused)]),
    get: async (id) => {
      if (!browser.tabs.has(id)) throw new Error("no tab " + id);
      return browser.tabs.get(id);
    },
    update: async (id, change) => {
      browser.updated.push([id, change.url]);
      browser.tabs.get(id).url = change.url;
    },
  },
  windows: { onFocusChanged: noop, WINDOW_ID_NONE: -1, getLastFocused: async () => (browser.focused === null ? null : { id: 1 }) },
};
const ctx = vm.createContext({ chrome, console, URL, JSON, Map, Number, String, Object });
vm.runInContext(fs.readFileSync(script, "utf8"), ctx, { filename: script });
if (typeof ctx.partsOf !== "function") {
  console.error("background.js defines no partsOf");
  process.exit(2);
}
const { vectors } = JSON.parse(fs.readFileSync(vectorsFile, "utf8"));
let failed = 0;
for (const v of vectors) {
  const got = ctx.partsOf(v.url);
  const want = { scheme: v.scheme, host: v.host, path: v.path };
  if (!got || got.scheme !== want.scheme || got.host !== want.host || got.path !== want.path) {
    console.log(`${v.name}: partsOf(${JSON.stringify(v.url)}) = ${JSON.stringify(got)}, want ${JSON.stringify(want)}`);
    failed++;
  }
}
const own = ctx.partsOf(chrome.runtime.getURL("blocked.html?tab=3"));
if (!own || own.scheme !== "antidrift" || own.host !== "" || own.path !== "") {
  console.log(`the extension's own page: partsOf = ${JSON.stringify(own)}, want {"scheme":"antidrift","host":"","path":""}`);
  failed++;
}
function check(what, ok, got) {
  if (!ok) {
    console.log(`${what}: got ${JSON.stringify(got)}`);
    failed++;
  }
}

// The block: the tab the daemon names by id is replaced and confirmed; a
// tab never reported, or one that shows another page since, is neither.
(async () => {
  const long = vectors.find((v) => v.path.length > 512);
  browser.stored.consent = true;
  browser.tabs.set(7, { id: 7, url: long.url, title: "Long", incognito: false });
  browser.tabs.set(8, { id: 8, url: "https://example.com/other", title: "Other", incognito: false });
  browser.focused = 7;
  await ctx.report();
  const sent = browser.posted.at(-1);
  check("the report of tab 7", sent && sent.type === "tab" && sent.tab_id === 7 && sent.scheme === long.scheme && sent.host === long.host && sent.path === long.path && !("url" in sent), sent);
  await ctx.onHostMessage({ type: "block", tab_id: 8, site: "example.com/other" });
  check("a block of tab 8, never reported: nothing navigated", browser.updated.length === 0, browser.updated);
  await ctx.onHostMessage({ type: "block", tab_id: 7, site: "cut…" });
  check("the block of tab 7: it is navigated to the block page", browser.updated.length === 1 && browser.updated[0][0] === 7 && browser.updated[0][1].includes("blocked.html"), browser.updated);
  const confirm = browser.posted.at(-1);
  check("the block of tab 7: confirmed", confirm && confirm.type === "blocked" && confirm.tab_id === 7, confirm);
  // Tab 8 reported, then navigated elsewhere before the order came.
  browser.focused = 8;
  await ctx.report();
  browser.tabs.get(8).url = "https://example.com/elsewhere";
  const before = browser.posted.length;
  await ctx.onHostMessage({ type: "block", tab_id: 8, site: "example.com/other" });
  check("a block of a tab showing another page since: neither navigated nor confirmed", browser.updated.length === 1 && browser.posted.length === before, [browser.updated, browser.posted.slice(before)]);
  console.log(`${vectors.length + 6} cases, ${failed} failed`);
  process.exit(failed ? 1 : 0);
})();
