// Runs the extension's background script (dist/webextension/background.js)
// in node with a stand-in for the browser's API, and checks its partsOf
// against the shared vectors: what it would send of each address is what
// the native host and the daemon expect (testdata/site-vectors.json).
// node's URL is the WHATWG URL parser, as the browsers' are.
// Usage: node extension-vectors.js BACKGROUND_JS VECTORS_JSON
"use strict";
const fs = require("fs");
const vm = require("vm");

const [script, vectorsFile] = process.argv.slice(2);
const noop = { addListener() {} };
const chrome = {
  runtime: {
    getURL: (p) => "chrome-extension://abcdefghijklmnopabcdefghijklmnop/" + p,
    onInstalled: noop,
    onMessage: noop,
    onStartup: noop,
    connectNative() {
      throw new Error("no native host in this test");
    },
  },
  storage: { local: { get: async () => ({}), set: async () => {} } },
  tabs: { onActivated: noop, onUpdated: noop, query: async () => [], get: async () => null, update: async () => {} },
  windows: { onFocusChanged: noop, WINDOW_ID_NONE: -1, getLastFocused: async () => null },
};
const ctx = vm.createContext({ chrome, console, URL, JSON, Map, Number, String });
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
console.log(`${vectors.length + 1} cases, ${failed} failed`);
process.exit(failed ? 1 : 0);
