"use strict";
// Stored sessions (GET /v1/sessions): searchable, paged by cursor; a session's turns with the reasoning
// beside the answer and each turn's replay decision in words (GET /v1/sessions/{id}).
(() => {
  const { $, el } = Dash;
  const PAGE_SIZE = 15;
  // the cursor of every page shown so far: "Newer" goes back one
  let cursors = [null];
  let page = 0;
  let query = "";
  let filters = { model: "", provider: "" }; // exact names, as GET /v1/sessions takes them
  let open = null; // the id of the session in the turn view
  let refreshTimer = null;

  async function load() {
    const params = new URLSearchParams({ limit: String(PAGE_SIZE) });
    if (cursors[page]) params.set("cursor", cursors[page]);
    if (query) params.set("q", query);
    for (const [name, value] of Object.entries(filters)) if (value) params.set(name, value);
    $("history-problem").textContent = "";
    let list;
    try {
      list = await Dash.api("/v1/sessions?" + params);
    } catch (error) {
      $("session-rows").replaceChildren();
      $("history-problem").textContent = Dash.explain(error, "chat");
      return;
    }
    cursors = cursors.slice(0, page + 1);
    if (list.has_more && list.next_cursor) cursors.push(list.next_cursor);
    renderList(list.data || []);
    $("newer").disabled = page === 0;
    $("older").disabled = !(list.has_more && list.next_cursor);
    $("page-info").textContent = "page " + (page + 1);
  }

  function renderList(sessions) {
    const rows = sessions.map((session) => {
      const row = el("tr", "session-row");
      row.dataset.sessionId = session.id;
      row.tabIndex = 0;
      if (session.id === open) row.setAttribute("aria-selected", "true");
      // what tells sessions apart when their ids share a prefix and their first words are the same:
      // the id's end, when each started and was last active, its model and provider, how many turns it has
      const id = el("td", "mono sid whole", Dash.idTail(session.id));
      id.title = session.id;
      const preview = el("td", "preview", session.preview || "—");
      if (session.preview) preview.title = session.preview;
      const model = el("td", "whole", session.model || "–");
      if (session.provider) model.append(el("div", "when", "via " + session.provider));
      const started = el("td", "when whole", Dash.shortWhen(session.created_at));
      started.dataset.testid = "started";
      started.title = Dash.when(session.created_at);
      const active = el("td", "when whole", Dash.shortWhen(session.updated_at));
      active.title = Dash.when(session.updated_at);
      row.append(id, preview, model, el("td", "num whole", String(session.turn_count)), started, active);
      row.addEventListener("click", () => show(session.id));
      row.addEventListener("keydown", (key) => key.key === "Enter" && show(session.id));
      return row;
    });
    $("session-rows").replaceChildren(...rows);
    $("history-empty").hidden = sessions.length > 0;
    const filtered = query || filters.model || filters.provider;
    $("history-empty").textContent = filtered ? "No session matches." : "No stored sessions yet.";
  }

  async function show(id) {
    open = id;
    for (const row of $("session-rows").children) row.toggleAttribute("aria-selected", row.dataset.sessionId === id);
    const view = $("turn-view");
    view.replaceChildren(el("div", "quiet", "Loading " + id + "…"));
    let session;
    try {
      session = await Dash.api("/v1/sessions/" + encodeURIComponent(id));
    } catch (error) {
      view.replaceChildren(el("div", "problem", Dash.explain(error, "chat")));
      return;
    }
    if (open !== id) return; // another session was asked for meanwhile
    const head = el("div", "turn-view-head");
    head.append(el("h3", "mono", session.id), el("span", "badge", session.turn_count + (session.turn_count === 1 ? " turn" : " turns")));
    if (session.key) head.append(el("span", "badge", "key " + session.key));
    view.replaceChildren(head, ...(session.turns || []).map(renderTurn));
    view.dataset.sessionId = session.id;
  }

  function renderTurn(turn) {
    const node = el("article", "stored-turn");
    node.dataset.turn = turn.id;
    node.dataset.position = String(turn.position);
    const head = el("div", "stored-turn-head");
    head.append(
      el("b", "", "Turn " + turn.position),
      el("span", "", turn.model + (turn.upstream_model && turn.upstream_model !== turn.model ? " → " + turn.upstream_model : "")),
      el("span", "", "via " + turn.provider + (turn.host ? " (" + turn.host + ")" : "")),
      el("span", "route", Dash.routeName(turn.route_match, turn.route)),
      el("span", "when", Dash.when(turn.created_at)),
    );
    const replay = el("div", "replay");
    replay.dataset.testid = "replay";
    replay.append(...Dash.replay.renderReplay(turn));
    const prompt = el("div", "prompt");
    for (const message of turn.prompt || []) prompt.append(el("div", "prompt-line", message.role + ": " + (message.content || "")));
    const columns = el("div", "columns");
    const reasoning = el("div", "column");
    reasoning.append(el("div", "label", "Reasoning"), el("div", "reasoning-text", turn.reasoning || "(none)"));
    reasoning.lastChild.dataset.testid = "stored-reasoning";
    const answer = el("div", "column");
    answer.append(el("div", "label", "Answer"), el("div", "answer-text", turn.content || ""));
    answer.lastChild.dataset.testid = "stored-answer";
    for (const call of turn.tool_calls || []) answer.append(el("div", "tool mono", "⚙ " + call.function.name + "(" + call.function.arguments + ")"));
    columns.append(reasoning, answer);
    node.append(head, replay, prompt, columns, el("div", "usage", footer(turn)));
    return node;
  }

  function footer(turn) {
    const parts = [];
    const timings = turn.timings || {};
    parts.push("upstream " + Dash.ms(timings.upstream_ms), "first reasoning " + Dash.ms(timings.first_reasoning_ms), "total " + Dash.ms(timings.total_ms));
    if (turn.usage) parts.push(turn.usage.prompt_tokens + " in", turn.usage.completion_tokens + " out");
    parts.push("finish: " + turn.finish_reason);
    const carriers = (turn.carriers || []).map((carrier) => carrier.kind + " " + carrier.bytes + " B");
    parts.push(carriers.length > 0 ? "stored: " + carriers.join(", ") : "nothing stored to replay");
    return parts.join(" · ");
  }

  $("search-form").addEventListener("submit", (submit) => {
    submit.preventDefault();
    query = $("search").value.trim();
    filters = { model: $("filter-model").value.trim(), provider: $("filter-provider").value.trim() };
    cursors = [null];
    page = 0;
    load();
  });
  $("older").addEventListener("click", () => {
    if (cursors[page + 1]) page++;
    load();
  });
  $("newer").addEventListener("click", () => {
    if (page > 0) page--;
    load();
  });
  // a turn stored while the page is open shows up in the first page (and in the open session)
  Dash.live.onTurnEnd((event) => {
    clearTimeout(refreshTimer);
    refreshTimer = setTimeout(() => {
      if (page === 0 && !query && !filters.model && !filters.provider) load();
      if (open && open === event.session_id) show(open);
    }, 400);
  });

  Dash.history = { load, show };
})();
