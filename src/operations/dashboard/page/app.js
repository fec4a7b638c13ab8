"use strict";
// Boot: the key form, the tabs, and which panel runs when.
(() => {
  const { $ } = Dash;
  const TABS = ["sessions", "live", "providers"];

  function showTab(name) {
    if (!TABS.includes(name)) name = "sessions";
    for (const tab of TABS) {
      $("tab-" + tab).hidden = tab !== name;
      $("show-" + tab).setAttribute("aria-selected", String(tab === name));
    }
    if (location.hash !== "#" + name) history.replaceState(null, "", "#" + name);
    Dash.providers.visible(name === "providers");
  }

  Dash.showGate = (problem) => {
    $("gate").hidden = false;
    $("problem").textContent = problem || "";
    $("key").focus();
  };

  function start() {
    if (!Dash.key()) return Dash.showGate();
    Dash.live.connect();
    Dash.history.load();
    Dash.providers.load();
  }

  for (const tab of TABS) $("show-" + tab).addEventListener("click", () => showTab(tab));
  window.addEventListener("hashchange", () => showTab(location.hash.slice(1)));

  $("key-form").addEventListener("submit", (submit) => {
    submit.preventDefault();
    const key = $("key").value.trim();
    if (!key) return;
    sessionStorage.setItem(Dash.STORAGE_KEY, key);
    $("key").value = "";
    $("gate").hidden = true;
    Dash.live.disconnect();
    start();
  });

  $("forget").addEventListener("click", () => {
    sessionStorage.removeItem(Dash.STORAGE_KEY);
    Dash.live.disconnect();
    Dash.showGate();
  });

  showTab(location.hash.slice(1));
  start();
})();
