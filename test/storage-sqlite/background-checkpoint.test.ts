import "reflect-metadata";
import { mkdtempSync, rmSync, statSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { afterAll, expect, test } from "vitest";
import { silentLogger } from "../../src/foundation/logging/logger.js";
import { BackgroundCheckpoint } from "../../src/storage/sqlite/background-checkpoint.js";
import { openDatabase } from "../../src/storage/sqlite/database.js";
import { waitFor } from "../support/wait-for.js";

const home = mkdtempSync(join(tmpdir(), "carrierd-checkpoint-"));
afterAll(() => rmSync(home, { recursive: true, force: true }));

test("the gateway's connection never checkpoints; the worker copies the WAL into state.db off the event loop", async () => {
  const file = join(home, "state.db");
  const db = openDatabase(file, [{ version: 1, name: "rows", sql: "CREATE TABLE rows (value TEXT)" }]);
  db.pragma("wal_checkpoint(TRUNCATE)");
  const checkpoints = new BackgroundCheckpoint(db, file, silentLogger(), { intervalMs: 50 });
  expect(db.pragma("wal_autocheckpoint", { simple: true })).toBe(0);
  const sizeBefore = statSync(file).size;
  const insert = db.prepare("INSERT INTO rows (value) VALUES (?)");
  for (let i = 0; i < 200; i++) insert.run("x".repeat(4000)); // ~200 pages, all in the WAL
  expect(statSync(file).size).toBe(sizeBefore); // nothing checkpointed by the writer itself
  await waitFor(() => statSync(file).size !== sizeBefore, { intervalMs: 20, what: "the worker's checkpoint" });
  expect(statSync(file).size).toBeGreaterThan(sizeBefore + 100 * 4096);
  await checkpoints.stop();
  expect(db.prepare("SELECT COUNT(*) FROM rows").pluck().get()).toBe(200);
  db.close();
});
