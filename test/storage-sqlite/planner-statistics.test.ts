import "reflect-metadata";
import { mkdtempSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import Database from "better-sqlite3";
import { afterEach, expect, test } from "vitest";
import { openDatabase } from "../../src/storage/sqlite/database.js";
import { SQLITE_MIGRATIONS } from "../../src/storage/sqlite/migrations.js";
import { openSqliteStorage } from "../../src/storage/sqlite/open-sqlite-storage.js";
import { captureLog } from "../support/captured-log.js";
import { waitFor } from "../support/wait-for.js";

// The planner's statistics follow the store (docs/sessions-and-replay.md, "Performance"): PRAGMA optimize at every
// open, and periodically in the gateway's checkpoint worker, each ANALYZE sampled. (The request path's plans do not
// depend on them: test/storage/sqlite-plans.test.ts.)
const homes: string[] = [];
afterEach(() => {
  for (const home of homes.splice(0)) rmSync(home, { recursive: true, force: true });
});

function storeWithTurns(): string {
  const home = mkdtempSync(join(tmpdir(), "carrierd-statistics-"));
  homes.push(home);
  const db = openDatabase(join(home, "state.db"), SQLITE_MIGRATIONS);
  db.exec(`WITH RECURSIVE n(i) AS (SELECT 0 UNION ALL SELECT i + 1 FROM n WHERE i < 999)
           INSERT INTO sessions (id, key_hash, model, model_config, created_at, updated_at) SELECT 'sess_' || i, 'k', 'm', '{}', 't', 't' FROM n`);
  db.exec(`WITH RECURSIVE n(i) AS (SELECT 0 UNION ALL SELECT i + 1 FROM n WHERE i < 19999)
           INSERT INTO turns (id, session_id, position, depth, model, plugin, provider, host, upstream_model, content, created_at, key_hash, fingerprint)
           SELECT 'turn_' || i, 'sess_' || (i % 1000), i / 1000 + 1, i / 1000 + 1, 'm', 'p', 'p', 'h', 'm', 'a', 't', 'k', 'fp_' || i FROM n`);
  db.exec("DELETE FROM sqlite_stat1");
  db.close();
  return home;
}

const turnStatistics = (file: string) => {
  const db = new Database(file, { readonly: true });
  try {
    return db.prepare("SELECT COUNT(*) FROM sqlite_stat1 WHERE tbl = 'turns'").pluck().get() as number;
  } finally {
    db.close();
  }
};

test("opening the store analyses the tables that have no statistics", () => {
  const home = storeWithTurns();
  const file = join(home, "state.db");
  expect(turnStatistics(file)).toBe(0);
  openDatabase(file, SQLITE_MIGRATIONS).close();
  expect(turnStatistics(file)).toBeGreaterThan(0);
});

test("the gateway's checkpoint worker refreshes them while it runs", async () => {
  const home = storeWithTurns();
  const file = join(home, "state.db");
  const storage = openSqliteStorage({ home, gateway: { log: captureLog().logger, optimizeMs: 100 } });
  try {
    storage.db.exec("DELETE FROM sqlite_stat1");
    expect(turnStatistics(file)).toBe(0);
    await waitFor(() => turnStatistics(file) > 0, { intervalMs: 50, what: "the worker's ANALYZE" });
    expect(turnStatistics(file)).toBeGreaterThan(0);
  } finally {
    await storage.close();
  }
});
