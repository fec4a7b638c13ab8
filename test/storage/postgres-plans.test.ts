import "reflect-metadata";
import pg from "pg";
import { afterAll, beforeAll, describe, expect, test } from "vitest";
import { openPostgresStorage, type PostgresStorage } from "../../src/storage/postgres/postgres-storage.js";
import { announceSkipped, freshSchema, pgSkipReason } from "../support/postgres.js";
import { exerciseRequestPath, FILL, fillStatements, postgresRows } from "./request-path.js";

announceSkipped("test/storage/postgres-plans.test.ts", 2);

/** A statement as the storage sent it: its text and values. */
interface Ran {
  readonly text: string;
  readonly values: readonly unknown[];
}

/** The tables a request reads or writes that grow with use; `verdicts` (a handful of rows traffic does not add to) is not one. */
const GROWING = /Seq Scan on (turns|sessions|responses|response_items|response_conversations|compaction_checkpoints)\b/;

/** Every named statement (run.ts: each of carrierd's) sent on any connection while `body` runs. */
async function statementsRun(body: () => Promise<void>): Promise<Ran[]> {
  const ran: Ran[] = [];
  const query = pg.Client.prototype.query;
  pg.Client.prototype.query = function (this: pg.Client, config: unknown, ...rest: unknown[]) {
    const named = config as { name?: string; text?: string; values?: unknown[] } | undefined;
    if (named && typeof named === "object" && named.name?.startsWith("carrierd_") && named.text) ran.push({ text: named.text, values: named.values ?? [] });
    return (query as (...args: unknown[]) => unknown).call(this, config, ...rest);
  } as typeof query;
  try {
    await body();
  } finally {
    pg.Client.prototype.query = query;
  }
  const seen = new Map<string, Ran>();
  for (const statement of ran) if (!seen.has(statement.text)) seen.set(statement.text, statement);
  return [...seen.values()];
}

/** A value as an SQL literal, for EXPLAIN EXECUTE (which takes no parameters). */
function literal(client: pg.Client, value: unknown): string {
  if (value === null || value === undefined) return "NULL";
  if (Array.isArray(value))
    return client.escapeLiteral(
      `{${value.map((item) => (item === null ? "NULL" : `"${String(item).replaceAll("\\", "\\\\").replaceAll('"', '\\"')}"`)).join(",")}}`,
    );
  return client.escapeLiteral(String(value));
}

/** What is wrong with a plan: a growing table read whole, or a per-key or per-session index searched without its second column. */
function planProblems(plan: string): string[] {
  const problems: string[] = [];
  const lines = plan.split("\n");
  lines.forEach((line, index) => {
    if (GROWING.test(line)) problems.push(line.trim());
    const index_ = /(?:using|on) (turns_fingerprint|turns_call_key|turns_depth)\b/.exec(line);
    if (!index_) return;
    const condition = lines.slice(index + 1).find((next) => /Index Cond:|->/.test(next)) ?? "";
    const second = { turns_fingerprint: "fingerprint", turns_call_key: "call_key", turns_depth: "depth" }[index_[1]]!;
    if (!condition.includes("Index Cond:") || !condition.includes(`${second} =`)) problems.push(`${line.trim()} / ${condition.trim()}`);
  });
  return problems;
}

// The request path's statements must read by the index that bounds them by the session or the fingerprint, before the
// first ANALYZE (autovacuum off: no statistics at all) and after it, in the plan PostgreSQL makes for the values of one
// request and in the generic plan it may keep for a prepared statement.
describe.skipIf(pgSkipReason() !== undefined)(`PostgreSQL plans on a store of ${FILL.turns} turns, ${FILL.sessions} sessions, ${FILL.keys} keys`, () => {
  let schema: Awaited<ReturnType<typeof freshSchema>>;
  let client: pg.Client;
  let runs = 0;
  beforeAll(async () => {
    schema = await freshSchema();
    const store = await openPostgresStorage({ url: schema.url, poolSize: 1 });
    await store.close();
    client = new pg.Client({ connectionString: schema.url });
    await client.connect();
    for (const table of ["sessions", "turns", "responses", "response_items", "response_conversations", "compaction_checkpoints", "verdicts"])
      await client.query(`ALTER TABLE ${table} SET (autovacuum_enabled = false)`);
    const started = Date.now();
    for (const statement of fillStatements(postgresRows, { postgres: true })) await client.query(statement);
    await client.query(`SELECT setval(pg_get_serial_sequence('turns', 'seq'), ${FILL.turns})`);
    expect(Date.now() - started).toBeLessThan(60_000);
    expect(Number((await client.query("SELECT count(*) AS n FROM turns")).rows[0].n)).toBe(FILL.turns);
  }, 180_000);
  afterAll(async () => {
    await client?.end();
    await schema?.drop();
  });

  /** Runs the request path on a new store and checks each statement's custom and generic plans; the texts checked. */
  async function check(): Promise<string[]> {
    let store: PostgresStorage | undefined;
    const ran = await statementsRun(async () => {
      store = await openPostgresStorage({ url: schema.url, poolSize: 2 });
      await exerciseRequestPath(store, `pg${++runs}`);
    });
    await store!.close();
    // as the store's own connections plan: never a sequential scan where an index serves (connection.ts)
    await client.query("SET enable_seqscan = off");
    const problems: string[] = [];
    for (const [index, statement] of ran.entries()) {
      const name = `plan_${runs}_${index}`;
      await client.query(`PREPARE ${name} AS ${statement.text}`);
      const execute = `EXPLAIN EXECUTE ${name}(${statement.values.map((value) => literal(client, value)).join(", ")})`;
      for (const mode of ["force_custom_plan", "force_generic_plan"]) {
        await client.query(`SET plan_cache_mode = ${mode}`);
        const plan = (await client.query(execute)).rows.map((row: Record<string, string>) => row["QUERY PLAN"]).join("\n");
        for (const problem of planProblems(plan)) problems.push(`${mode}: ${problem}\n    in ${statement.text.replace(/\s+/g, " ").slice(0, 160)}`);
      }
      await client.query(`DEALLOCATE ${name}`);
    }
    await client.query("RESET plan_cache_mode");
    expect(problems).toEqual([]);
    return ran.map((statement) => statement.text);
  }

  test("before any ANALYZE, every request-path statement reads by its bounding index", async () => {
    expect((await client.query("SELECT count(*) AS n FROM pg_stats WHERE tablename = 'turns' AND schemaname = current_schema()")).rows[0].n).toBe("0");
    const texts = (await check()).join("\n");
    for (const part of ["f.depth = k.depth", "f.fingerprint = k.key", "INSERT INTO turns", "WITH RECURSIVE", "FROM compaction_checkpoints"])
      expect(texts).toContain(part);
    // the check catches what it is for: the statement position matching ran before, in the generic plan made without
    // statistics, also walks turns_fingerprint by the key alone (every turn of the key)
    await client.query(
      "PREPARE old_positions AS SELECT id, session_id, position, parent_turn_id FROM turns WHERE session_id = $1 AND key_hash = $2 AND position = ANY($3::int[])",
    );
    await client.query("SET plan_cache_mode = force_generic_plan");
    const old = (await client.query("EXPLAIN EXECUTE old_positions('sess_105', 'key_5', '{1,2,3}')")).rows.map(
      (row: Record<string, string>) => row["QUERY PLAN"],
    );
    await client.query("RESET plan_cache_mode");
    expect(planProblems(old.join("\n")).join("\n")).toContain("turns_fingerprint");
  }, 120_000);

  test("after ANALYZE, every request-path statement reads by its bounding index", async () => {
    await client.query("ANALYZE");
    await check();
  }, 120_000);
});
