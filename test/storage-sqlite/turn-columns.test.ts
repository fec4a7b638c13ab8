import { expect, test } from "vitest";
import type { ChatMessage } from "../../src/providers/contract.js";
import { PROMPT_HEAD_MIN_CHARS } from "../../src/storage/prompt-heads.js";
import { turnJsonColumns } from "../../src/storage/rows.js";
import { columnsOf, journalJson } from "../../src/storage/sqlite/turn-columns.js";
import { callKeyOf } from "../../src/conversation/fingerprint.js";
import type { NewTurn } from "../../src/storage/turns.js";
import { newTurn } from "../storage/contract.js";

// turn columns made once (src/storage/sqlite/turn-columns.ts): the journal line is made of the row's columns and means the same turn
const SYSTEM: ChatMessage = { role: "system", content: `Rules. ${"Follow them. ".repeat(PROMPT_HEAD_MIN_CHARS / 8)}` };
const toolCall = { id: "call_1", type: "function" as const, function: { name: "read", arguments: '{"path":"a.ts"}' } };

const shapes: NewTurn[] = [
  newTurn("s1", "plain"),
  newTurn("s2", "with a head", { prompt: [SYSTEM, { role: "user", content: "hi" }] }),
  newTurn("s3", "head alone", { prompt: [SYSTEM] }),
  newTurn("s4", "tool calls", { toolCalls: [toolCall], depth: 3, parentTurnId: "turn_0" }),
  newTurn("s5", "no carriers", { reasoningDetails: undefined, nativeRecord: undefined, usage: undefined, upstreamId: undefined }),
  newTurn("s6", "audited", {
    audit: {
      route: 1,
      timings: { upstream_ms: 12.5, first_reasoning_ms: null, first_content_ms: 3, total_ms: 20 },
      replay: {
        effective: ["reasoning_details"],
        matched: [[1, "turn_0", "fingerprint"]],
        attached: [[1, ["reasoning_details"]]],
        placeholders: [],
        left_out: [],
        retried: false,
      },
    },
  }),
  newTurn("s7", 'quotes " and \\ and \u2028', { reasoningText: "", prompt: [] }),
];

test("a journal line parses to the turn as JSON.stringify would have written it", () => {
  for (const turn of shapes) {
    expect(JSON.parse(journalJson(turn))).toEqual(JSON.parse(JSON.stringify(turn)));
  }
});

test("a journaled turn's row is written from the columns its line was made of, the same as made anew", () => {
  for (const turn of shapes) {
    journalJson(turn);
    expect(columnsOf(turn)).toEqual({ json: turnJsonColumns(turn), callKey: callKeyOf(turn.toolCalls) });
  }
  const alone = newTurn("s8", "never journaled", { toolCalls: [toolCall] });
  expect(columnsOf(alone)).toEqual({ json: turnJsonColumns(alone), callKey: callKeyOf(alone.toolCalls) });
});
