import "reflect-metadata";
import { mkdtempSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import pg from "pg";
import { describe, expect, test } from "vitest";
import { migrate, POSTGRES_MIGRATIONS } from "../../src/storage/postgres/migrations.js";
import { openDatabase } from "../../src/storage/sqlite/database.js";
import { SQLITE_MIGRATIONS } from "../../src/storage/sqlite/migrations.js";
import { announceSkipped, freshSchema, pgSkipReason } from "../support/postgres.js";

announceSkipped("test/storage/sessions-per-key-migration.test.ts", 1);

// A store an earlier release wrote: the owner key's session `mine`, an access key's session `shared` with its turns,
// a branch of it, a compaction checkpoint, a response and a named conversation `talk`.
const ROWS = [
  `INSERT INTO access_keys (name, secret_hash, data_scope, scopes, models, events_of, created_at) VALUES ('b', 'h', 'scopeB', '["chat"]', '[]', '[]', 1)`,
  `INSERT INTO sessions (id, key_hash, model, parent_id, model_config, created_at, updated_at) VALUES
     ('mine', 'ownerhash', 'm', NULL, '{}', 't', 't'), ('shared', 'scopeB', 'm', NULL, '{}', 't', 't'), ('sess_branch', 'scopeB', 'm', 'shared', '{}', 't', 't')`,
  `INSERT INTO turns (id, session_id, position, model, plugin, provider, host, upstream_model, content, created_at, key_hash, fingerprint) VALUES
     ('turn_1', 'shared', 1, 'm', 'p', 'p', 'h', 'm', 'one', 't', 'scopeB', 'f1'), ('turn_2', 'shared', 2, 'm', 'p', 'p', 'h', 'm', 'two', 't', 'scopeB', 'f2'),
     ('turn_3', 'mine', 1, 'm', 'p', 'p', 'h', 'm', 'three', 't', 'ownerhash', 'f3'), ('turn_4', 'sess_branch', 1, 'm', 'p', 'p', 'h', 'm', 'one', 't', 'scopeB', 'f1')`,
  `INSERT INTO compaction_checkpoints (id, session_id, anchor_response_id, head_count, cut_index, summary, summarizer, summarized_messages,
     archived_turns, archived_through, tokens_before, tokens_after, created_at) VALUES ('ckpt_1', 'shared', 'resp_1', 1, 2, 's', 'm', 2, 1, 1, 10, 5, 't')`,
  `INSERT INTO responses (id, parent_id, session_id, key_hash, model, created_at, conversation_id, messages, body) VALUES
     ('resp_1', NULL, 'shared', 'scopeB', 'm', 0, 'talk', '[]', '{}'), ('resp_2', NULL, 'mine', NULL, 'm', 0, 'own-talk', '[]', '{}')`,
  `INSERT INTO response_conversations (id, session_id, key_hash, last_response_id, created_at, updated_at) VALUES
     ('talk', 'shared', 'scopeB', 'resp_1', 0, 0), ('own-talk', 'mine', NULL, 'resp_2', 0, 0)`,
];

/** What the migrated store holds, the same on both backends. */
const EXPECTED = {
  sessions: [
    ["mine", null],
    ["sess_branch~scopeB", "shared~scopeB"],
    ["shared~scopeB", null],
  ],
  turns: [
    ["turn_1", "shared~scopeB", 1],
    ["turn_2", "shared~scopeB", 2],
    ["turn_3", "mine", 1],
    ["turn_4", "sess_branch~scopeB", 1],
  ],
  checkpoints: [["ckpt_1", "shared~scopeB"]],
  responses: [
    ["resp_1", "shared~scopeB", "talk~scopeB"],
    ["resp_2", "mine", "own-talk"],
  ],
  conversations: [
    ["own-talk", "mine"],
    ["talk~scopeB", "shared~scopeB"],
  ],
};

const READS = {
  sessions: "SELECT id, parent_id FROM sessions ORDER BY id",
  turns: "SELECT id, session_id, depth FROM turns ORDER BY id",
  checkpoints: "SELECT id, session_id FROM compaction_checkpoints ORDER BY id",
  responses: "SELECT id, session_id, conversation_id FROM responses ORDER BY id",
  conversations: "SELECT id, session_id FROM response_conversations ORDER BY id",
};

describe("sessions named per key: a store from before is renamed", () => {
  test("SQLite: an access key's sessions become name~scope with every row that names them; the owner key's keep their names; depth is the position", () => {
    const home = mkdtempSync(join(tmpdir(), "carrierd-per-key-"));
    try {
      const file = join(home, "state.db");
      const before = openDatabase(
        file,
        SQLITE_MIGRATIONS.filter((migration) => migration.version !== 5 && migration.version !== 201),
      );
      for (const statement of ROWS) before.exec(statement);
      before.close();
      const db = openDatabase(file, SQLITE_MIGRATIONS);
      const read = Object.fromEntries(Object.entries(READS).map(([name, sql]) => [name, db.prepare(sql).raw().all()]));
      expect(read).toEqual(EXPECTED);
      expect(db.pragma("foreign_key_check")).toEqual([]);
      db.close();
    } finally {
      rmSync(home, { recursive: true, force: true });
    }
  });

  test.skipIf(pgSkipReason() !== undefined)("PostgreSQL: the same, through ON UPDATE CASCADE", async () => {
    const schema = await freshSchema();
    const client = new pg.Pool({ connectionString: schema.url, max: 1 });
    try {
      await migrate(
        client,
        POSTGRES_MIGRATIONS.filter((migration) => migration.version < 3),
      );
      for (const statement of ROWS) await client.query(statement);
      expect(await migrate(client)).toEqual([3, 400, 500, 600]);
      const read: Record<string, unknown[]> = {};
      for (const [name, sql] of Object.entries(READS)) read[name] = (await client.query({ text: sql, rowMode: "array" })).rows;
      expect(read).toEqual(EXPECTED);
    } finally {
      await client.end();
      await schema.drop();
    }
  });
});
