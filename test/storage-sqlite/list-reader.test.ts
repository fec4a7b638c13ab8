import "reflect-metadata";
import { mkdtempSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { afterAll, expect, test } from "vitest";
import { openSqliteStorage } from "../../src/storage/sqlite/open-sqlite-storage.js";
import { ListDeadlineError } from "../../src/storage/sessions.js";
import { newTurn } from "../storage/contract.js";
import { captureLog } from "../support/captured-log.js";

/**
 * The gateway's store lists sessions in a worker (list-reader.ts): what it
 * answers is what the store holds, turns saved a moment before included, and
 * a search past its deadline is stopped there, not on the gateway's thread.
 */
const home = mkdtempSync(join(tmpdir(), "carrierd-list-reader-"));
const log = captureLog();
const storage = openSqliteStorage({ home, gateway: { log: log.logger } });
afterAll(async () => {
  await storage.close();
  rmSync(home, { recursive: true, force: true });
});

test("lists in the worker see every turn saved before the list was asked, and stop at their deadline", async () => {
  for (let i = 0; i < 50; i++) await storage.turns.save(newTurn(`sess_w${i}`, i === 7 ? "the one about giraffes" : `answer ${i}`));
  const listed = await storage.sessions.list({ limit: 100 });
  expect(listed).toHaveLength(50);
  expect((await storage.sessions.list({ limit: 10, text: "giraffes" })).map((session) => session.id)).toEqual(["sess_w7"]);
  await storage.turns.save(newTurn("sess_late", "saved just now"));
  expect((await storage.sessions.list({ limit: 1 }))[0]?.id).toBe("sess_late");
  await expect(storage.sessions.list({ limit: 10, text: "giraffes", deadline: Date.now() - 1 })).rejects.toBeInstanceOf(ListDeadlineError);
  // the worker is still there for the next list, and never fell back to the gateway's thread
  expect(await storage.sessions.list({ limit: 10, text: "giraffes", deadline: Date.now() + 5000 })).toHaveLength(1);
  expect(log.lines.filter((line) => line.message.includes("list reader stopped"))).toEqual([]);
});
