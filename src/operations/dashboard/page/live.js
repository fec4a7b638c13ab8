"use strict";
// The live view: turns as they stream over the WebSocket (/v1/events), and the log of route reloads, verdicts and failures.
(() => {
  const { $, el } = Dash;
  const MAX_SESSIONS = 12,
    MAX_TURNS = 4,
    MAX_LOG = 200;
  const sessions = new Map(); // session_id -> { card, turns: Map(turn_id -> view) }
  let socket = null,
    retryDelay = 500,
    retryTimer = null,
    eventCount = 0;
  let lastEventId = null; // the newest event_id seen (events shared through Redis carry one)
  const turnEndListeners = []; // the history list refreshes when a turn is stored

  function setStatus(state, text) {
    $("status").dataset.state = state;
    $("status-text").textContent = text;
  }

  function connect() {
    const key = Dash.key();
    if (!key) return Dash.showGate();
    clearTimeout(retryTimer);
    $("live-problem").textContent = "";
    setStatus("connecting", "connecting…");
    const ws = new WebSocket((location.protocol === "https:" ? "wss://" : "ws://") + location.host + "/v1/events");
    socket = ws;
    ws.onopen = () => {
      ws.send(JSON.stringify({ type: "auth", key }));
      // events shared through Redis carry ids: a reconnect picks up after the last one seen, missing nothing the stream holds
      ws.send(JSON.stringify(lastEventId ? { type: "subscribe", sessions: ["*"], last_event_id: lastEventId } : { type: "subscribe", sessions: ["*"] }));
    };
    ws.onmessage = (message) => {
      let event;
      try {
        event = JSON.parse(message.data);
      } catch {
        return;
      }
      handle(event);
    };
    ws.onclose = (close) => {
      if (socket !== ws) return;
      socket = null;
      // 4403: a valid key without the events scope (a chat key): this panel says so, the key stays for the panels it can read
      if (close.code === 4403) {
        setStatus("offline", "no events scope");
        $("live-problem").textContent = Dash.lacks("events");
        return;
      }
      // 4401: unknown, revoked or expired
      if (close.code === 4401) {
        sessionStorage.removeItem(Dash.STORAGE_KEY);
        setStatus("offline", "key refused");
        return Dash.showGate("The gateway refused that key.");
      }
      setStatus("offline", close.code === 1013 ? "fell behind; reconnecting" : "disconnected; retrying");
      retryTimer = setTimeout(connect, retryDelay);
      retryDelay = Math.min(retryDelay * 2, 10000);
    };
  }

  function handle(event) {
    if (typeof event.event_id === "string") lastEventId = event.event_id;
    switch (event.type) {
      case "subscribed":
        retryDelay = 500;
        return setStatus("live", "live");
      case "dropped":
        return log("warn", "Events dropped", event.count + " events were skipped because this page fell behind.");
      case "gap":
        return log("warn", "Events missing", event.message);
      case "error":
        return log("bad", "Gateway error", event.message);
      case "pong":
        return;
    }
    $("stat").textContent = ++eventCount + (eventCount === 1 ? " event" : " events");
    switch (event.type) {
      case "turn.started":
        return startTurn(event);
      case "reasoning.delta":
        return append(turnOf(event), "reasoning", event.text);
      case "content.delta":
        return append(turnOf(event), "answer", event.text);
      case "tool_call":
        return addToolCall(turnOf(event), event);
      case "turn.completed":
        for (const listener of turnEndListeners) listener(event);
        return finishTurn(turnOf(event), event);
      case "turn.failed":
        return failTurn(turnOf(event), event);
      case "routes.reloaded":
        return log(
          "ok",
          "Routes reloaded",
          "revision " + short(event.revision) + (event.previous_revision ? " (was " + short(event.previous_revision) + ")" : ""),
        );
      case "routes.rejected":
        return log("bad", "Routes rejected", describeProblems(event.errors) + "\nkeeping revision " + short(event.revision_in_force));
      case "verdict.recorded":
        return log("warn", "Verdict recorded", describeVerdict(event));
      case "upstream.failed":
        return log("bad", "Upstream failed", describeFailure(event));
    }
  }

  function sessionOf(id) {
    let session = sessions.get(id);
    if (session) {
      // most recently active first; moving a card only when it is not already first keeps scroll positions
      if ($("sessions").firstChild !== session.card) $("sessions").prepend(session.card);
      return session;
    }
    const card = el("article", "card");
    card.dataset.session = id;
    const head = el("div", "card-head");
    head.append(el("span", "sid mono", id), el("span", "spacer"));
    const badge = el("span", "badge", "waiting");
    head.append(badge);
    const meta = el("div", "meta");
    const turns = el("div", "turns");
    card.append(head, meta, turns);
    session = { card, badge, meta, turnsEl: turns, turns: new Map() };
    sessions.set(id, session);
    $("sessions").prepend(card);
    $("empty").hidden = true;
    while (sessions.size > MAX_SESSIONS) {
      const [oldest, view] = sessions.entries().next().value;
      view.card.remove();
      sessions.delete(oldest);
    }
    return session;
  }

  function startTurn(event) {
    const session = sessionOf(event.session_id);
    const view = turnOf(event);
    session.meta.replaceChildren(
      metaItem(event.model + (event.upstream_model && event.upstream_model !== event.model ? " → " + event.upstream_model : "")),
      metaItem("via " + event.provider),
      metaItem(Dash.routeName(event.route_match, event.route)),
      fieldChips(event.fields),
    );
    if (typeof event.upstream_ms === "number")
      session.meta.append(metaItem("upstream " + (event.upstream_ms < 1 ? "<1" : Math.round(event.upstream_ms)) + " ms"));
    setState(session, view, "streaming");
  }

  function metaItem(text) {
    return el("span", "", text);
  }

  function fieldChips(fields) {
    const wrap = el("span");
    if (!Array.isArray(fields) || fields.length === 0) wrap.append(el("span", "chip none", "no carrier fields"));
    else for (const field of fields) wrap.append(el("span", "chip", field), document.createTextNode(" "));
    return wrap;
  }

  function turnOf(event) {
    const session = sessionOf(event.session_id);
    let view = session.turns.get(event.turn_id);
    if (view) return view;
    const node = el("div", "turn");
    node.dataset.turn = event.turn_id;
    const reasoning = el("div", "reasoning");
    reasoning.dataset.testid = "reasoning";
    const answer = el("div", "answer");
    answer.dataset.testid = "answer";
    const tools = el("div", "tools");
    const footer = el("div", "usage");
    node.append(reasoning, answer, tools, footer);
    session.turnsEl.append(node);
    view = { session, node, reasoning, answer, tools, footer };
    session.turns.set(event.turn_id, view);
    while (session.turns.size > MAX_TURNS) {
      const [oldest, old] = session.turns.entries().next().value;
      old.node.remove();
      session.turns.delete(oldest);
    }
    return view;
  }

  function append(view, part, text) {
    if (typeof text !== "string") return;
    const target = view[part];
    target.append(text); // one text node per delta; cheap, and the browser merges them visually
    view.reasoning.classList.toggle("cursor", part === "reasoning");
    view.answer.classList.toggle("cursor", part === "answer");
    if (part === "reasoning") target.scrollTop = target.scrollHeight;
    setState(view.session, view, "streaming");
  }

  function addToolCall(view, event) {
    const tool = el("div", "tool mono");
    tool.append(el("b", "", "⚙ " + event.name), document.createTextNode("(" + event.arguments + ")"));
    view.tools.append(tool);
  }

  function finishTurn(view, event) {
    view.reasoning.classList.remove("cursor");
    view.answer.classList.remove("cursor");
    const usage = event.usage;
    const parts = [];
    if (usage) {
      parts.push(usage.prompt_tokens + " prompt", usage.completion_tokens + " completion");
      const reasoningTokens = usage.completion_tokens_details && usage.completion_tokens_details.reasoning_tokens;
      if (typeof reasoningTokens === "number") parts.push(reasoningTokens + " reasoning");
    }
    parts.push("finish: " + event.finish_reason);
    view.footer.textContent = parts.join(" · ");
    setState(view.session, view, "completed");
  }

  function failTurn(view, event) {
    view.reasoning.classList.remove("cursor");
    view.answer.classList.remove("cursor");
    view.node.append(el("div", "error", "failed: " + ((event.error && event.error.message) || "unknown error")));
    setState(view.session, view, "failed");
  }

  function setState(session, view, state) {
    session.badge.dataset.state = state;
    session.badge.textContent = state;
    view.node.dataset.state = state;
  }

  function log(kind, title, detail) {
    $("log-empty")?.remove();
    const entry = el("div", "entry");
    entry.dataset.kind = kind;
    entry.append(el("time", "", new Date().toLocaleTimeString()), el("span", "kind", title));
    if (detail) entry.append(el("div", "detail", detail));
    $("log").prepend(entry);
    while ($("log").children.length > MAX_LOG) $("log").lastChild.remove();
  }

  function describeProblems(errors) {
    if (!Array.isArray(errors) || errors.length === 0) return "the file is invalid";
    return errors
      .slice(0, 3)
      .map((problem) =>
        typeof problem === "string"
          ? problem
          : (problem.line ? problem.line + ":" + (problem.column || 1) + " " : "") + (problem.message || JSON.stringify(problem)),
      )
      .join("\n");
  }

  function describeVerdict(event) {
    const fields = Array.isArray(event.fields) ? event.fields.join(", ") : event.field;
    return (event.provider || "?") + " / " + (event.model || "?") + " rejects " + fields + (event.message ? "\n" + event.message : "");
  }

  function describeFailure(event) {
    const error = event.error || {};
    return (
      (event.provider || "?") +
      " / " +
      (event.upstream_model || "?") +
      ": " +
      (error.code || "error") +
      (error.status ? " " + error.status : "") +
      (error.message ? "\n" + error.message : "")
    );
  }

  function short(revision) {
    return typeof revision === "string" ? revision.slice(0, 10) : "?";
  }

  function disconnect() {
    clearTimeout(retryTimer);
    const old = socket;
    socket = null;
    if (old) old.close();
    setStatus("offline", "not connected");
  }

  // keeps idle connections honest through proxies that drop silent sockets
  setInterval(() => {
    if (socket && socket.readyState === 1) socket.send('{"type":"ping"}');
  }, 25000);

  /** Closes the connection as a network loss does: the page reconnects by itself (a test's way to cut it). */
  function dropConnection() {
    if (socket) socket.close();
  }

  Dash.live = { connect, disconnect, dropConnection, onTurnEnd: (listener) => turnEndListeners.push(listener) };
})();
