import { mkdtempSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { dirname, join } from "node:path";
import { afterEach, beforeEach, expect, test } from "vitest";
import { openDatabase, type Db } from "./database.js";
import type { ResponseRecord } from "../responses.js";
import { ResponseStore } from "./response-store.js";
import { RESPONSES_MIGRATIONS } from "./responses-migrations.js";

/** No compaction checkpoints in these tests: the chain's history alone. */
const noCheckpoint = () => undefined;

let db: Db;
let store: ResponseStore;
beforeEach(() => {
  db = openDatabase(":memory:", RESPONSES_MIGRATIONS);
  store = new ResponseStore(db, noCheckpoint);
});
afterEach(() => db.close());

function record(id: string, parentId: string | null, text: string, extra: Partial<ResponseRecord> = {}): ResponseRecord {
  return {
    id,
    parentId,
    sessionId: "sess_1",
    keyHash: "key-a",
    model: "demo",
    createdAt: 1,
    conversationId: null,
    messages: [
      { role: "user", content: text },
      { role: "assistant", content: `re: ${text}` },
    ],
    body: { id, object: "response" },
    ...extra,
  };
}
const rows = () => (db.prepare("SELECT id FROM responses ORDER BY id").all() as { id: string }[]).map((row) => row.id);

test("history walks the chain oldest first, one row per response", async () => {
  store.saveNow(record("r1", null, "a"), []);
  store.saveNow(record("r2", "r1", "b"), []);
  store.saveNow(record("r3", "r2", "c"), []);
  expect((await store.get({ response: "r3", also: "history" })).response?.history?.map((message) => message.content)).toEqual([
    "a",
    "re: a",
    "b",
    "re: b",
    "c",
    "re: c",
  ]);
  expect((await store.get({ response: "r1", also: "history" })).response?.history).toHaveLength(2);
});

test("deleting a response others continue keeps it as a link; the last delete removes the whole unneeded chain", async () => {
  store.saveNow(record("r1", null, "a"), [{ id: "msg_1", type: "message" }]);
  store.saveNow(record("r2", "r1", "b"), []);
  expect(await store.delete("r1")).toBe(true);
  expect((await store.get({ response: "r1" })).response).toBeUndefined();
  expect((await store.get({ items: ["msg_1"] })).items.get("msg_1")).toBeUndefined();
  expect(await store.delete("r1")).toBe(false);
  expect((await store.get({ response: "r2", also: "history" })).response?.history).toHaveLength(4);
  expect(rows()).toEqual(["r1", "r2"]);
  expect(await store.delete("r2")).toBe(true);
  expect(rows()).toEqual([]);
});

test("an unretrievable conversation link is kept, and the conversation points at it", async () => {
  store.saveNow(record("r1", null, "a", { conversationId: "conv_x", body: null }), [{ id: "msg_1" }]);
  expect((await store.get({ response: "r1" })).response).toBeUndefined();
  expect((await store.get({ items: ["msg_1"] })).items.get("msg_1")).toBeUndefined();
  expect((await store.get({ conversation: "conv_x" })).conversation).toEqual({ id: "conv_x", sessionId: "sess_1", keyHash: "key-a", lastResponseId: "r1" });
  store.saveNow(record("r2", "r1", "b", { conversationId: "conv_x" }), []);
  expect((await store.get({ conversation: "conv_x" })).conversation!.lastResponseId).toBe("r2");
  expect((await store.get({ response: "r2", also: "history" })).response?.history).toHaveLength(4);
});

test("migration 101 replaces the development schema 100 of an existing state.db", async () => {
  const file = join(mkdtempSync(join(tmpdir(), "carrierd-responses-")), "state.db");
  openDatabase(file, [
    {
      version: 100,
      name: "responses",
      sql: "CREATE TABLE responses (id TEXT PRIMARY KEY, messages TEXT NOT NULL); CREATE TABLE response_items (id TEXT); CREATE TABLE response_conversations (id TEXT)",
    },
  ]).close();
  const upgraded = openDatabase(file, RESPONSES_MIGRATIONS);
  new ResponseStore(upgraded, noCheckpoint).saveNow(record("r1", null, "a"), []);
  expect((await new ResponseStore(upgraded, noCheckpoint).get({ response: "r1", also: "history" })).response?.history).toHaveLength(2);
  upgraded.close();
  rmSync(dirname(file), { recursive: true, force: true });
});
