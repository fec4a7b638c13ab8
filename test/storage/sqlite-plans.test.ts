import "reflect-metadata";
import { mkdtempSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import Database from "better-sqlite3";
import { afterAll, beforeAll, describe, expect, test } from "vitest";
import { openDatabase, type Db } from "../../src/storage/sqlite/database.js";
import { SQLITE_MIGRATIONS } from "../../src/storage/sqlite/migrations.js";
import { SqliteStorage } from "../../src/storage/sqlite/sqlite-storage.js";
import { exerciseRequestPath, FILL, fillStatements, sqliteRows } from "./request-path.js";

/** A statement as the storage ran it: its text and the values it was given. */
interface Ran {
  readonly sql: string;
  readonly values: unknown[];
}

const ROW_METHODS = ["run", "get", "all", "iterate"] as const;

/**
 * Every statement `body` runs on connections opened meanwhile, with its
 * values: prepare is wrapped so that each statement reports its runs. What
 * the storage caches in memory (and so does not ask SQLite) is not run and
 * not reported; the store is opened anew for each phase, with nothing cached.
 */
async function statementsRun(body: () => Promise<void>): Promise<Ran[]> {
  const ran: Ran[] = [];
  const prepare = Database.prototype.prepare;
  Database.prototype.prepare = function (this: Db, sql: string) {
    const statement = prepare.call(this, sql) as unknown as Record<string, (...values: unknown[]) => unknown>;
    for (const method of ROW_METHODS) {
      const original = statement[method].bind(statement);
      statement[method] = (...values: unknown[]) => {
        ran.push({ sql, values });
        return original(...values);
      };
    }
    return statement as never;
  } as typeof prepare;
  try {
    await body();
  } finally {
    Database.prototype.prepare = prepare;
  }
  return ran;
}

/**
 * The tables a request reads or writes that grow with use: none may be read
 * whole. `verdicts` is not one: a row per (provider, host, model, field) an
 * upstream rejected, a handful that traffic does not add to, which SQLite
 * rightly reads whole once it knows how few there are (and which the
 * gateway reads from memory while nothing else wrote them).
 */
const TABLES = /^(turns|sessions|responses|response_items|response_conversations|compaction_checkpoints|t|f|p|s|r|i|c)\b/;

/**
 * What is wrong with a plan, if anything: a table read whole (a SCAN of
 * anything but json_each, a CTE's rows or a constant row), or one of the
 * per-key indexes searched by the key alone (every turn of the key).
 */
function planProblems(db: Db, ran: Ran): string[] {
  const plan = db.prepare(`EXPLAIN QUERY PLAN ${ran.sql}`).all(...(ran.values as [])) as { detail: string }[];
  const problems: string[] = [];
  for (const { detail } of plan) {
    if (/^SCAN /.test(detail) && !/VIRTUAL TABLE|CONSTANT ROW|^SCAN (chain|n|m)\b/.test(detail) && TABLES.test(detail.slice(5))) problems.push(detail);
    if (/turns_fingerprint \(key_hash=\?\)|turns_call_key \(key_hash=\?\)/.test(detail)) problems.push(detail);
    if (/USING (COVERING )?INDEX turns_depth/.test(detail) && !/session_id=\? AND depth=\?/.test(detail)) problems.push(detail);
  }
  return problems.map((problem) => `${problem}\n    in ${ran.sql.replace(/\s+/g, " ").slice(0, 160)}`);
}

/** The distinct statements of a run (one of each text, its first values). */
function distinct(ran: readonly Ran[]): Ran[] {
  const seen = new Map<string, Ran>();
  for (const statement of ran)
    if (!seen.has(statement.sql) && !/^\s*(PRAGMA|BEGIN|COMMIT|ROLLBACK|SAVEPOINT|RELEASE)\b/i.test(statement.sql)) seen.set(statement.sql, statement);
  return [...seen.values()];
}

// The request path's statements must read by the index that bounds them by the session or the fingerprint, whatever the
// planner's statistics: none, the real ones, or ones that make a key look as selective as a session (the statistics
// under which SQLite once read every turn of a key for position matching).
describe(`SQLite plans on a store of ${FILL.turns} turns, ${FILL.sessions} sessions, ${FILL.keys} keys`, () => {
  let home: string;
  let file: string;
  beforeAll(() => {
    home = mkdtempSync(join(tmpdir(), "carrierd-plans-"));
    file = join(home, "state.db");
    const db = openDatabase(file, SQLITE_MIGRATIONS);
    const started = Date.now();
    db.transaction(() => {
      for (const statement of fillStatements(sqliteRows, { postgres: false })) db.exec(statement);
    })();
    expect(db.prepare("SELECT COUNT(*) FROM turns").pluck().get()).toBe(FILL.turns);
    expect(Date.now() - started).toBeLessThan(30_000);
    db.close();
  }, 120_000);
  afterAll(() => rmSync(home, { recursive: true, force: true }));

  /** Opens the filled store as the given statistics leave it, runs the request path, and checks each statement's plan. */
  let runs = 0;
  async function check(statistics: (db: Db) => void): Promise<Ran[]> {
    const setup = new Database(file);
    statistics(setup);
    setup.close();
    let store: SqliteStorage | undefined;
    const ran = await statementsRun(async () => {
      // opened without openDatabase's PRAGMA optimize: the statistics stay as set
      store = new SqliteStorage(new Database(file), undefined);
      await exerciseRequestPath(store, String(++runs), () => store!.committed());
    });
    const statements = distinct(ran);
    const problems = statements.flatMap((statement) => planProblems(store!.db, statement));
    await store!.close();
    expect(problems).toEqual([]);
    return statements;
  }

  const dropStatistics = (db: Db) => {
    const has = db.prepare("SELECT name FROM sqlite_schema WHERE name LIKE 'sqlite_stat%'").pluck().all() as string[];
    for (const table of has) db.exec(`DELETE FROM ${table}`);
  };

  test("without statistics, every request-path statement reads by its bounding index", async () => {
    const statements = await check(dropStatistics);
    // the statements that matter most are among those checked
    const texts = statements.map((statement) => statement.sql).join("\n");
    for (const part of ["INDEXED BY turns_depth", "f.fingerprint = j.value", "INSERT INTO turns", "FROM sessions WHERE id = ?", "WITH RECURSIVE chain"])
      expect(texts).toContain(part);
    expect(statements.length).toBeGreaterThanOrEqual(15);
  }, 60_000);

  test("after ANALYZE, every request-path statement reads by its bounding index", async () => {
    await check((db) => {
      dropStatistics(db);
      db.exec("ANALYZE");
    });
  }, 60_000);

  test("after PRAGMA optimize as the gateway runs it (sampled ANALYZE), every request-path statement reads by its bounding index", async () => {
    await check((db) => {
      dropStatistics(db);
      db.pragma("analysis_limit = 400");
      db.pragma("optimize = 0x10002");
    });
  }, 60_000);

  test("with statistics that make a key look as selective as a session, every request-path statement still reads by its bounding index", async () => {
    const skew = (db: Db) => {
      dropStatistics(db);
      db.exec("ANALYZE");
      db.prepare("UPDATE sqlite_stat1 SET stat = ? WHERE idx = 'turns_fingerprint'").run(`${FILL.turns} 1 1`);
      db.prepare("UPDATE sqlite_stat1 SET stat = ? WHERE idx = 'turns_call_key'").run(`${FILL.turns / 10} 1 1`);
      db.exec("DELETE FROM sqlite_stat4");
    };
    await check(skew);
    // the statement position matching ran before: under these statistics it reads every turn of the key
    const db = new Database(file, { readonly: true });
    const plan = db
      .prepare(
        "EXPLAIN QUERY PLAN SELECT id, session_id, position, parent_turn_id FROM turns WHERE session_id = ? AND key_hash = ? AND position IN (SELECT value FROM json_each(?))",
      )
      .all("sess_105", "key_5", "[1,2,3]") as { detail: string }[];
    db.close();
    expect(plan.map((row) => row.detail).join("\n")).toContain("turns_fingerprint (key_hash=?)");
  }, 60_000);
});
