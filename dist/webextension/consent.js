"use strict";
const api = globalThis.browser ?? globalThis.chrome;
const agree = document.getElementById("agree");
const withdraw = document.getElementById("withdraw");
const priv = document.getElementById("private");
const state = document.getElementById("state");

async function show() {
  const s = await api.storage.local.get(["consent", "privateOptIn"]);
  const on = s.consent === true;
  priv.checked = s.privateOptIn === true;
  agree.hidden = on;
  withdraw.hidden = !on;
  state.textContent = on
    ? "antidrift is told which page is in front. You can stop that here at any time."
    : "Nothing is sent.";
}

async function set(values) {
  await api.storage.local.set(values);
  await api.runtime.sendMessage({ type: "consent-changed" }).catch(() => {});
  await show();
}

agree.addEventListener("click", () => set({ consent: true, privateOptIn: priv.checked }));
withdraw.addEventListener("click", () => set({ consent: false }));
priv.addEventListener("change", async () => {
  const s = await api.storage.local.get("consent");
  if (s.consent === true) {
    await set({ privateOptIn: priv.checked });
  }
});
show();
