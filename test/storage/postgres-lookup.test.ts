import "reflect-metadata";
import { afterAll, beforeAll, describe, expect, test } from "vitest";
import pg from "pg";
import { LOOKUP } from "../../src/storage-postgres/pg-request-lookup.js";
import { openPostgresStorage, type PostgresStorage } from "../../src/storage-postgres/postgres-storage.js";
import type { NewTurn } from "../../src/storage/turns.js";
import { announceSkipped, freshSchema, pgSkipReason } from "../support/postgres.js";
import { newTurn } from "./contract.js";

announceSkipped("test/storage/postgres-lookup.test.ts", 3);

const SESSIONS = 20_000;

function turn(sessionId: string, position: number): NewTurn {
  return newTurn(sessionId, `answer ${position} of ${sessionId}`, { id: `turn_${sessionId}_${position}`, reasoningText: "thinking" });
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
    const literal = (value: unknown) =>
      value === null
        ? "NULL"
        : Array.isArray(value)
          ? `ARRAY[${value.map((item) => client.escapeLiteral(String(item))).join(",")}]::text[]`
          : typeof value === "boolean"
            ? String(value)
            : client.escapeLiteral(String(value));
    await client.query(`PREPARE lookup (text, text[], text[], text, text, text, text, boolean) AS ${LOOKUP}`);
    for (const explicit of [null, "sess_other_14"]) {
      const call = `EXECUTE lookup(${["key-a", fingerprints, [], explicit, "prov", "upstream.example", "upstream-model", true].map(literal).join(", ")})`;
      // past the first five runs PostgreSQL may switch to its generic plan: look at that one too
      for (let run = 0; run < 6; run++) await client.query(call);
      const plan = (await client.query(`EXPLAIN ${call}`)).rows.map((row: Record<string, string>) => row["QUERY PLAN"]).join("\n");
      expect(plan).not.toMatch(/Seq Scan on (sessions|turns)/);
      const kinds = (await client.query(call)).rows.map((row: { kind: string }) => row.kind).join("");
      // three matches, their three carriers, and the explicit session's config when it has one
      expect(kinds).toBe(explicit ? "cmmmrrr" : "mmmrrr");
    }
    // the same answer through the storage port
    const answer = await storage.lookup({
      keyHash: "key-a",
      keys: fingerprints,
      provider: "prov",
      host: "upstream.example",
      model: "upstream-model",
      explicit: "sess_other_14",
      withCarriers: true,
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
      const first = (await storage.lookup(query)).sources.get(id);
      expect(first?.reasoningText).toBe("thinking");
      expect((await storage.lookup(query)).sources.get(id)).toBe(first);
      expect((await storage.turns.replaySources(new Map([[0, id]]))).get(0)).toBe(first);
      expect(await other.catalogue.remove("sess_asked")).toBe(true);
      const after = await storage.lookup(query);
      expect([after.matches.size, after.sources.size]).toEqual([0, 0]);
    } finally {
      await other.close();
    }
  });

  test("every connection of the pool plans each statement for the table sizes of the moment, never keeping a plan made for an empty store", async () => {
    const settings = await Promise.all([0, 1, 2].map(() => storage.sql.query("SHOW plan_cache_mode")));
    expect(settings.map((result) => result.rows[0])).toEqual([0, 1, 2].map(() => ({ plan_cache_mode: "force_custom_plan" })));
  });
});
