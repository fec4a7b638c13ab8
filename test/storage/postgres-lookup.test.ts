import "reflect-metadata";
import { afterAll, beforeAll, describe, expect, test } from "vitest";
import pg from "pg";
import { LOOKUP } from "../../src/storage/postgres/pg-request-lookup.js";
import { openPostgresStorage, type PostgresStorage } from "../../src/storage/postgres/postgres-storage.js";
import { statementName } from "../../src/storage/postgres/run.js";
import type { NewTurn } from "../../src/storage/turns.js";
import { announceSkipped, freshSchema, pgSkipReason } from "../support/postgres.js";
import { newTurn } from "./contract.js";

announceSkipped("test/storage/postgres-lookup.test.ts", 4);

const SESSIONS = 20_000;
const HISTORY = Array.from({ length: 20 }, (_, index) => index + 1);

function turn(sessionId: string, position: number): NewTurn {
  return newTurn(sessionId, `answer ${position} of ${sessionId}`, { id: `turn_${sessionId}_${position}`, reasoningText: "thinking" });
}

/** `EXECUTE statement(…)` with the values written as literals (EXPLAIN EXECUTE takes no parameters). */
function execute(statement: string, values: readonly unknown[]): string {
  const literal = (value: unknown): string =>
    value === null
      ? "NULL"
      : Array.isArray(value)
        ? `ARRAY[${value.map(literal).join(",")}]::text[]`
        : typeof value === "boolean"
          ? String(value)
          : `'${String(value).replaceAll("'", "''")}'`;
  return `EXECUTE ${statement}(${values.map(literal).join(", ")})`;
}

// The request's one read runs on every chat request: its cost must not grow with the number of sessions stored.
describe.skipIf(pgSkipReason() !== undefined)("the PostgreSQL request lookup", () => {
  let schema: Awaited<ReturnType<typeof freshSchema>>;
  let storage: PostgresStorage;
  let client: pg.Client;
  beforeAll(async () => {
    schema = await freshSchema();
    storage = await openPostgresStorage({ url: schema.url, poolSize: 1 });
    for (let position = 1; position <= 3; position++) await storage.turns.save(turn("sess_asked", position));
    client = new pg.Client({ connectionString: schema.url });
    await client.connect();
    await client.query(
      `INSERT INTO sessions (id, key_hash, model, model_config, last_position, created_at, updated_at)
       SELECT 'sess_other_' || g, 'key-a', 'm', CASE WHEN g % 7 = 0 THEN '{"note":1}' ELSE '{}' END, 1, '2026-12-01', '2026-12-01'
         FROM generate_series(1, ${SESSIONS}) g`,
    );
    await client.query(
      `INSERT INTO turns (id, session_id, position, model, plugin, provider, host, upstream_model, content, created_at, key_hash, fingerprint)
       SELECT 'turn_other_' || g, 'sess_other_' || g, 1, 'm', 'openai-compatible', 'prov', 'upstream.example', 'upstream-model', 'hi', '2026-12-01',
              'key-a', 'fp_' || g
         FROM generate_series(1, ${SESSIONS}) g`,
    );
    await client.query("ANALYZE");
  });
  afterAll(async () => {
    await client?.end();
    await storage?.close();
    await schema?.drop();
  });

  test(`probes the sessions and turns it needs by index, never scanning either table (${SESSIONS} sessions and turns stored)`, async () => {
    const fingerprints = [1, 2, 3].map((position) => turn("sess_asked", position).fingerprint);
    await client.query(`PREPARE lookup (text, text[], text[], text, text, text, text, boolean, text[]) AS ${LOOKUP}`);
    for (const explicit of [null, "sess_other_14"]) {
      const call = execute("lookup", ["key-a", fingerprints, [], explicit, "prov", "upstream.example", "upstream-model", true, []]);
      // past the first five runs PostgreSQL may switch to its generic plan: look at that one too
      for (let run = 0; run < 6; run++) await client.query(call);
      const plan = (await client.query(`EXPLAIN ${call}`)).rows.map((row: Record<string, string>) => row["QUERY PLAN"]).join("\n");
      expect(plan).not.toMatch(/Seq Scan on (sessions|turns)/);
      const kinds = (await client.query(call)).rows
        .map((row: { kind: string }) => row.kind)
        .sort()
        .join("");
      // three matches, their three carriers, and the explicit session's config when it has one
      expect(kinds).toBe(explicit ? "cmmmrrr" : "mmmrrr");
    }
    // the same answer through the storage port
    const answer = await storage.turns.lookup({
      request: {
        keyHash: "key-a",
        keys: fingerprints,
        provider: "prov",
        host: "upstream.example",
        model: "upstream-model",
        explicit: "sess_other_14",
        withCarriers: true,
      },
    });
    expect([answer.matches.size, answer.sources.size]).toEqual([3, 3]);
    expect(answer.modelConfigs.get("sess_other_14")).toEqual({ note: 1 });
  });

  test("a turn read again is the same object (replay reuses what it built for it); a turn removed by another instance is not answered from memory", async () => {
    const other = await openPostgresStorage({ url: schema.url, poolSize: 1 });
    try {
      const query = {
        keyHash: "key-a",
        keys: [turn("sess_asked", 1).fingerprint],
        provider: "prov",
        host: "upstream.example",
        model: "upstream-model",
        explicit: undefined,
        withCarriers: true,
      };
      const id = turn("sess_asked", 1).id;
      const first = (await storage.turns.lookup({ request: query })).sources.get(id);
      expect(first?.reasoningText).toBe("thinking");
      expect((await storage.turns.lookup({ request: query })).sources.get(id)).toBe(first);
      expect((await storage.turns.lookup({ carriersOf: [id] })).sources.get(id)).toBe(first);
      expect(await other.sessions.remove("sess_asked")).toBe(true);
      const after = await storage.turns.lookup({ request: query });
      expect([after.matches.size, after.sources.size]).toEqual([0, 0]);
    } finally {
      await other.close();
    }
  });

  test("carriers this instance holds are not sent again; a newer turn on the same key, written by another instance, comes with its own", async () => {
    const other = await openPostgresStorage({ url: schema.url, poolSize: 1 });
    try {
      const held = newTurn("sess_held", "the same reply", { id: "turn_held", reasoningText: "held thinking" });
      await storage.turns.save(held);
      const query = {
        keyHash: held.keyHash,
        keys: [held.fingerprint],
        provider: "prov",
        host: "upstream.example",
        model: "upstream-model",
        explicit: undefined,
        withCarriers: true,
      };
      const first = (await storage.turns.lookup({ request: query })).sources.get("turn_held");
      expect(first?.reasoningText).toBe("held thinking");
      // the statement itself: told the turn is held, it answers the match without the carriers
      const values = [held.keyHash, [held.fingerprint], [], null, "prov", "upstream.example", "upstream-model", true];
      const kinds = async (heldIds: string[]) =>
        (await client.query({ text: LOOKUP, values: [...values, heldIds] })).rows
          .map((row: { kind: string }) => row.kind)
          .sort()
          .join("");
      expect([await kinds([]), await kinds(["turn_held"])]).toEqual(["mr", "m"]);
      expect((await storage.turns.lookup({ request: query })).sources.get("turn_held")).toBe(first);
      // the same reply stored later in another session, through another instance: the newest match, read with its carriers
      await other.turns.save(newTurn("sess_newer", "the same reply", { id: "turn_newer", keyHash: held.keyHash, reasoningText: "newer thinking" }));
      const answer = await storage.turns.lookup({ request: query });
      expect(answer.matches.get(held.fingerprint)?.map((match) => match.id)).toEqual(["turn_newer", "turn_held"]);
      expect([...answer.sources.keys()]).toEqual(["turn_newer"]);
      expect(answer.sources.get("turn_newer")?.reasoningText).toBe("newer thinking");
    } finally {
      await other.close();
    }
  });
});

// A prepared statement keeps the plan it was first given until the server invalidates it (an ANALYZE, which
// autovacuum runs at most once a minute). A store that starts empty and then takes turns fast must not be read by a
// plan made for empty tables.
describe.skipIf(pgSkipReason() !== undefined)("the PostgreSQL request lookup on a store that was empty when it was prepared", () => {
  let schema: Awaited<ReturnType<typeof freshSchema>>;
  let storage: PostgresStorage;
  afterAll(async () => {
    await storage?.close();
    await schema?.drop();
  });

  test("keeps reading by index once the tables have grown (no ANALYZE between)", async () => {
    schema = await freshSchema();
    // one connection, so every statement below runs where the lookup was prepared
    storage = await openPostgresStorage({ url: schema.url, poolSize: 1 });
    const query = {
      keyHash: "key-a",
      // a 20-turn history: more keys than the generic plan assumes, which is when PostgreSQL prefers that plan
      keys: HISTORY.map((position) => turn("sess_asked", position).fingerprint),
      provider: "prov",
      host: "upstream.example",
      model: "upstream-model",
      explicit: "sess_other_14",
      withCarriers: true,
    };
    // past the first five runs PostgreSQL may settle on its generic plan, made with the tables empty
    for (let run = 0; run < 8; run++) expect((await storage.turns.lookup({ request: query })).matches.size).toBe(0);
    for (const position of HISTORY) await storage.turns.save(turn("sess_asked", position));
    await storage.sql.query(
      `INSERT INTO sessions (id, key_hash, model, model_config, last_position, created_at, updated_at)
       SELECT 'sess_other_' || g, 'key-a', 'm', '{}', 1, '2026-12-01', '2026-12-01' FROM generate_series(1, ${SESSIONS}) g`,
    );
    await storage.sql.query(
      `INSERT INTO turns (id, session_id, position, model, plugin, provider, host, upstream_model, content, created_at, key_hash, fingerprint)
       SELECT 'turn_other_' || g, 'sess_other_' || g, 1, 'm', 'openai-compatible', 'prov', 'upstream.example', 'upstream-model', 'hi',
              '2026-12-01', 'key-a', 'fp_' || g
         FROM generate_series(1, ${SESSIONS}) g`,
    );
    const call = execute(statementName(LOOKUP), ["key-a", query.keys, [], "sess_other_14", "prov", "upstream.example", "upstream-model", true, []]);
    const plan = (await storage.sql.query(`EXPLAIN ${call}`)).rows.map((row: Record<string, string>) => row["QUERY PLAN"]).join("\n");
    expect(plan).toMatch(/Index Scan using turns_fingerprint/);
    expect(plan).not.toMatch(/Seq Scan on (sessions|turns)/);
    const answer = await storage.turns.lookup({ request: query });
    expect([answer.matches.size, answer.sources.size]).toEqual([HISTORY.length, HISTORY.length]);
  });
});
