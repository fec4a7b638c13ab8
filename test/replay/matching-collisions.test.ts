import "reflect-metadata";
import { expect, test } from "vitest";
import type { ChatMessage, ToolCall } from "../../src/providers/contract.js";
import { callKeyOf, fingerprintMessage, fingerprintOf } from "../../src/conversation/fingerprint.js";
import { isUniqueCallId } from "../../src/conversation/call-ids.js";
import { sessionReads } from "../support/session-reads.js";
import { findSession } from "../../src/turn/sessions/session-finder.js";
import { openDatabase } from "../../src/storage/sqlite/database.js";
import { SQLITE_MIGRATIONS } from "../../src/storage/sqlite/migrations.js";
import { SqliteStorage } from "../../src/storage/sqlite/sqlite-storage.js";

// normalisation makes turns alike; conversation order tells them apart (docs/sessions-and-replay.md#how-a-request-finds-its-session).
const store = new SqliteStorage(openDatabase(":memory:", SQLITE_MIGRATIONS), undefined);
let counter = 0;
function save(sessionId: string, content: string, parentTurnId?: string, toolCalls: ToolCall[] = [], keyHash = "scope"): string {
  const id = `turn_${++counter}`;
  store.writes.saveNow({
    id,
    sessionId,
    keyHash,
    parentTurnId,
    model: "m",
    plugin: "openai-compatible",
    provider: "p",
    host: "h",
    upstreamModel: "m",
    prompt: [],
    content,
    toolCalls,
    reasoningText: `reasoning of ${id}`,
    reasoningDetails: undefined,
    nativeRecord: undefined,
    usage: undefined,
    finishReason: "stop",
    upstreamId: undefined,
    fingerprint: fingerprintOf(content, toolCalls),
  });
  return id;
}
const assistant = (content: ChatMessage["content"], tool_calls?: ToolCall[]): ChatMessage => ({
  role: "assistant",
  content,
  ...(tool_calls ? { tool_calls } : {}),
});
const user = (content: string): ChatMessage => ({ role: "user", content });
const call = (id: string, args = '{"city":"Paris"}'): ToolCall[] => [{ id, type: "function", function: { name: "get_weather", arguments: args } }];

test("the same short reply in two sessions of one key: the conversation's own session wins, not the most recent", async () => {
  const a1 = save("sess_a", "Paris is the capital of France, on the Seine.");
  const a2 = save("sess_a", "OK.", a1);
  const b1 = save("sess_b", "Something else entirely.");
  save("sess_b", "OK.", b1); // newer
  const found = await findSession(
    sessionReads(store),
    "scope",
    [user("q"), assistant("\nParis is the capital of France, on the Seine."), user("fine"), assistant("OK."), user("next")],
    undefined,
  );
  expect(found.sessionId).toBe("sess_a");
  expect([...found.turnIds.values()]).toEqual([a1, a2]);
  expect(found.matched).toMatchObject({ assistant: 2, fingerprint: 2, elsewhere: 0 });
});

test("the same text twice in one session: each message takes the turn that continues the one before", async () => {
  const t1 = save("sess_twice", "OK.");
  const t2 = save("sess_twice", "Done, next step.", t1);
  const t3 = save("sess_twice", "OK.", t2);
  const found = await findSession(
    sessionReads(store),
    "scope",
    [assistant("OK."), user("go"), assistant("Done, next step."), user("again"), assistant(" OK. ")],
    "sess_twice",
  );
  expect([...found.turnIds.values()]).toEqual([t1, t2, t3]);
});

test("a generic reply after a branch: the branch the client continues, by its parent", async () => {
  const root1 = save("sess_branchy", "First answer about cats.");
  const reply1 = save("sess_branchy", "Sure.", root1);
  const root2 = save("sess_branchy", "Regenerated answer about dogs."); // the client regenerated turn 1
  save("sess_branchy", "Sure.", root2); // newer, on the other branch
  const found = await findSession(
    sessionReads(store),
    "scope",
    [user("pets?"), assistant("First answer about cats."), user("more"), assistant("Sure.")],
    undefined,
  );
  expect(found.sessionId).toBe("sess_branchy");
  expect(found.turnIds.get(3)).toBe(reply1);
});

test('tool-call turns: content "" and reshaped arguments match by ids and names; call_0-style ids never do on that key', async () => {
  const id = "call_00_Xk9fQ2mLr8Tz5WbN";
  const t1 = save("sess_tools", "Let me check.", undefined, call(id));
  const libreChat = await findSession(
    sessionReads(store),
    "scope",
    [user("weather?"), assistant("", call(id, '{"city":"Paris","unit":"celsius"}'))],
    undefined,
  );
  expect(libreChat.turnIds.get(1)).toBe(t1);
  expect(libreChat.matched).toMatchObject({ fingerprint: 0, ids: 1 });
  // Open WebUI: <think> inlined, json.dumps spacing
  const owui = await findSession(
    sessionReads(store),
    "scope",
    [user("weather?"), assistant("<think>R</think>\nLet me check.", call(id, '{"city": "Paris"}'))],
    undefined,
  );
  expect(owui.matched).toMatchObject({ fingerprint: 1, ids: 0 });
  expect(owui.turnIds.get(1)).toBe(t1);

  save("sess_short", "Calling.", undefined, call("call_0"));
  const short = await findSession(sessionReads(store), "scope", [assistant("", call("call_0"))], undefined);
  expect(short.turnIds.size).toBe(0);
  expect(callKeyOf(call("call_0"))).toBeUndefined();
  expect(isUniqueCallId("functions.get_weather:0")).toBe(false);
  expect(isUniqueCallId("call_abc123")).toBe(false);
  expect(isUniqueCallId("toolu_01A09q90qw90lq917835lq9")).toBe(true);
  expect(isUniqueCallId("call_aBcDeFgHiJkLmNoPqRsTuVwX")).toBe(true);
});

test('normalisation: reasoning blocks (attributes allowed), details, parts, both ends, whitespace runs, "" as {}', () => {
  const base = fingerprintMessage(assistant("Hello **world**."));
  for (const resent of [
    "\nHello **world**.",
    '<details type="reasoning" done="true" duration="3">\n<summary>Thought for 3 seconds</summary>\n> R\n</details>\nHello **world**.',
    "<think>R</think>\nHello **world**.",
    '<thinking foo="bar">R</thinking>Hello **world**.',
    "<Thought>R</Thought> Hello **world**.",
    "<|begin_of_thought|>R<|end_of_thought|><|begin_of_solution|>Hello **world**.<|end_of_solution|>",
    "◁think▷R◁/think▷Hello **world**.",
    "Hello   **world**.\n",
  ])
    expect(fingerprintMessage(assistant(resent)), resent).toBe(base);
  expect(fingerprintMessage(assistant([{ type: "text", text: "Hello " }, { type: "image_url" }, { type: "text", text: "**world**." }] as never))).toBe(base);
  expect(fingerprintMessage(assistant(null, call("call_x", "")))).toBe(fingerprintMessage(assistant("", call("call_x", "{}"))));
  const two: ToolCall[] = [...call("call_b"), ...call("call_a")];
  expect(fingerprintMessage(assistant("", two))).toBe(fingerprintMessage(assistant("", [...two].reverse())));
});
