import { copyFileSync, mkdtempSync, rmSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import Database from "better-sqlite3";
import pg from "pg";
import { afterAll, beforeAll, describe, expect, test } from "vitest";
import type { Json, JsonObject } from "../../src/providers/contract.js";
import { callKeyOf, fingerprintOf } from "../../src/conversation/fingerprint.js";
import { openPostgresStorage } from "../../src/storage/postgres/postgres-storage.js";
import { openSqliteStorage } from "../../src/storage/sqlite/open-sqlite-storage.js";
import type { NewTurn } from "../../src/storage/turns.js";
import { carrierd, cleanEnv } from "../foundation/cli-process.js";
import { announceSkipped, freshSchema, pgSkipReason } from "../support/postgres.js";

/**
 * `carrierd store migrate --from state.db --to postgres://…`, the real CLI:
 * every row of every table arrives, every carrier byte for byte (compared
 * as the raw text both databases hold), and the PostgreSQL store then
 * serves replay, sessions, responses and checkpoints as state.db did.
 */
const DETAILS: Json[] = [
  { type: "reasoning.text", text: 'Step — ünïcödé ✓ \u2028 "q" \\ ', signature: "EqQBCkYIARgCKkCzB+/=sig", format: "anthropic-claude-v1", index: 0 },
  { type: "reasoning.encrypted", data: "gAAAAABo+/Zm9vYmFy==\n", id: "rs_01", format: "openai-responses-v1", index: 1 },
  { z: 1.5e-7, a: [null, true, { nested: "x" }] },
];
const NATIVE: JsonObject = { type: "native-test.assistant", opaque: "opaque-1-Zm9v/+==", zeta: 0.1, alpha: "𝔘𝔫𝔦" };

function turn(sessionId: string, index: number, toolCalls: NewTurn["toolCalls"] = []): NewTurn {
  const content = `Answer ${index} of ${sessionId}.`;
  return {
    id: `turn_migrate_${sessionId}_${index}`,
    sessionId,
    keyHash: "key-m",
    parentTurnId: index > 1 ? `turn_migrate_${sessionId}_${index - 1}` : undefined,
    model: "client-model",
    plugin: "openai-compatible",
    provider: "prov",
    host: "upstream.example",
    upstreamModel: "upstream-model",
    prompt: [{ role: "user", content: `q ${index}` }],
    content,
    toolCalls,
    reasoningText: `Thinking ${index}.\n\n  indented — trailing \n`,
    reasoningDetails: DETAILS,
    nativeRecord: NATIVE,
    usage: { prompt_tokens: 1, completion_tokens: 2, total_tokens: 3 },
    finishReason: toolCalls.length > 0 ? "tool_calls" : "stop",
    upstreamId: `up_${index}`,
    fingerprint: fingerprintOf(content, toolCalls),
  };
}

announceSkipped("test/scale/store-migrate.test.ts", 3);
describe.skipIf(pgSkipReason() !== undefined)("carrierd store migrate", () => {
  let home: string;
  let schema: Awaited<ReturnType<typeof freshSchema>>;
  beforeAll(async () => {
    home = mkdtempSync(join(tmpdir(), "carrierd-migrate-"));
    schema = await freshSchema();
    const sqlite = openSqliteStorage({ home });
    for (let index = 1; index <= 3; index++) await sqlite.turns.save(turn("sess_a", index));
    await sqlite.turns.save(
      turn("sess_b", 1, [{ id: "call_9f3Kq2LmX7vB1nRt", type: "function", function: { name: "weather", arguments: '{"city":"Paris"}' } }]),
    );
    const rejection = {
      provider: "prov",
      host: "upstream.example",
      model: "upstream-model",
      fields: ["reasoning"],
      status: 400,
      message: "no",
      keyHash: "key-m",
      clientModel: "m",
    };
    await sqlite.verdicts.record({ ...rejection, sessionId: "sess_empty" }); // a session without turns
    await sqlite.verdicts.record({ ...rejection, sessionId: "sess_a" });
    await sqlite.responses.save(
      {
        id: "resp_1",
        parentId: null,
        sessionId: "sess_a",
        keyHash: "k",
        model: "m",
        createdAt: 1,
        conversationId: "conv_1",
        messages: [{ role: "user", content: "a" }],
        body: { id: "resp_1", z: 1e-7 },
        inputItems: [{ type: "message" }],
      },
      [{ id: "item_1", type: "message" }],
    );
    await sqlite.responses.save(
      {
        id: "resp_2",
        parentId: "resp_1",
        sessionId: "sess_a",
        keyHash: "k",
        model: "m",
        createdAt: 2,
        conversationId: "conv_1",
        messages: [{ role: "user", content: "b" }],
        body: null,
      },
      [],
    );
    await sqlite.checkpoints.save(
      {
        id: "ckpt_1",
        sessionId: "sess_a",
        anchorResponseId: "resp_1",
        headCount: 1,
        cutIndex: 2,
        summary: "Summary — ✓",
        summarizer: "m",
        summarizedMessages: 2,
        tokensBefore: 10,
        tokensAfter: 5,
      },
      { turnIds: ["turn_migrate_sess_a_1"], supersedes: undefined, owner: { keyHash: "key-m", model: "m" } },
    );
    await sqlite.keys.create({
      name: "frontend",
      secretHash: "f".repeat(64),
      dataScope: "k",
      scopes: ["chat", "events"],
      models: ["gpt-*"],
      eventsOf: [],
      createdAt: 1_700_000_000_000,
      expiresAt: null,
    });
    await sqlite.keys.recordUse([{ name: "frontend", requests: 7, lastUsedAt: 1_700_000_001_000 }]);
    await sqlite.envelopeKeys.ensure({ generation: 1, id: "0011223344556677", secret: Buffer.alloc(32, 9), createdAt: 1_700_000_000_000 });
    await sqlite.envelopeKeys.ensure({ generation: 2, id: "8899aabbccddeeff", secret: Buffer.alloc(32, 10), createdAt: 1_700_000_002_000 });
    await sqlite.close();
  });
  afterAll(async () => {
    rmSync(home, { recursive: true, force: true });
    await schema?.drop();
  });

  test("every row arrives with every column as state.db holds it; the store then serves it", async () => {
    const migrated = await carrierd(["store", "migrate", "--from", join(home, "state.db"), "--to", schema.url], { env: cleanEnv() });
    expect(migrated.code, migrated.stderr).toBe(0);
    expect(migrated.stdout).toMatch(/turns\s+4\n/);

    const source = new Database(join(home, "state.db"), { readonly: true });
    const client = new pg.Client({ connectionString: schema.url });
    await client.connect();
    try {
      for (const [table, key] of [
        ["sessions", "id"],
        ["turns", "id"],
        ["verdicts", "field"],
        ["responses", "id"],
        ["response_items", "id"],
        ["response_conversations", "id"],
        ["compaction_checkpoints", "id"],
        ["access_keys", "name"],
        ["envelope_keys", "key_id"],
      ] as const) {
        const expected = source.prepare(`SELECT * FROM ${table} ORDER BY ${key}`).all() as Record<string, unknown>[];
        const actual = (await client.query(`SELECT * FROM ${table} ORDER BY ${key} COLLATE "C"`)).rows as Record<string, unknown>[];
        expect(actual.length, table).toBe(expected.length);
        expected.forEach((row, index) => {
          for (const [column, value] of Object.entries(row)) {
            // bigint columns come back as strings; every text column must be the same string, byte for byte
            const got = actual[index]![column];
            expect(typeof value === "number" && typeof got === "string" ? Number(got) : got, `${table}.${column}`).toStrictEqual(value);
          }
        });
      }
    } finally {
      source.close();
      await client.end();
    }

    const store = await openPostgresStorage({ url: schema.url, poolSize: 1 });
    try {
      const last = turn("sess_a", 3);
      const matchesFor = async (keys: string[]) =>
        (await store.turns.lookup({ keyHash: "key-m", keys, provider: "none", host: "none", model: "none", explicit: undefined, withCarriers: false })).matches;
      expect((await matchesFor([last.fingerprint])).get(last.fingerprint)?.[0]?.id).toBe(last.id);
      const callKey = callKeyOf(
        turn("sess_b", 1, [{ id: "call_9f3Kq2LmX7vB1nRt", type: "function", function: { name: "weather", arguments: "{}" } }]).toolCalls,
      )!;
      expect((await matchesFor([callKey])).get(callKey)?.[0]?.id).toBe("turn_migrate_sess_b_1");
      const source = (await store.turns.replaySources(new Map([[0, last.id]]))).get(0)!;
      expect(JSON.stringify(source.reasoningDetails)).toBe(JSON.stringify(DETAILS));
      expect(JSON.stringify(source.nativeRecord)).toBe(JSON.stringify(NATIVE));
      expect((await store.sessions.show("sess_a"))!.modelConfig).toEqual({
        rejected_carriers: [["prov", "upstream.example", "upstream-model", ["reasoning"]]],
      });
      // resp_2 (not retrievable) ends conv_1: its history is read with the conversation
      expect((await store.responses.conversation("conv_1", "history"))?.history).toEqual([
        { role: "user", content: "a" },
        { role: "user", content: "b" },
      ]);
      expect(await store.responses.conversation("conv_1")).toMatchObject({ lastResponseId: "resp_2" });
      expect((await store.checkpoints.inForce("sess_a", "resp_2"))?.id).toBe("ckpt_1");
      expect((await store.sessions.show("sess_a"))!.compaction.archived).toEqual(new Set([1]));
      expect(await store.responses.get("resp_1")).toMatchObject({ keyHash: "k" });
      expect(await store.keys.list()).toEqual([
        expect.objectContaining({ name: "frontend", dataScope: "k", scopes: ["chat", "events"], requests: 7, lastUsedAt: 1_700_000_001_000 }),
      ]);
      // the next turn continues the session's positions and is the newest match
      const next = turn("sess_a", 4);
      await store.turns.save(next);
      expect((await store.sessions.show("sess_a"))!.turnList.map((stored) => stored.position)).toEqual([1, 2, 3, 4]);
    } finally {
      await store.close();
    }
  });

  test("a store that already holds state is refused, and nothing is written to it", async () => {
    const again = await carrierd(["store", "migrate", "--from", join(home, "state.db"), "--to", schema.url], { env: cleanEnv() });
    expect(again.code, JSON.stringify(again)).toBe(1);
    expect(again.stderr).toContain("the PostgreSQL store already holds state");
  });

  test("a state.db whose turns journal still holds turns is refused: they would be left behind", async () => {
    const journaled = mkdtempSync(join(tmpdir(), "carrierd-migrate-journal-"));
    const target = await freshSchema();
    try {
      copyFileSync(join(home, "state.db"), join(journaled, "state.db"));
      writeFileSync(join(journaled, "turns.journal"), "a turn the gateway had not committed\n");
      const refused = await carrierd(["store", "migrate", "--from", join(journaled, "state.db"), "--to", target.url], { env: cleanEnv() });
      expect(refused.code).toBe(1);
      expect(refused.stderr).toContain("holds turns not yet in");
    } finally {
      rmSync(journaled, { recursive: true, force: true });
      await target.drop();
    }
  });
});
