import "reflect-metadata";
import { expect, test } from "vitest";
import { fingerprintOf } from "../../src/conversation/fingerprint.js";
import { openDatabase } from "../../src/storage/sqlite/database.js";
import { SQLITE_MIGRATIONS } from "../../src/storage/sqlite/migrations.js";
import { SqliteStorage } from "../../src/storage/sqlite/sqlite-storage.js";
import type { NewTurn } from "../../src/storage/turns.js";

const db = openDatabase(":memory:", SQLITE_MIGRATIONS);
const store = new SqliteStorage(db, undefined);
const turn = (id: string, sessionId: string, content: string): NewTurn => ({
  id,
  sessionId,
  keyHash: "key",
  parentTurnId: undefined,
  model: "m",
  plugin: "openai-compatible",
  provider: "p",
  host: "h",
  upstreamModel: "m",
  prompt: [],
  content,
  toolCalls: [],
  reasoningText: `reasoning ${id}`,
  reasoningDetails: undefined,
  nativeRecord: undefined,
  usage: undefined,
  finishReason: "stop",
  upstreamId: undefined,
  fingerprint: fingerprintOf(content, []),
});

test("turns completing together share one commit, each resolved once it is durable, in order", async () => {
  const commits = db.prepare("SELECT COUNT(*) FROM turns").pluck();
  const saving = [store.turns.save(turn("t1", "s1", "a")), store.turns.save(turn("t2", "s1", "b")), store.turns.save(turn("t3", "s2", "c"))];
  expect(commits.get()).toBe(0); // nothing is written before the batch flushes
  await Promise.all(saving);
  expect(commits.get()).toBe(3);
  expect((await store.sessions.show("s2"))?.turnList.map((stored) => [stored.id, stored.position])).toEqual([["t3", 1]]);
  expect((await store.sessions.show("s1"))?.turnList.map((stored) => [stored.id, stored.position, stored.reasoningText])).toEqual([
    ["t1", 1, "reasoning t1"],
    ["t2", 2, "reasoning t2"],
  ]);
  expect(store.reads.matchesFor("key", [fingerprintOf("b", [])]).get(fingerprintOf("b", []))).toEqual([{ id: "t2", session_id: "s1", parent_turn_id: null }]);
});

test("a turn that cannot be written fails alone; the rest of its batch is committed", async () => {
  const results = await Promise.allSettled([
    store.turns.save(turn("t4", "s3", "d")),
    store.turns.save(turn("t1", "s3", "duplicate id")),
    store.turns.save(turn("t5", "s3", "e")),
  ]);
  expect(results.map((result) => result.status)).toEqual(["fulfilled", "rejected", "fulfilled"]);
  expect((await store.sessions.show("s3"))?.turnList.map((stored) => stored.id)).toEqual(["t4", "t5"]);
});
