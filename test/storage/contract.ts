import { afterEach, describe, expect, test } from "vitest";
import type { Json, JsonObject, ToolCall } from "../../src/providers/contract.js";
import { callKeyOf, fingerprintOf } from "../../src/conversation/fingerprint.js";
import { KeyExistsError, type NewKey } from "../../src/storage/keys.js";
import type { ResponseRecord } from "../../src/storage/responses.js";
import type { TurnAudit } from "../../src/storage/session-history.js";
import { ListDeadlineError, type SessionQuery } from "../../src/storage/sessions.js";
import { TURNS_PER_DEPTH, type Storage } from "../../src/storage/storage.js";
import type { FingerprintMatch, NewTurn, SessionModelConfig } from "../../src/storage/turns.js";
import type { Rejection } from "../../src/storage/verdicts.js";
import { nextMillisecond } from "../support/wait-for.js";

/**
 * How a backend's storage is opened for the contract: `gateway` as the
 * daemon opens it (its fastest durability path included), `cli` as a
 * command in another process opens the same state beside it.
 */
export type StorageRole = "gateway" | "cli";

/** One empty state (a database, a home) on which storages are opened. */
export interface StorageState {
  open(role: StorageRole): Promise<Storage>;
  /** Removes the state; every storage opened on it is closed by then. */
  dispose(): Promise<void>;
}

/** What a backend's contract test file provides: a fresh, empty state per test. */
export type StorageFactory = () => Promise<StorageState>;

// carriers as providers send them: a signed thinking block, an encrypted blob, a redacted one, text that JSON would
// happily normalise if it were re-serialised anywhere (key order, escapes, unicode, a float's digits)
const SIGNED_DETAILS: Json[] = [
  { type: "reasoning.text", text: "Step 1: 2+2.\r\n\tThen — ünïcödé ✓ \u2028", signature: "EqQBCkYIARgCKkCzB+/=sig", format: "anthropic-claude-v1", index: 0 },
  { type: "reasoning.encrypted", data: "gAAAAABo+/Zm9vYmFy==\n", id: "rs_01", format: "openai-responses-v1", index: 1 },
  { type: "reasoning.summary", summary: "", z: 1.5e-7, a: [null, true, { nested: "x" }] },
];
const NATIVE: JsonObject = {
  type: "native-test.assistant",
  opaque: "opaque-1-Zm9v/+==",
  blocks: [{ kind: "redacted_thinking", data: "EmwKAhgB..." }],
  zeta: 0.1,
  alpha: "𝔘𝔫𝔦",
};
const REASONING = 'Let me think.\n\n  Indented — and a trailing space \nand "quotes" and \\ backslashes ';

/** The stored turns `keys` match under `keyHash`: the `matches` of the request's lookup. */
export async function matchesFor(store: Storage, keyHash: string, keys: readonly string[]): Promise<Map<string, FingerprintMatch[]>> {
  return (await store.turns.lookup({ keyHash, keys, provider: "none", host: "none", model: "none", explicit: undefined, withCarriers: false })).matches;
}

/** The verdict table's fields for a (provider, host, model): the `verdictFields` of the request's lookup. */
async function fieldsFor(store: Storage, provider: string, host: string, model: string): Promise<readonly string[]> {
  return (await store.turns.lookup({ keyHash: "none", keys: [], provider, host, model, explicit: undefined, withCarriers: false })).verdictFields;
}

/** A session's model config: what the request's lookup answers for its explicit session. */
async function modelConfigOf(store: Storage, sessionId: string): Promise<Readonly<SessionModelConfig>> {
  const answer = await store.turns.lookup({
    keyHash: "none",
    keys: [],
    provider: "none",
    host: "none",
    model: "none",
    explicit: sessionId,
    withCarriers: false,
  });
  return answer.modelConfigs.get(sessionId) ?? {};
}

/** A rejection of `fields` by (p, h, m), met by `sessionId` under key-a. */
function rejection(fields: string[], extra: Partial<Rejection> = {}): Rejection {
  return {
    provider: "p",
    host: "h",
    model: "m",
    fields,
    status: 400,
    message: "unknown field",
    sessionId: "sess_rejected",
    keyHash: "key-a",
    clientModel: "client-model",
    ...extra,
  };
}

/** A response of a chain (Responses API), in session sess_resp. */
const record = (id: string, parentId: string | null, text: string, extra: Partial<ResponseRecord> = {}): ResponseRecord => ({
  id,
  parentId,
  sessionId: "sess_resp",
  keyHash: "key-a",
  model: "demo",
  createdAt: 1,
  conversationId: null,
  messages: [
    { role: "user", content: text },
    { role: "assistant", content: `re: ${text}` },
  ],
  body: { id, object: "response", output_text: `re: ${text}` },
  inputItems: [{ type: "message", role: "user", content: text }],
  ...extra,
});

let counter = 0;
/** A turn with every kind of carrier, under key-a; `extra` overrides any field. */
export function newTurn(sessionId: string, content: string, extra: Partial<NewTurn> = {}): NewTurn {
  const id = extra.id ?? `turn_contract_${++counter}`;
  const toolCalls = extra.toolCalls ?? [];
  return {
    id,
    sessionId,
    keyHash: "key-a",
    parentTurnId: undefined,
    model: "client-model",
    plugin: "openai-compatible",
    provider: "prov",
    host: "upstream.example",
    upstreamModel: "upstream-model",
    prompt: [{ role: "user", content: `asking for ${id}` }],
    content,
    toolCalls,
    reasoningText: REASONING,
    reasoningDetails: SIGNED_DETAILS,
    nativeRecord: NATIVE,
    usage: { prompt_tokens: 3, completion_tokens: 5, total_tokens: 8 },
    finishReason: toolCalls.length > 0 ? "tool_calls" : "stop",
    upstreamId: `up_${id}`,
    fingerprint: fingerprintOf(content, toolCalls),
    ...extra,
  };
}

const toolCall = (id: string, name = "get_weather", args = '{"city":"Paris"}'): ToolCall => ({ id, type: "function", function: { name, arguments: args } });
const ids = (matches: readonly { id: string }[] | undefined) => (matches ?? []).map((match) => match.id);

/**
 * The contract every Storage backend must pass, declared under `name`.
 * A backend's test file is one call: `storageContract("sqlite", factory)`.
 */
export function storageContract(name: string, factory: StorageFactory): void {
  describe(`Storage contract: ${name}`, () => {
    const opened: Storage[] = [];
    const states: StorageState[] = [];
    afterEach(async () => {
      for (const storage of opened.splice(0)) await storage.close();
      for (const state of states.splice(0)) await state.dispose();
    });
    const fresh = async () => {
      const state = await factory();
      states.push(state);
      return state;
    };
    const open = async (state: StorageState, role: StorageRole = "gateway") => {
      const storage = await state.open(role);
      opened.push(storage);
      return storage;
    };
    const storage = async () => open(await fresh());

    describe("turns", () => {
      test("carriers come back byte for byte: signed blocks, encrypted blobs, native records, the reasoning text", async () => {
        const store = await storage();
        const turn = newTurn("sess_carriers", "The answer is 4.");
        await store.turns.save(turn);
        const sources = await store.turns.replaySources(new Map([[7, turn.id]]));
        const source = sources.get(7)!;
        expect(source).toMatchObject({ id: turn.id, sessionId: "sess_carriers", plugin: "openai-compatible", upstreamModel: "upstream-model" });
        expect(source.reasoningText).toBe(REASONING);
        expect(JSON.stringify(source.reasoningDetails)).toBe(JSON.stringify(SIGNED_DETAILS));
        expect(JSON.stringify(source.nativeRecord)).toBe(JSON.stringify(NATIVE));
        const shown = (await store.sessions.show("sess_carriers"))!.turnList[0]!;
        expect(JSON.stringify(shown.reasoningDetails)).toBe(JSON.stringify(SIGNED_DETAILS));
        expect(JSON.stringify(shown.nativeRecord)).toBe(JSON.stringify(NATIVE));
        expect(shown).toMatchObject({
          content: "The answer is 4.",
          usage: turn.usage,
          finishReason: "stop",
          upstreamId: turn.upstreamId,
          model: "client-model",
          provider: "prov",
          host: "upstream.example",
          position: 1,
        });
      });

      test("a NUL anywhere (content, prompt, reasoning, details, native record, tool call) comes back byte for byte", async () => {
        const store = await storage();
        // a string that starts with U+0001 and one that holds the escape's own pairs must survive as well as a NUL
        const details: Json[] = [
          { type: "reasoning.text", text: "a\u0000b\u0000", signature: "sig\u0000==" },
          { type: "reasoning.encrypted", data: "\u0001\u0003x\u0001\u0002" },
        ];
        const native: JsonObject = { type: "native-test.assistant", "k\u0000ey": "v\u0000", blocks: [{ data: "\u0000" }] };
        const turn = newTurn("sess_nul\u0000", "Four\u0000 and \u0001\u0002 done", {
          prompt: [{ role: "user", content: "what\u0000 is 2+2?" }],
          reasoningText: "\u0001think\u0000ing\u0001",
          reasoningDetails: details,
          nativeRecord: native,
          toolCalls: [toolCall("call_\u0000", "f\u0000n", '{"x":"\u0000"}')],
          upstreamId: "up\u0000",
          model: "client\u0000model",
        });
        await store.turns.save(turn);
        const source = (await store.turns.replaySources(new Map([[0, turn.id]]))).get(0)!;
        expect(source.sessionId).toBe("sess_nul\u0000");
        expect(source.reasoningText).toBe("\u0001think\u0000ing\u0001");
        expect(JSON.stringify(source.reasoningDetails)).toBe(JSON.stringify(details));
        expect(JSON.stringify(source.nativeRecord)).toBe(JSON.stringify(native));
        expect(ids((await matchesFor(store, "key-a", [turn.fingerprint])).get(turn.fingerprint))).toEqual([turn.id]);
        const shown = (await store.sessions.show("sess_nul\u0000"))!;
        expect(shown.turnList[0]).toMatchObject({
          content: "Four\u0000 and \u0001\u0002 done",
          model: "client\u0000model",
          upstreamId: "up\u0000",
          toolCalls: turn.toolCalls,
        });
        expect(shown.prompts).toEqual([[{ role: "user", content: "what\u0000 is 2+2?" }]]);
        expect((await store.sessions.list({ limit: 10 })).map((session) => session.id)).toContain("sess_nul\u0000");
      });

      test("a turn without carriers stores none; unknown turn ids are absent from the answer", async () => {
        const store = await storage();
        const bare = newTurn("sess_bare", "Plain.", {
          reasoningText: "",
          reasoningDetails: undefined,
          nativeRecord: undefined,
          usage: undefined,
          upstreamId: undefined,
        });
        await store.turns.save(bare);
        const sources = await store.turns.replaySources(
          new Map([
            ["a", bare.id],
            ["b", "turn_never_stored"],
          ]),
        );
        expect([...sources.keys()]).toEqual(["a"]);
        expect(sources.get("a")).toMatchObject({ reasoningText: "", reasoningDetails: undefined, nativeRecord: undefined });
        expect((await store.turns.replaySources(new Map())).size).toBe(0);
      });

      test("fingerprints are scoped to the key hash, matched newest first, and absent when nothing matched", async () => {
        const store = await storage();
        const older = newTurn("sess_old", "Hello! How can I help?");
        const theirs = newTurn("sess_theirs", "Hello! How can I help?", { keyHash: "key-b" });
        const newer = newTurn("sess_new", "Hello! How can I help?");
        for (const turn of [older, theirs, newer]) await store.turns.save(turn);
        const found = await matchesFor(store, "key-a", [older.fingerprint, fingerprintOf("never said", [])]);
        expect(ids(found.get(older.fingerprint))).toEqual([newer.id, older.id]);
        expect(found.get(older.fingerprint)![0]).toEqual({ id: newer.id, session_id: "sess_new", parent_turn_id: null });
        expect(found.has(fingerprintOf("never said", []))).toBe(false);
        expect(ids((await matchesFor(store, "key-b", [older.fingerprint])).get(older.fingerprint))).toEqual([theirs.id]);
        expect((await matchesFor(store, "key-c", [older.fingerprint])).size).toBe(0);
        expect((await matchesFor(store, "key-a", [])).size).toBe(0);
      });

      test("a tool-call turn is found by its call key (ids and names) as well as its fingerprint; parents are kept", async () => {
        const store = await storage();
        const first = newTurn("sess_tools", "Let me check.", { toolCalls: [toolCall("call_00_Xk9fQ2mLr8Tz5WbN")] });
        const second = newTurn("sess_tools", "It is sunny.", { parentTurnId: first.id });
        await store.turns.save(first);
        await store.turns.save(second);
        const callKey = callKeyOf(first.toolCalls)!;
        expect(callKey).toBeDefined();
        const found = await matchesFor(store, "key-a", [callKey, first.fingerprint, second.fingerprint]);
        expect(ids(found.get(callKey))).toEqual([first.id]);
        expect(ids(found.get(first.fingerprint))).toEqual([first.id]);
        expect(found.get(second.fingerprint)).toEqual([{ id: second.id, session_id: "sess_tools", parent_turn_id: first.id }]);
      });

      test("a new turn is the newest match at once, whether it completed alone or beside another", async () => {
        const store = await storage();
        const alone = newTurn("sess_order", "Same text.");
        await store.turns.save(alone);
        expect(ids((await matchesFor(store, "key-a", [alone.fingerprint])).get(alone.fingerprint))).toEqual([alone.id]);
        const beside = newTurn("sess_order", "Same text.");
        const other = newTurn("sess_order_other", "Other text.");
        await Promise.all([store.turns.save(beside), store.turns.save(other)]); // completed together
        expect(ids((await matchesFor(store, "key-a", [alone.fingerprint])).get(alone.fingerprint))).toEqual([beside.id, alone.id]);
        expect((await store.sessions.show("sess_order"))!.turnList.map((turn) => [turn.id, turn.position])).toEqual([
          [alone.id, 1],
          [beside.id, 2],
        ]);
      });

      test("lookup answers the matches, the verdict fields, the sessions' config and the newest matches' carriers, in one call", async () => {
        const store = await storage();
        const older = newTurn("sess_lookup_a", "Shared text.");
        const newer = newTurn("sess_lookup_b", "Shared text.", { reasoningText: "newer reasoning" });
        const other = newTurn("sess_lookup_a", "Only here.", { toolCalls: [toolCall("call_01_Qm7vR2xLp9Ks4TdW")] });
        for (const turn of [older, other, newer]) await store.turns.save(turn);
        const route = { provider: "prov", host: "upstream.example", model: "upstream-model" };
        await store.verdicts.record(rejection(["reasoning_details"], { ...route, sessionId: "sess_explicit" }));
        await store.verdicts.record(rejection(["reasoning"], { ...route, host: "elsewhere", sessionId: "sess_elsewhere" }));
        await store.verdicts.record(rejection(["reasoning_content"], { ...route, host: "h2", sessionId: "sess_lookup_a" }));
        const config = { rejected_carriers: [["prov", "h2", "upstream-model", ["reasoning_content"]]] };
        const callKey = callKeyOf(other.toolCalls)!;
        const keys = [older.fingerprint, other.fingerprint, callKey, fingerprintOf("never said", [])];
        const query = {
          keyHash: "key-a",
          keys,
          provider: "prov",
          host: "upstream.example",
          model: "upstream-model",
          explicit: "sess_explicit",
          withCarriers: true,
        };
        const answer = await store.turns.lookup(query);
        expect(answer.matches).toEqual(await matchesFor(store, "key-a", keys));
        expect(ids(answer.matches.get(older.fingerprint))).toEqual([newer.id, older.id]);
        expect(answer.verdictFields).toEqual(["reasoning_details"]);
        expect(answer.modelConfigs.get("sess_lookup_a")).toEqual(config);
        expect(answer.modelConfigs.get("sess_explicit")).toEqual({
          rejected_carriers: [["prov", "upstream.example", "upstream-model", ["reasoning_details"]]],
        });
        expect(answer.modelConfigs.get("sess_lookup_b") ?? {}).toEqual({});
        // the newest match of each key carries its carriers; the older one is left to replaySources
        expect([...answer.sources.keys()].sort()).toEqual([newer.id, other.id].sort());
        const expected = await store.turns.replaySources(
          new Map([
            [newer.id, newer.id],
            [other.id, other.id],
          ]),
        );
        for (const [id, source] of expected) expect(JSON.stringify(answer.sources.get(id))).toBe(JSON.stringify(source));
        expect((await store.turns.lookup({ ...query, withCarriers: false })).sources.size).toBe(0);
        const empty = await store.turns.lookup({ ...query, keys: [], explicit: undefined, host: "nowhere" });
        expect([empty.matches.size, empty.verdictFields.length, empty.modelConfigs.size, empty.sources.size]).toEqual([0, 0, 0, 0]);
      });

      test("turnsAtDepths answers the turns at the depths asked for, newest first per depth, and whether each was asked with the same prompt", async () => {
        const store = await storage();
        const turns = [newTurn("sess_pos", "one"), newTurn("sess_pos", "two"), newTurn("sess_pos", "three")];
        for (const turn of turns) await store.turns.save(turn);
        const asked = (depths: number[], prompt = "[]") => depths.map((depth) => ({ depth, prompt }));
        // a turn saved without a depth has its position as its depth
        const found = await store.turns.turnsAtDepths("key-a", "sess_pos", asked([1, 3, 9]));
        expect([...found.keys()].sort()).toEqual([1, 3]);
        expect(found.get(3)).toEqual([{ id: turns[2]!.id, session_id: "sess_pos", parent_turn_id: null, samePrompt: false }]);
        const third = await store.turns.turnsAtDepths("key-a", "sess_pos", [{ depth: 3, prompt: JSON.stringify(turns[2]!.prompt) }]);
        expect(third.get(3)?.[0]?.samePrompt).toBe(true);
        expect((await store.turns.turnsAtDepths("key-a", "sess_elsewhere", asked([1]))).size).toBe(0);
        // turns of another key filed in the session are not its turns
        expect((await store.turns.turnsAtDepths("key-b", "sess_pos", asked([1, 3]))).size).toBe(0);
        // a second conversation in the session: its opener is at depth 1 beside the first one's, at position 4
        const opener = newTurn("sess_pos", "another opener", { depth: 1 });
        const reply = newTurn("sess_pos", "its reply", { depth: 2, parentTurnId: opener.id });
        await store.turns.save(opener);
        await store.turns.save(reply);
        const both = await store.turns.turnsAtDepths("key-a", "sess_pos", [
          { depth: 1, prompt: JSON.stringify(turns[0]!.prompt) },
          { depth: 2, prompt: JSON.stringify(reply.prompt) },
        ]);
        expect(both.get(1)?.map((match) => [match.id, match.samePrompt])).toEqual([
          [opener.id, false],
          [turns[0]!.id, true],
        ]);
        expect(both.get(2)).toEqual([
          { id: reply.id, session_id: "sess_pos", parent_turn_id: opener.id, samePrompt: true },
          { id: turns[1]!.id, session_id: "sess_pos", parent_turn_id: null, samePrompt: false },
        ]);
      });

      test("turnsAtDepths gives at most TURNS_PER_DEPTH turns of a depth, the newest", async () => {
        const store = await storage();
        const openers = Array.from({ length: TURNS_PER_DEPTH + 3 }, (_, index) => newTurn("sess_busy", `opener ${index}`, { depth: 1 }));
        for (const turn of openers) await store.turns.save(turn);
        const found = await store.turns.turnsAtDepths("key-a", "sess_busy", [{ depth: 1, prompt: "[]" }]);
        expect(ids(found.get(1))).toEqual(
          openers
            .slice(-TURNS_PER_DEPTH)
            .reverse()
            .map((turn) => turn.id),
        );
      });
    });

    describe("sessions", () => {
      test("a rejection before a session's first turn makes its row once; show sees it", async () => {
        const store = await storage();
        expect(await store.sessions.show("sess_empty")).toBeUndefined();
        await store.verdicts.record(rejection(["reasoning"], { sessionId: "sess_empty", clientModel: "client-model" }));
        await store.verdicts.record(rejection(["reasoning"], { sessionId: "sess_empty", clientModel: "another-model" })); // already there: unchanged
        expect(await store.sessions.show("sess_empty")).toEqual({
          id: "sess_empty",
          keyHash: "key-a",
          model: "client-model",
          provider: null,
          parentId: null,
          turns: 0,
          firstPrompt: null,
          createdAt: expect.any(String),
          updatedAt: expect.any(String),
          turnList: [],
          prompts: [],
          modelConfig: { rejected_carriers: [["p", "h", "m", ["reasoning"]]] },
          compaction: { archived: new Set(), checkpoints: [] },
        });
        expect(await store.sessions.show("sess_none")).toBeUndefined();
      });

      test("list is most recently active first, with turn counts and the newest turn's model; show has every turn's prompt", async () => {
        const store = await storage();
        await store.turns.save(newTurn("sess_a", "a1"));
        await store.turns.save(newTurn("sess_b", "b1"));
        await store.committed(); // a turn's activity may be stamped when it is committed, not when it was answered
        await nextMillisecond(); // timestamps have millisecond resolution
        const last = newTurn("sess_a", "a2", { model: "newer-model" });
        await store.turns.save(last);
        const listed = await store.sessions.list({ limit: 10 });
        expect(listed.map((row) => [row.id, row.turns, row.model])).toEqual([
          ["sess_a", 2, "newer-model"],
          ["sess_b", 1, "client-model"],
        ]);
        expect(await store.sessions.list({ limit: 1 })).toHaveLength(1);
        const shown = (await store.sessions.show("sess_a"))!;
        expect(shown.prompts).toEqual([[{ role: "user", content: expect.stringContaining("asking for") }], last.prompt]);
      });

      test("list filters by key, model, provider and text and pages by a cursor; show has each turn's depth, audit and carriers", async () => {
        const store = await storage();
        const audit: TurnAudit = {
          route: 2,
          timings: { upstream_ms: 5, first_reasoning_ms: null, first_content_ms: 7, total_ms: 9 },
          replay: {
            effective: ["reasoning_details"],
            matched: [[1, "turn_x", "fingerprint"]],
            attached: [[1, ["reasoning_details"]]],
            placeholders: [],
            left_out: [["reasoning", "verdict"]],
            retried: false,
          },
        };
        const fjords = [{ role: "user" as const, content: "Tell me about FJORDS" }];
        await store.turns.save(newTurn("sess_l1", "Paris is lovely", { provider: "prov-a" }));
        await store.committed(); // a turn's activity may be stamped when it is committed
        await nextMillisecond();
        await store.turns.save(newTurn("sess_l2", "Rome too", { keyHash: "key-b", model: "other-model", depth: 4, audit }));
        await store.committed();
        await nextMillisecond();
        await store.turns.save(newTurn("sess_l3", "and Oslo", { prompt: fjords }));
        const listed = async (query: Partial<SessionQuery>) => (await store.sessions.list({ limit: 10, ...query })).map((session) => session.id);
        expect(await listed({})).toEqual(["sess_l3", "sess_l2", "sess_l1"]);
        expect(await listed({ keyHash: "key-b" })).toEqual(["sess_l2"]);
        expect(await listed({ model: "other-model" })).toEqual(["sess_l2"]);
        expect(await listed({ provider: "prov-a" })).toEqual(["sess_l1"]);
        expect(await listed({ text: "paris" })).toEqual(["sess_l1"]);
        expect(await listed({ text: "fjords" })).toEqual(["sess_l3"]);
        const [first] = await store.sessions.list({ limit: 1 });
        expect(first).toMatchObject({ id: "sess_l3", keyHash: "key-a", provider: "prov", turns: 1, firstPrompt: JSON.stringify(fjords) });
        expect(await listed({ after: { updatedAt: first!.updatedAt, id: first!.id } })).toEqual(["sess_l2", "sess_l1"]);
        const shown = (await store.sessions.show("sess_l2"))!.turnList[0]!;
        expect(shown).toMatchObject({ depth: 4, audit });
        expect(shown.carriers).toEqual([
          { kind: "reasoning_text", bytes: Buffer.byteLength(REASONING) },
          {
            kind: "reasoning_details",
            items: 3,
            bytes: Buffer.byteLength(JSON.stringify(SIGNED_DETAILS)),
            types: ["reasoning.text", "reasoning.encrypted", "reasoning.summary"],
          },
          { kind: "native_record", bytes: Buffer.byteLength(JSON.stringify(NATIVE)), type: "native-test.assistant" },
        ]);
        expect((await store.sessions.show("sess_l1"))!.turnList[0]).toMatchObject({ depth: 1, audit: undefined });
      });

      test("a list past its deadline is stopped with ListDeadlineError; one within it answers", async () => {
        const store = await storage();
        await store.turns.save(newTurn("sess_dl", "an answer to search"));
        await store.committed();
        await expect(store.sessions.list({ limit: 10, text: "search", deadline: Date.now() - 1 })).rejects.toBeInstanceOf(ListDeadlineError);
        expect((await store.sessions.list({ limit: 10, text: "search", deadline: Date.now() + 5000 })).map((session) => session.id)).toEqual(["sess_dl"]);
      });

      test("branch copies turns 1..N with every carrier byte for byte, keeps their keys findable, and links the copies in order", async () => {
        const store = await storage();
        const turns = [
          newTurn("sess_src", "first answer"),
          newTurn("sess_src", "second answer", { toolCalls: [toolCall("call_00_BranchAbcdef123456")] }),
          newTurn("sess_src", "third answer"),
        ];
        for (const turn of turns) await store.turns.save(turn);
        await store.verdicts.record(rejection(["reasoning"], { provider: "prov", host: "upstream.example", model: "upstream-model", sessionId: "sess_src" }));
        const branch = (await store.sessions.branch("sess_src", "sess_branch", 2))!;
        expect(branch).toEqual({ id: "sess_branch", turns: 2, checkpoint: undefined });
        const copy = (await store.sessions.show("sess_branch"))!;
        expect(copy).toMatchObject({
          parentId: "sess_src",
          turns: 2,
          modelConfig: { rejected_carriers: [["prov", "upstream.example", "upstream-model", ["reasoning"]]] },
        });
        expect(copy.turnList.map((turn) => turn.content)).toEqual(["first answer", "second answer"]);
        for (const turn of copy.turnList) {
          expect(turn.id).not.toBe(turns[turn.position - 1]!.id);
          expect(turn.reasoningText).toBe(REASONING);
          expect(JSON.stringify(turn.reasoningDetails)).toBe(JSON.stringify(SIGNED_DETAILS));
          expect(JSON.stringify(turn.nativeRecord)).toBe(JSON.stringify(NATIVE));
        }
        expect(copy.turnList.map((turn) => turn.parentTurnId)).toEqual([null, copy.turnList[0]!.id]);
        // the copies are the newest matches of their keys
        expect(ids((await matchesFor(store, "key-a", [turns[0]!.fingerprint])).get(turns[0]!.fingerprint))).toEqual([copy.turnList[0]!.id, turns[0]!.id]);
        const callKey = callKeyOf(turns[1]!.toolCalls)!;
        expect(ids((await matchesFor(store, "key-a", [callKey])).get(callKey))).toEqual([copy.turnList[1]!.id, turns[1]!.id]);
        expect((await store.sessions.branch("sess_src", "sess_all", undefined))!.turns).toBe(3);
        expect(await store.sessions.branch("sess_missing", "sess_nothing", undefined)).toBeUndefined();
        expect(await store.sessions.show("sess_nothing")).toBeUndefined();
      });

      test("remove takes the session, its turns and their matches; a second remove says there was none", async () => {
        const store = await storage();
        const turn = newTurn("sess_doomed", "Doomed answer.");
        await store.turns.save(turn);
        expect((await matchesFor(store, "key-a", [turn.fingerprint])).size).toBe(1);
        expect(await store.sessions.remove("sess_doomed")).toBe(true);
        expect(await store.sessions.remove("sess_doomed")).toBe(false);
        expect(await store.sessions.show("sess_doomed")).toBeUndefined();
        expect((await matchesFor(store, "key-a", [turn.fingerprint])).size).toBe(0);
        expect((await store.turns.replaySources(new Map([[0, turn.id]]))).size).toBe(0);
      });

      test("a session removed right after its turn completed stays removed", async () => {
        const store = await storage();
        await store.turns.save(newTurn("sess_scratch", "summary text"));
        expect(await store.sessions.remove("sess_scratch")).toBe(true);
        await store.committed();
        expect(await store.sessions.show("sess_scratch")).toBeUndefined();
      });
    });

    describe("session config", () => {
      test("a rejection's fields join its session's config; clear drops what it selects from the table and from every session", async () => {
        const store = await storage();
        expect(await modelConfigOf(store, "sess_none")).toEqual({});
        await store.turns.save(newTurn("sess_cfg", "x"));
        await store.turns.save(newTurn("sess_cfg2", "y"));
        await store.verdicts.record(rejection(["reasoning_content", "reasoning"], { provider: "prov", sessionId: "sess_cfg" }));
        await store.verdicts.record(rejection(["reasoning"], { provider: "other", sessionId: "sess_cfg" }));
        await store.verdicts.record(rejection(["reasoning"], { provider: "prov", sessionId: "sess_cfg" })); // again: kept once
        await store.verdicts.record(rejection(["reasoning"], { provider: "prov", sessionId: "sess_cfg2" }));
        expect(await modelConfigOf(store, "sess_cfg")).toEqual({
          rejected_carriers: [
            ["other", "h", "m", ["reasoning"]],
            ["prov", "h", "m", ["reasoning", "reasoning_content"]],
          ],
        });
        const cleared = await store.verdicts.clear((verdict) => verdict.provider === "prov" && verdict.field === "reasoning");
        expect(cleared.verdicts.map((verdict) => [verdict.provider, verdict.field])).toEqual([["prov", "reasoning"]]);
        expect(cleared.sessions).toBe(2);
        expect(await modelConfigOf(store, "sess_cfg")).toEqual({
          rejected_carriers: [
            ["other", "h", "m", ["reasoning"]],
            ["prov", "h", "m", ["reasoning_content"]],
          ],
        });
        expect(await modelConfigOf(store, "sess_cfg2")).toEqual({ rejected_carriers: [] });
        expect(await store.verdicts.clear(() => false)).toEqual({ verdicts: [], sessions: 0 });
      });
    });

    describe("verdicts", () => {
      test("record (again: renewed), the fields per key, list oldest first, clear what the predicate selects", async () => {
        const store = await storage();
        expect(await fieldsFor(store, "p", "h", "m")).toEqual([]);
        const [first] = await store.verdicts.record(rejection(["reasoning_content"]));
        expect(first).toMatchObject({ provider: "p", host: "h", model: "m", field: "reasoning_content", status: 400, message: "unknown field" });
        expect(first!.recorded_at).toMatch(/^\d{4}-\d\d-\d\dT/);
        await store.verdicts.record(rejection(["reasoning"], { status: 422, message: "no" }));
        await store.verdicts.record(rejection(["reasoning"], { host: "other-host", message: "no" }));
        await store.verdicts.record(rejection(["reasoning_content"], { status: 422, message: "renewed" }));
        expect([...(await fieldsFor(store, "p", "h", "m"))].sort()).toEqual(["reasoning", "reasoning_content"]);
        expect(await fieldsFor(store, "p", "other-host", "m")).toEqual(["reasoning"]);
        const listed = await store.verdicts.list();
        expect(listed).toHaveLength(3);
        expect(listed.find((verdict) => verdict.field === "reasoning_content")).toMatchObject({ status: 422, message: "renewed" });
        const { verdicts: cleared } = await store.verdicts.clear((verdict) => verdict.host === "h");
        expect(cleared.map((verdict) => verdict.field).sort()).toEqual(["reasoning", "reasoning_content"]);
        expect(await fieldsFor(store, "p", "h", "m")).toEqual([]);
        expect((await store.verdicts.list()).map((verdict) => verdict.host)).toEqual(["other-host"]);
      });
    });

    describe("responses", () => {
      test("a chain: get, input items, history oldest first, items by id", async () => {
        const store = await storage();
        await store.responses.save(record("resp_1", null, "a"), [{ id: "msg_1", type: "message", content: [{ type: "output_text", text: "re: a" }] }]);
        await store.responses.save(record("resp_2", "resp_1", "b"), []);
        expect(await store.responses.get("resp_2")).toEqual({
          id: "resp_2",
          sessionId: "sess_resp",
          keyHash: "key-a",
          body: { id: "resp_2", object: "response", output_text: "re: b" },
        });
        expect(await store.responses.get("resp_none")).toBeUndefined();
        expect((await store.responses.get("resp_1", "inputItems"))?.inputItems).toEqual([{ type: "message", role: "user", content: "a" }]);
        expect((await store.responses.get("resp_2", "history"))?.history?.map((message) => message.content)).toEqual(["a", "re: a", "b", "re: b"]);
        expect(await store.responses.get("resp_none", "history")).toBeUndefined();
        expect(await store.responses.item("msg_1")).toEqual({
          item: { id: "msg_1", type: "message", content: [{ type: "output_text", text: "re: a" }] },
          sessionId: "sess_resp",
          keyHash: "key-a",
        });
        expect(await store.responses.item("msg_none")).toBeUndefined();
      });

      test("delete makes a response unretrievable but keeps the link a later response continues from", async () => {
        const store = await storage();
        await store.responses.save(record("resp_1", null, "a"), []);
        await store.responses.save(record("resp_2", "resp_1", "b"), []);
        expect(await store.responses.delete("resp_1")).toBe(true);
        expect(await store.responses.delete("resp_1")).toBe(false);
        expect(await store.responses.get("resp_1")).toBeUndefined();
        expect(await store.responses.get("resp_1", "inputItems")).toBeUndefined();
        expect(await store.responses.get("resp_1", "history")).toBeUndefined();
        expect((await store.responses.get("resp_2", "history"))?.history?.map((message) => message.content)).toEqual(["a", "re: a", "b", "re: b"]);
      });

      test("a named conversation's end moves with each response; one stored with store: false is a link only", async () => {
        const store = await storage();
        await store.responses.save(record("resp_1", null, "a", { conversationId: "conv_x" }), []);
        expect(await store.responses.conversation("conv_x")).toEqual({ id: "conv_x", sessionId: "sess_resp", keyHash: "key-a", lastResponseId: "resp_1" });
        await store.responses.save(record("resp_2", "resp_1", "b", { conversationId: "conv_x", body: null }), [{ id: "msg_hidden" }]);
        expect(await store.responses.conversation("conv_x")).toMatchObject({ lastResponseId: "resp_2" });
        expect(await store.responses.get("resp_2")).toBeUndefined();
        expect(await store.responses.item("msg_hidden")).toBeUndefined();
        // the conversation's end is not retrievable, and its history is read with the conversation
        expect((await store.responses.conversation("conv_x", "history"))?.history?.map((message) => message.content)).toEqual(["a", "re: a", "b", "re: b"]);
        expect(await store.responses.conversation("conv_x", "history")).toMatchObject({ id: "conv_x", sessionId: "sess_resp", lastResponseId: "resp_2" });
        expect(await store.responses.conversation("conv_none")).toBeUndefined();
        expect(await store.responses.conversation("conv_none", "history")).toBeUndefined();
      });
    });

    describe("keys", () => {
      const newKey = (name: string, extra: Partial<NewKey> = {}): NewKey => ({
        name,
        secretHash: `hash-of-${name}`,
        dataScope: `scope-of-${name}`,
        scopes: ["chat"],
        models: ["gpt-*"],
        eventsOf: [],
        createdAt: 1_000,
        expiresAt: null,
        ...extra,
      });

      test("create, list (oldest first, everything kept but a secret), a second key of one name refused", async () => {
        const store = await storage();
        const before = await store.keys.revision();
        const created = await store.keys.create(newKey("frontend", { scopes: ["chat", "events"], eventsOf: ["wall"], expiresAt: 9_000 }));
        await store.keys.create(newKey("wall", { createdAt: 2_000, scopes: ["events"], models: [] }));
        expect(created).toEqual({
          ...newKey("frontend", { scopes: ["chat", "events"], eventsOf: ["wall"], expiresAt: 9_000 }),
          revokedAt: null,
          rotatedAt: null,
          lastUsedAt: null,
          requests: 0,
        });
        expect(await store.keys.revision()).not.toBe(before);
        const listed = await store.keys.list();
        expect(listed.map((key) => key.name)).toEqual(["frontend", "wall"]);
        expect(listed[0]).toEqual(created);
        await expect(store.keys.create(newKey("frontend", { secretHash: "another" }))).rejects.toBeInstanceOf(KeyExistsError);
      });

      test("list by secret hashes: only the keys of those hashes; hashes of no key, or none asked, answer nothing", async () => {
        const store = await storage();
        await store.keys.create(newKey("frontend"));
        await store.keys.create(newKey("wall", { createdAt: 2_000 }));
        expect((await store.keys.list(["hash-of-wall", "hash-of-nobody"])).map((key) => key.name)).toEqual(["wall"]);
        expect(await store.keys.list(["hash-of-frontend"])).toEqual([(await store.keys.list())[0]]);
        expect(await store.keys.list([])).toEqual([]);
      });

      test("revoke and rotate move the revision; a revoked key keeps its name and cannot be rotated", async () => {
        const store = await storage();
        await store.keys.create(newKey("cli"));
        const created = await store.keys.revision();
        expect(await store.keys.update("cli", { secretHash: "new-hash" })).toBe(true);
        const rotated = await store.keys.revision();
        expect(rotated).not.toBe(created);
        expect((await store.keys.list())[0]).toMatchObject({ secretHash: "new-hash", dataScope: "scope-of-cli" });
        expect((await store.keys.list())[0]!.rotatedAt).toEqual(expect.any(Number));
        expect(await store.keys.update("cli", "revoke")).toBe(true);
        expect(await store.keys.revision()).not.toBe(rotated);
        const revoked = await store.keys.revision();
        expect(await store.keys.update("cli", "revoke")).toBe(false);
        expect(await store.keys.update("cli", { secretHash: "again" })).toBe(false);
        expect(await store.keys.update("nobody", "revoke")).toBe(false);
        expect(await store.keys.revision()).toBe(revoked);
        expect((await store.keys.list())[0]!.revokedAt).toEqual(expect.any(Number));
        await expect(store.keys.create(newKey("cli", { secretHash: "fresh" }))).rejects.toBeInstanceOf(KeyExistsError);
      });

      test("usage adds up and moves last-used forward only, without moving the revision", async () => {
        const store = await storage();
        await store.keys.create(newKey("a"));
        await store.keys.create(newKey("b"));
        const revision = await store.keys.revision();
        await store.keys.recordUse([{ name: "a", requests: 3, lastUsedAt: 5_000 }]);
        await store.keys.recordUse([
          { name: "a", requests: 2, lastUsedAt: 4_000 },
          { name: "b", requests: 1, lastUsedAt: 6_000 },
          { name: "gone", requests: 1, lastUsedAt: 1 },
        ]);
        await store.keys.recordUse([]);
        const [a, b] = await store.keys.list();
        expect(a).toMatchObject({ requests: 5, lastUsedAt: 5_000 });
        expect(b).toMatchObject({ requests: 1, lastUsedAt: 6_000 });
        expect(await store.keys.revision()).toBe(revision);
      });

      test("a key created or revoked by another process is seen by the gateway's storage", async () => {
        const state = await fresh();
        const gateway = await open(state, "gateway");
        const cli = await open(state, "cli");
        const seen = await gateway.keys.revision();
        await cli.keys.create(newKey("remote"));
        expect(await gateway.keys.revision()).not.toBe(seen);
        expect((await gateway.keys.list()).map((key) => key.name)).toEqual(["remote"]);
        await cli.keys.update("remote", "revoke");
        expect((await gateway.keys.list())[0]!.revokedAt).not.toBeNull();
      });
    });

    describe("checkpoints", () => {
      const owner = { keyHash: "key-a", model: "client-model" };
      test("save archives the summarised turns and supersedes the previous checkpoint; the one in force is anchored deepest on the chain", async () => {
        const store = await storage();
        const turns = [newTurn("sess_ck", "one"), newTurn("sess_ck", "two"), newTurn("sess_ck", "three")];
        for (const turn of turns) await store.turns.save(turn);
        await store.responses.save(record("resp_1", null, "a"), []);
        await store.responses.save(record("resp_2", "resp_1", "b"), []);
        await store.responses.save(record("resp_3", "resp_2", "c"), []);
        await store.responses.save(record("resp_9", null, "z"), []);
        expect(await store.checkpoints.inForce("sess_ck", "resp_3")).toBeUndefined();
        const base = {
          sessionId: "sess_ck",
          headCount: 1,
          cutIndex: 2,
          summary: "they said one",
          summarizer: "demo",
          summarizedMessages: 2,
          tokensBefore: 100,
          tokensAfter: 40,
        };
        const first = await store.checkpoints.save(
          { ...base, id: "ckpt_1", anchorResponseId: "resp_1" },
          { turnIds: [turns[0]!.id], supersedes: undefined, owner },
        );
        expect(first).toMatchObject({ id: "ckpt_1", archivedTurns: 1, archivedThrough: 1 });
        expect((await store.checkpoints.inForce("sess_ck", "resp_3"))?.id).toBe("ckpt_1");
        expect((await store.sessions.show("sess_ck"))!.compaction.archived).toEqual(new Set([1]));
        const second = await store.checkpoints.save(
          { ...base, id: "ckpt_2", anchorResponseId: "resp_2", summary: "they said one and two" },
          { turnIds: [turns[1]!.id], supersedes: first, owner },
        );
        expect(second).toMatchObject({ archivedTurns: 2, archivedThrough: 2 });
        expect((await store.sessions.show("sess_ck"))!.compaction.checkpoints.map((checkpoint) => checkpoint.id)).toEqual(["ckpt_2"]);
        expect((await store.checkpoints.inForce("sess_ck", "resp_3"))?.id).toBe("ckpt_2");
        expect((await store.checkpoints.inForce("sess_ck", "resp_1"))?.id).toBeUndefined(); // resp_2's checkpoint is not on resp_1's chain
        expect(await store.checkpoints.inForce("sess_ck", "resp_9")).toBeUndefined();
        expect(await store.checkpoints.inForce("sess_ck", "resp_none")).toBeUndefined();
        // archived turns keep every carrier byte
        const archived = (await store.sessions.show("sess_ck"))!.turnList[0]!;
        expect(JSON.stringify(archived.reasoningDetails)).toBe(JSON.stringify(SIGNED_DETAILS));
      });

      test("a checkpoint for a session removed meanwhile (its response chain lives on) makes the session's row again", async () => {
        const store = await storage();
        const checkpoint = {
          sessionId: "sess_gone",
          anchorResponseId: null,
          headCount: 1,
          cutIndex: 2,
          summary: "s",
          summarizer: "demo",
          summarizedMessages: 2,
          tokensBefore: 10,
          tokensAfter: 5,
        };
        await store.checkpoints.save({ ...checkpoint, id: "ckpt_gone" }, { turnIds: [], supersedes: undefined, owner });
        const shown = (await store.sessions.show("sess_gone"))!;
        expect(shown).toMatchObject({ id: "sess_gone", model: "client-model", turns: 0 });
        expect(shown.compaction.checkpoints.map((saved) => saved.id)).toEqual(["ckpt_gone"]);
      });

      test("a branch past the newest checkpoint gets the active turns and a copy of the checkpoint; one inside it gets every turn", async () => {
        const store = await storage();
        const turns = [newTurn("sess_cb", "one"), newTurn("sess_cb", "two"), newTurn("sess_cb", "three")];
        for (const turn of turns) await store.turns.save(turn);
        const base = {
          sessionId: "sess_cb",
          anchorResponseId: "resp_1",
          headCount: 1,
          cutIndex: 2,
          summary: "s",
          summarizer: "demo",
          summarizedMessages: 2,
          tokensBefore: 10,
          tokensAfter: 5,
        };
        await store.checkpoints.save({ ...base, id: "ckpt_cb" }, { turnIds: [turns[0]!.id], supersedes: undefined, owner });
        const past = (await store.sessions.branch("sess_cb", "sess_cb_past", undefined))!;
        expect(past.turns).toBe(2);
        expect(past.checkpoint).toMatch(/^ckpt_/);
        const [copy] = (await store.sessions.show("sess_cb_past"))!.compaction.checkpoints;
        expect(copy).toMatchObject({ id: past.checkpoint, sessionId: "sess_cb_past", anchorResponseId: null, summary: "s", archivedThrough: 1 });
        const shown = (await store.sessions.show("sess_cb_past"))!;
        expect(shown.turnList.map((turn) => [turn.position, turn.content])).toEqual([
          [2, "two"],
          [3, "three"],
        ]);
        expect(shown.turnList.map((turn) => turn.parentTurnId)).toEqual([null, shown.turnList[0]!.id]);
        const inside = (await store.sessions.branch("sess_cb", "sess_cb_inside", 1))!;
        expect(inside).toEqual({ id: "sess_cb_inside", turns: 1, checkpoint: undefined });
        expect((await store.sessions.show("sess_cb_inside"))!.compaction.archived).toEqual(new Set());
      });
    });

    describe("durability", () => {
      test("what a write resolved is read by a storage opened on the same state beside it, once the writer says it is committed", async () => {
        const state = await fresh();
        const gateway = await open(state, "gateway");
        const turn = newTurn("sess_durable", "Written by the gateway.");
        await gateway.turns.save(turn); // completes alone: the fastest durable path
        await gateway.verdicts.record(rejection(["reasoning"]));
        await gateway.responses.save(
          {
            id: "resp_d",
            parentId: null,
            sessionId: "sess_durable",
            keyHash: "key-a",
            model: "m",
            createdAt: 1,
            conversationId: null,
            messages: [],
            body: { id: "resp_d" },
          },
          [],
        );
        await gateway.committed();
        const cli = await open(state, "cli");
        const shown = (await cli.sessions.show("sess_durable"))!;
        expect(JSON.stringify(shown.turnList[0]!.reasoningDetails)).toBe(JSON.stringify(SIGNED_DETAILS));
        expect(ids((await matchesFor(cli, "key-a", [turn.fingerprint])).get(turn.fingerprint))).toEqual([turn.id]);
        expect(await fieldsFor(cli, "p", "h", "m")).toEqual(["reasoning"]);
        expect(await cli.responses.get("resp_d")).toMatchObject({ sessionId: "sess_durable" });
      });

      test("what a write resolved survives the writer closing at once and is found by the next one", async () => {
        const state = await fresh();
        const first = await state.open("gateway");
        const turn = newTurn("sess_restart", "Before the restart.");
        await first.turns.save(turn);
        await first.close();
        const next = await open(state, "gateway");
        expect((await next.sessions.show("sess_restart"))!.turnList.map((stored) => stored.id)).toEqual([turn.id]);
        expect(ids((await matchesFor(next, "key-a", [turn.fingerprint])).get(turn.fingerprint))).toEqual([turn.id]);
      });

      test("another storage's writes are seen by the next read: a removed session is never replayed, a cleared verdict is gone", async () => {
        const state = await fresh();
        const gateway = await open(state, "gateway");
        const cli = await open(state, "cli");
        const turn = newTurn("sess_shared", "Shared answer.");
        await gateway.turns.save(turn);
        await gateway.verdicts.record(rejection(["reasoning"]));
        expect((await gateway.turns.replaySources(new Map([[0, turn.id]]))).size).toBe(1); // held in memory, if the backend does
        expect(await fieldsFor(gateway, "p", "h", "m")).toEqual(["reasoning"]);
        await gateway.committed();
        expect(await cli.sessions.remove("sess_shared")).toBe(true);
        await cli.verdicts.clear(() => true);
        await new Promise((resolve) => setImmediate(resolve)); // the gateway's next request
        expect((await matchesFor(gateway, "key-a", [turn.fingerprint])).size).toBe(0);
        expect((await gateway.turns.replaySources(new Map([[0, turn.id]]))).size).toBe(0);
        expect(await fieldsFor(gateway, "p", "h", "m")).toEqual([]);
      });
    });
  });
}
