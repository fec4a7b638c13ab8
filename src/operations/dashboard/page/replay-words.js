"use strict";
// A turn's replay decision (GET /v1/sessions/{id}, docs/api.md#get-v1sessionsid) in words:
// "turn 3 sent upstream with the reasoning of turns 1–2 attached as `reasoning_content`;
//  `reasoning` left out: verdict of 2026-12-03 for strictp/strict-model".
// A sentence is a list of parts: plain strings, and { code } for a field name.
(() => {
  /** "turn 1", "turns 1–3", "turns 1, 3 and 5"; turns of another session are counted apart. */
  function turnsPhrase(positions, elsewhere) {
    const sorted = [...new Set(positions)].sort((a, b) => a - b);
    const runs = [];
    for (const position of sorted) {
      const run = runs[runs.length - 1];
      if (run && position === run[1] + 1) run[1] = position;
      else runs.push([position, position]);
    }
    const named = runs.map(([from, to]) => (from === to ? String(from) : from + "–" + to));
    const parts = [];
    if (named.length > 0) parts.push((sorted.length === 1 ? "turn " : "turns ") + joinWords(named));
    if (elsewhere > 0) parts.push(elsewhere === 1 ? "a turn of another session" : elsewhere + " turns of other sessions");
    return joinWords(parts);
  }

  function joinWords(words) {
    if (words.length <= 1) return words.join("");
    return words.slice(0, -1).join(", ") + " and " + words[words.length - 1];
  }

  /** Field names as code parts, joined with "and". */
  function fieldParts(fields) {
    const parts = [];
    fields.forEach((field, index) => {
      if (index > 0) parts.push(index === fields.length - 1 ? " and " : ", ");
      parts.push({ code: field });
    });
    return parts;
  }

  function whyLeftOut(entry) {
    switch (entry.by) {
      case "verdict":
        return entry.provider
          ? "verdict of " + String(entry.recorded_at || "").slice(0, 10) + " for " + entry.provider + "/" + entry.model
          : "a verdict, no longer in force";
      case "rejected":
        return "the upstream rejected it on this turn (verdict recorded, retried without it)";
      case "opt_out":
        return "the request asked for no replay of it";
      default:
        return String(entry.by || "unknown reason");
    }
  }

  /** The sentences of one turn's decision. */
  function describeReplay(turn) {
    const replay = turn.replay;
    const name = "turn " + turn.position;
    if (!replay) return [[name + ": no replay decision recorded (stored before carrierd kept one, or a branch's copy)"]];
    const sentences = [];
    const attached = Array.isArray(replay.attached) ? replay.attached : [];
    const matched = Array.isArray(replay.matched) ? replay.matched : [];
    // one clause per set of fields: the turns that carried exactly those
    const groups = new Map();
    for (const entry of attached) {
      const fields = Array.isArray(entry.fields) ? entry.fields : [];
      if (fields.length === 0) continue;
      const id = fields.join("\u0000");
      const group = groups.get(id) || { fields, positions: [], elsewhere: 0 };
      if (typeof entry.position === "number") group.positions.push(entry.position);
      else group.elsewhere++;
      groups.set(id, group);
    }
    const first = [name + " sent upstream"];
    if (groups.size === 0) first.push(matched.length === 0 ? " with no earlier reasoning: no earlier turn matched" : " with no earlier reasoning attached");
    let clause = 0;
    for (const group of groups.values()) {
      first.push(clause++ === 0 ? " with the reasoning of " : "; the reasoning of ");
      first.push(turnsPhrase(group.positions, group.elsewhere) + " attached as ", ...fieldParts(group.fields));
    }
    for (const entry of Array.isArray(replay.left_out) ? replay.left_out : []) first.push("; ", { code: entry.field }, " left out: " + whyLeftOut(entry));
    sentences.push(first);
    if (matched.length > 0) {
      const by = [...new Set(matched.map((entry) => entry.by))];
      const positions = matched.filter((entry) => typeof entry.position === "number").map((entry) => entry.position);
      sentences.push(["Matched " + turnsPhrase(positions, matched.length - positions.length) + " by " + joinWords(by) + "."]);
    }
    const placeholders = Array.isArray(replay.placeholders) ? replay.placeholders : [];
    if (placeholders.length > 0) {
      const positions = placeholders.filter((entry) => typeof entry.position === "number").map((entry) => entry.position);
      sentences.push([
        "Placeholder reasoning (must_echo) sent for " +
          (positions.length > 0 ? turnsPhrase(positions, placeholders.length - positions.length) : placeholders.length + " message(s)") +
          ".",
      ]);
    }
    if (replay.retried) sentences.push(["The answer came from the one retry without a rejected field."]);
    if (Array.isArray(replay.effective))
      sentences.push(
        replay.effective.length > 0 ? ["Fields this call could carry: ", ...fieldParts(replay.effective), "."] : ["This call could carry no carrier field."],
      );
    return sentences;
  }

  /** The sentences as DOM: one paragraph each, field names in <code>. */
  function renderReplay(turn) {
    return describeReplay(turn).map((sentence) => {
      const paragraph = Dash.el("p", "replay-line");
      for (const part of sentence) paragraph.append(typeof part === "string" ? document.createTextNode(part) : Dash.el("code", "", part.code));
      return paragraph;
    });
  }

  Dash.replay = { describeReplay, renderReplay, turnsPhrase };
})();
