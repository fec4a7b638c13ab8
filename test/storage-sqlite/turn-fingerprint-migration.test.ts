import "reflect-metadata";
import { mkdtempSync, rmSync, statSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { afterAll, expect, test } from "vitest";
import { CheckpointStore } from "../../src/storage/sqlite/checkpoint-store.js";
import { COMPACTION_MIGRATIONS } from "../../src/storage/sqlite/compaction-migrations.js";
import { KEY_MIGRATIONS } from "../../src/storage/sqlite/key-migrations.js";
import { RESPONSES_MIGRATIONS } from "../../src/storage/sqlite/responses-migrations.js";
import { fingerprintOf } from "../../src/conversation/fingerprint.js";
import { openDatabase, type Db } from "../../src/storage/sqlite/database.js";
import { ENVELOPE_KEY_MIGRATIONS } from "../../src/storage/sqlite/envelope-key-migrations.js";
import { SESSION_MIGRATIONS } from "../../src/storage/sqlite/session-migrations.js";
import { PROMPT_HEAD_MIGRATIONS } from "../../src/storage/sqlite/prompt-head-migrations.js";
import { SESSION_HISTORY_MIGRATIONS } from "../../src/storage/sqlite/history-migrations.js";
import { SqliteStorage } from "../../src/storage/sqlite/sqlite-storage.js";
import type { NewTurn } from "../../src/storage/turns.js";

// Migration 3 moves each turn's fingerprint into its row and drops AUTOINCREMENT (issue 9: fewer pages per commit).
const home = mkdtempSync(join(tmpdir(), "carrierd-migration-3-"));
afterAll(() => rmSync(home, { recursive: true, force: true }));

/** What a gateway of the release before migration 3 applied, and what it applies now. */
const BEFORE = [
  ...SESSION_MIGRATIONS.filter((migration) => migration.version < 3),
  ...RESPONSES_MIGRATIONS,
  ...COMPACTION_MIGRATIONS.filter((migration) => migration.version === 200),
];
const NOW = [
  ...SESSION_MIGRATIONS,
  ...RESPONSES_MIGRATIONS,
  ...COMPACTION_MIGRATIONS,
  ...KEY_MIGRATIONS,
  ...ENVELOPE_KEY_MIGRATIONS,
  ...SESSION_HISTORY_MIGRATIONS,
  ...PROMPT_HEAD_MIGRATIONS,
];

/** A turn written as the old SqliteStorage wrote it: the row (seq by AUTOINCREMENT), then its fingerprint row. */
function oldTurn(db: Db, id: string, sessionId: string, keyHash: string, content: string): number {
  const now = new Date().toISOString();
  db.prepare(
    `INSERT OR IGNORE INTO sessions (id, key_hash, model, parent_id, model_config, created_at, updated_at) VALUES (?, ?, 'demo', NULL, '{}', ?, ?)`,
  ).run(sessionId, keyHash, now, now);
  const seq = db
    .prepare(
      `INSERT INTO turns (id, session_id, position, parent_turn_id, model, plugin, provider, host, upstream_model, prompt, content, tool_calls, reasoning_text, reasoning_details, native_record, usage, finish_reason, upstream_id, created_at)
       VALUES (?, ?, (SELECT COALESCE(MAX(position), 0) + 1 FROM turns WHERE session_id = ?), NULL, 'demo', 'openai-compatible', 'p', 'h', 'm', '[]', ?, NULL, ?, '[{"type":"reasoning.text"}]', NULL, NULL, 'stop', NULL, ?)
       RETURNING seq`,
    )
    .pluck()
    .get(id, sessionId, sessionId, content, `reasoning of ${id}`, now) as number;
  db.prepare(`INSERT OR IGNORE INTO fingerprints (key_hash, fingerprint, turn_seq) VALUES (?, ?, ?)`).run(keyHash, fingerprintOf(content, []), seq);
  return seq;
}

/** The old SqliteStorage.branch: rows copied in SQL, then the fingerprints of the originals attached to the copies. */
function oldBranch(db: Db, sourceId: string, newId: string, at: number): void {
  const now = new Date().toISOString();
  db.prepare(
    `INSERT INTO sessions (id, key_hash, model, parent_id, model_config, created_at, updated_at) SELECT ?, key_hash, model, id, model_config, ?, ? FROM sessions WHERE id = ?`,
  ).run(newId, now, now, sourceId);
  db.prepare(
    `INSERT INTO turns (id, session_id, position, parent_turn_id, model, plugin, provider, host, upstream_model, prompt, content, tool_calls, reasoning_text, reasoning_details, native_record, usage, finish_reason, upstream_id, created_at)
     SELECT 'turn_copy_' || position, ?, position, NULL, model, plugin, provider, host, upstream_model, prompt, content, tool_calls, reasoning_text, reasoning_details, native_record, usage, finish_reason, upstream_id, created_at
       FROM turns WHERE session_id = ? AND position <= ? ORDER BY position`,
  ).run(newId, sourceId, at);
  db.prepare(
    `INSERT OR IGNORE INTO fingerprints (key_hash, fingerprint, turn_seq)
     SELECT f.key_hash, f.fingerprint, copy.seq FROM turns orig JOIN fingerprints f ON f.turn_seq = orig.seq
       JOIN turns copy ON copy.session_id = ? AND copy.position = orig.position WHERE orig.session_id = ? AND orig.position <= ?`,
  ).run(newId, sourceId, at);
}

function newTurn(id: string, sessionId: string, keyHash: string, content: string): NewTurn {
  return {
    id,
    sessionId,
    keyHash,
    parentTurnId: undefined,
    model: "demo",
    plugin: "openai-compatible",
    provider: "p",
    host: "h",
    upstreamModel: "m",
    prompt: [],
    content,
    toolCalls: [],
    reasoningText: `reasoning of ${id}`,
    reasoningDetails: undefined,
    nativeRecord: undefined,
    usage: undefined,
    finishReason: "stop",
    upstreamId: undefined,
    fingerprint: fingerprintOf(content, []),
  };
}

const HELLO = fingerprintOf("hello", []);
const ANSWER = fingerprintOf("the answer is 42", []);
const ids = (matches: { id: string }[] | undefined) => matches?.map((match) => match.id);

test("a database of the previous schema keeps every turn, seq and fingerprint; lookups, branches, sessions rm and new turns work after", async () => {
  const file = join(home, "old.db");
  const old = openDatabase(file, BEFORE);
  oldTurn(old, "turn_a1", "sess_a", "k1", "hello");
  oldTurn(old, "turn_gone", "sess_gone", "k1", "hello"); // deleted below: a gap in seq
  oldTurn(old, "turn_a2", "sess_a", "k1", "the answer is 42");
  oldTurn(old, "turn_b1", "sess_b", "k1", "hello");
  oldTurn(old, "turn_x1", "sess_x", "k2", "hello"); // another API key
  oldTurn(old, "turn_a3", "sess_a", "k1", "goodbye");
  oldBranch(old, "sess_a", "sess_branch", 2);
  oldTurn(old, "turn_last", "sess_last", "k1", "hello"); // deleted below: AUTOINCREMENT had gone past the largest seq
  old.prepare("DELETE FROM sessions WHERE id IN ('sess_gone', 'sess_last')").run();
  const checkpoints = new CheckpointStore(
    old,
    () => {},
    () => [],
  );
  await checkpoints.save(
    {
      id: "ckpt_1",
      sessionId: "sess_a",
      anchorResponseId: "resp_1",
      headCount: 1,
      cutIndex: 2,
      summary: "they said hello",
      summarizer: "demo",
      summarizedMessages: 2,
      tokensBefore: 100,
      tokensAfter: 40,
    },
    { turnIds: ["turn_a1"], supersedes: undefined, owner: { keyHash: "k1", model: "m" } },
  );
  const before = old
    .prepare("SELECT t.*, f.key_hash, f.fingerprint FROM turns t LEFT JOIN fingerprints f ON f.turn_seq = t.seq ORDER BY t.seq")
    .all() as Record<string, unknown>[];
  expect(before.map((row) => row.fingerprint)).not.toContain(null); // every old turn had its one fingerprint row
  expect(before.map((row) => row.id)).toEqual(["turn_a1", "turn_a2", "turn_b1", "turn_x1", "turn_a3", "turn_copy_1", "turn_copy_2"]);
  old.close();

  const db = openDatabase(file, NOW);
  // the schema: one table, no AUTOINCREMENT, no fingerprints table, the lookup's index, foreign keys back on
  expect(db.prepare("SELECT name FROM sqlite_schema WHERE name = 'fingerprints' OR name = 'fingerprints_turn'").all()).toEqual([]);
  const turnsSql = db.prepare("SELECT sql FROM sqlite_schema WHERE name = 'turns'").pluck().get() as string;
  expect(turnsSql).toMatch(/seq +INTEGER PRIMARY KEY,/);
  expect(db.prepare("SELECT COUNT(*) FROM sqlite_sequence WHERE name = 'turns'").pluck().get()).toBe(0);
  expect(db.prepare("SELECT name FROM sqlite_schema WHERE type = 'index' AND tbl_name = 'turns' AND sql IS NOT NULL").pluck().all()).toEqual([
    "turns_fingerprint",
    "turns_call_key",
    "turns_depth",
    "turns_prompt_head",
  ]);
  expect(db.pragma("foreign_keys", { simple: true })).toBe(1);
  expect(db.pragma("foreign_key_check")).toEqual([]);
  expect(db.pragma("integrity_check", { simple: true })).toBe("ok");
  // every row as it was (seq, every column, compaction's active flag), its fingerprint now in the row
  expect(db.prepare("SELECT * FROM turns ORDER BY seq").all()).toEqual(
    before.map((row) => ({ ...row, call_key: null, depth: row.position, audit: null, prompt_head: null })),
  ); // migration 4 adds call_key: text turns have none; migration 5 the depth, the position before; migration 500 the audit, none before; migration 600 the prompt head, none before
  expect(db.prepare("SELECT id FROM turns WHERE active = 0").pluck().all()).toEqual(["turn_a1"]);

  const store = new SqliteStorage(db, undefined);
  // newest first: the branch's copy, then the originals; another key's turn never
  expect(ids(store.reads.matchesFor("k1", [HELLO, ANSWER]).get(HELLO))).toEqual(["turn_copy_1", "turn_b1", "turn_a1"]);
  expect(ids(store.reads.matchesFor("k1", [ANSWER]).get(ANSWER))).toEqual(["turn_copy_2", "turn_a2"]);
  expect(ids(store.reads.matchesFor("k2", [HELLO]).get(HELLO))).toEqual(["turn_x1"]);
  expect(
    new CheckpointStore(
      db,
      () => {},
      () => [],
    )
      .list("sess_a")
      .map((checkpoint) => [checkpoint.id, checkpoint.archivedThrough]),
  ).toEqual([["ckpt_1", 1]]);

  // a new turn comes after every old one, and is the newest match
  const largest = db.prepare("SELECT MAX(seq) FROM turns").pluck().get() as number;
  expect(store.writes.saveNow(newTurn("turn_a4", "sess_a", "k1", "hello"))).toBe(4);
  expect((await store.sessions.show("sess_a"))!.turnList.find((turn) => turn.id === "turn_a4")!.seq).toBe(largest + 1);
  expect(ids(store.reads.matchesFor("k1", [HELLO]).get(HELLO))).toEqual(["turn_a4", "turn_copy_1", "turn_b1", "turn_a1"]);

  // a branch made now, past the checkpoint (compaction's branch): its copies carry their fingerprints and key hash
  const branch = (await store.sessions.branch("sess_a", "sess_branch_now", undefined))!;
  expect(branch).toMatchObject({ turns: 3 }); // turn 1 is archived: the copied checkpoint stands in for it
  const copies = db.prepare("SELECT id, position, key_hash, fingerprint, parent_turn_id FROM turns WHERE session_id = ? ORDER BY position").all(branch.id) as {
    id: string;
    position: number;
    key_hash: string;
    fingerprint: string;
    parent_turn_id: string | null;
  }[];
  expect(copies.map((copy) => [copy.position, copy.key_hash, copy.fingerprint])).toEqual([
    [2, "k1", ANSWER],
    [3, "k1", fingerprintOf("goodbye", [])],
    [4, "k1", HELLO],
  ]);
  expect(copies.map((copy) => copy.parent_turn_id)).toEqual([null, copies[0]!.id, copies[1]!.id]);
  expect(ids(store.reads.matchesFor("k1", [ANSWER]).get(ANSWER))).toEqual([copies[0]!.id, "turn_copy_2", "turn_a2"]);

  // sessions rm: the turns go, and with them their fingerprints
  expect(await store.sessions.remove(branch.id)).toBe(true);
  expect(await store.sessions.remove("sess_branch")).toBe(true);
  expect(db.prepare("SELECT COUNT(*) FROM turns WHERE session_id IN (?, 'sess_branch')").pluck().get(branch.id)).toBe(0);
  expect(ids(store.reads.matchesFor("k1", [ANSWER]).get(ANSWER))).toEqual(["turn_a2"]);
  expect(ids(store.reads.matchesFor("k1", [HELLO]).get(HELLO))).toEqual(["turn_a4", "turn_b1", "turn_a1"]);
  db.close();
});

test("a seq freed by deleting the newest turns is reused, and the turn that takes it is still the newest match", async () => {
  const store = new SqliteStorage(openDatabase(":memory:", NOW), undefined);
  store.writes.saveNow(newTurn("turn_1", "sess_1", "k", "hello"));
  store.writes.saveNow(newTurn("turn_2", "sess_2", "k", "hello"));
  const seqOf = async (sessionId: string) => (await store.sessions.show(sessionId))!.turnList[0]!.seq;
  const freed = await seqOf("sess_2");
  expect(ids(store.reads.matchesFor("k", [HELLO]).get(HELLO))).toEqual(["turn_2", "turn_1"]);
  await store.sessions.remove("sess_2");
  expect(ids(store.reads.matchesFor("k", [HELLO]).get(HELLO))).toEqual(["turn_1"]);
  store.writes.saveNow(newTurn("turn_3", "sess_3", "k", "hello"));
  expect(await seqOf("sess_3")).toBe(freed);
  expect(ids(store.reads.matchesFor("k", [HELLO]).get(HELLO))).toEqual(["turn_3", "turn_1"]);
});

test("a database only the CLI opened (no compaction yet) migrates, and compaction's migration adds its column afterwards", () => {
  const file = join(home, "cli.db");
  const old = openDatabase(
    file,
    SESSION_MIGRATIONS.filter((migration) => migration.version < 3),
  );
  const seq = oldTurn(old, "turn_1", "sess_1", "k", "hello");
  old.close();
  openDatabase(file, SESSION_MIGRATIONS).close(); // what `carrierd sessions list` applied before it opened state.db with every migration
  const db = openDatabase(file, NOW);
  expect(db.prepare("SELECT seq, key_hash, fingerprint, active FROM turns").all()).toEqual([{ seq, key_hash: "k", fingerprint: HELLO, active: 1 }]);
  expect(db.prepare("SELECT version FROM schema_migrations ORDER BY version").pluck().all()).toEqual([
    1, 2, 3, 4, 5, 101, 102, 103, 200, 201, 300, 400, 500, 600,
  ]);
  expect(ids(new SqliteStorage(db, undefined).reads.matchesFor("k", [HELLO]).get(HELLO))).toEqual(["turn_1"]);
  db.close();
});

test("a turn with two fingerprint rows (never written, but the old schema allowed it) stops the migration, and nothing changes", () => {
  const file = join(home, "doubled.db");
  const old = openDatabase(file, BEFORE);
  const seq = oldTurn(old, "turn_1", "sess_1", "k", "hello");
  old.prepare(`INSERT INTO fingerprints (key_hash, fingerprint, turn_seq) VALUES ('k', 'another', ?)`).run(seq);
  old.close();
  expect(() => openDatabase(file, NOW)).toThrow(/turn seq \d+ has more than one fingerprint/);
  const db = openDatabase(file, BEFORE);
  expect(db.prepare("SELECT COUNT(*) FROM fingerprints").pluck().get()).toBe(2);
  expect(db.prepare("SELECT version FROM schema_migrations ORDER BY version").pluck().all()).toEqual([1, 2, 101, 102, 103, 200]);
  db.close();
});

test("a turn committed alone writes about four pages to the WAL: its row and three index entries (about seven before migration 3)", () => {
  const file = join(home, "pages.db");
  const db = openDatabase(file, NOW);
  db.pragma("wal_autocheckpoint = 0"); // as the gateway runs: nothing checkpoints, the WAL only grows
  const store = new SqliteStorage(db, undefined);
  const frame = (db.pragma("page_size", { simple: true }) as number) + 24;
  const walFrames = () => (statSync(`${file}-wal`).size - 32) / frame;
  const save = (index: number) =>
    store.writes.saveNow(newTurn(`turn_${String(index).padStart(6, "0")}`, `sess_${Math.floor(index / 20)}`, "k", `answer ${index} `.repeat(10)));
  for (let index = 0; index < 400; index++) save(index); // past the first leaf of every b-tree
  const before = walFrames();
  for (let index = 400; index < 800; index++) save(index);
  const perCommit = (walFrames() - before) / 400;
  expect(perCommit).toBeGreaterThanOrEqual(4);
  expect(perCommit).toBeLessThan(5.5); // 4.7 here; 6.9 with the fingerprints table and AUTOINCREMENT
  db.close();
});
