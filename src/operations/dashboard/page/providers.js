"use strict";
// The provider panel (GET /v1/stats/providers, docs/api.md#get-v1statsproviders): per provider and model over
// the last 5 min, 1 h or 24 h of this instance, with a small uPlot chart of requests, errors and p95 completion.
(() => {
  const { $, el } = Dash;
  const REFRESH_MS = 5000;
  let windowName = "5m";
  let timer = null;
  let shown = false;
  let last = null; // the snapshot on screen: redrawn in the other colours when the system switches light and dark
  const charts = new Map(); // "provider/model" -> uPlot instance

  async function load() {
    clearTimeout(timer);
    let body;
    try {
      body = await Dash.api("/v1/stats/providers?window=" + windowName);
      $("providers-problem").textContent = "";
    } catch (error) {
      $("providers-problem").textContent = Dash.explain(error, "admin");
      body = null;
    }
    if (body) render(body.windows[0]);
    if (shown && Dash.key()) timer = setTimeout(load, REFRESH_MS);
  }

  function render(snapshot) {
    $("reloads").textContent =
      "Route reloads in the last " + snapshot.window + ": " + snapshot.reloads.reloaded + " reloaded, " + snapshot.reloads.rejected + " rejected";
    $("providers-empty").hidden = snapshot.providers.length > 0;
    const seen = new Set();
    const cards = snapshot.providers.map((entry) => {
      const id = entry.provider + "/" + entry.model;
      seen.add(id);
      return card(id, entry);
    });
    for (const [id, chart] of charts) {
      if (!seen.has(id)) {
        chart.destroy();
        charts.delete(id);
      }
    }
    $("provider-cards").replaceChildren(...cards.map((entry) => entry.node));
    // drawn once in place, so a chart takes its card's width
    for (const { id, plot, points } of cards) drawChart(id, plot, points, snapshot.step_seconds);
    last = snapshot;
  }

  function card(id, entry) {
    const node = el("article", "provider card");
    node.dataset.provider = entry.provider;
    node.dataset.model = entry.model;
    const head = el("div", "card-head");
    head.append(el("span", "sid", entry.provider), el("span", "mono", entry.model));
    const numbers = el("dl", "numbers");
    const add = (label, value, testid) => {
      const term = el("dt", "", label);
      const detail = el("dd", "", value);
      detail.dataset.testid = testid;
      numbers.append(term, detail);
    };
    add("requests", Dash.count(entry.requests) + " (" + entry.completed + " completed, " + entry.failed + " failed)", "requests");
    add(
      "errors",
      entry.errors.length ? entry.errors.map((error) => error.code + (error.status ? " " + error.status : "") + " ×" + error.count).join(", ") : "none",
      "errors",
    );
    add(
      "first reasoning",
      "p50 " + Dash.ms(entry.time_to_first_reasoning_ms.p50) + " · p95 " + Dash.ms(entry.time_to_first_reasoning_ms.p95),
      "first-reasoning",
    );
    add("completion", "p50 " + Dash.ms(entry.time_to_completion_ms.p50) + " · p95 " + Dash.ms(entry.time_to_completion_ms.p95), "completion");
    add("tokens", Dash.count(entry.tokens.input) + " in · " + Dash.count(entry.tokens.output) + " out", "tokens");
    add("verdicts", Dash.count(entry.verdicts), "verdicts");
    const plot = el("div", "chart");
    node.append(head, numbers, plot);
    return { id, node, plot, points: entry.points };
  }

  function drawChart(id, target, points, step) {
    const old = charts.get(id);
    if (old) old.destroy();
    if (typeof uPlot !== "function") return; // the chart library did not load: the numbers still stand
    const styles = getComputedStyle(document.documentElement);
    const ink = styles.getPropertyValue("--muted").trim() || "#6a737d";
    const grid = styles.getPropertyValue("--line").trim() || "#e3e6ea";
    const axis = { stroke: ink, grid: { stroke: grid, width: 1 }, ticks: { show: false }, font: "11px system-ui" };
    const chart = new uPlot(
      {
        width: Math.max(240, target.clientWidth - 20),
        height: 120,
        legend: { show: true, live: false },
        cursor: { show: false },
        scales: { x: { time: true }, n: { auto: true, range: (_u, min, max) => [0, Math.max(1, max)] }, ms: { auto: true } },
        axes: [
          { ...axis, space: 50 },
          { ...axis, scale: "n", size: 34 },
          { ...axis, scale: "ms", side: 1, size: 44, values: (_u, ticks) => ticks.map((tick) => Dash.ms(tick)) },
        ],
        series: [
          { label: "per " + step + " s" },
          { label: "requests", scale: "n", stroke: "#3b6cf6", width: 1.5, fill: "rgba(59,108,246,0.08)" },
          { label: "errors", scale: "n", stroke: "#d64545", width: 1.5 },
          { label: "p95 done", scale: "ms", stroke: "#1f9d55", width: 1, dash: [4, 3], spanGaps: true },
        ],
      },
      [points.t, points.requests, points.errors, points.p95_completion_ms],
      target,
    );
    charts.set(id, chart);
  }

  matchMedia("(prefers-color-scheme: dark)").addEventListener("change", () => last && render(last));

  for (const button of document.querySelectorAll("[data-window]")) {
    button.addEventListener("click", () => {
      windowName = button.dataset.window;
      for (const other of document.querySelectorAll("[data-window]")) other.setAttribute("aria-pressed", String(other === button));
      load();
    });
  }

  Dash.providers = {
    load,
    /** Refreshes every few seconds only while the panel is on screen. */
    visible(isShown) {
      shown = isShown;
      if (shown && Dash.key()) load();
      else clearTimeout(timer);
    },
  };
})();
