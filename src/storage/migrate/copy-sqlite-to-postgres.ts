import type { Db } from "../sqlite/database.js";
import type { Sql } from "../postgres/connection.js";
import { run, transaction } from "../postgres/run.js";

/** How many rows of each table were copied. */
export type CopiedCounts = Record<(typeof TABLES)[number]["name"], number>;

/**
 * Each table of state.db and the PostgreSQL columns it goes to, in an
 * order that satisfies the foreign keys (a response's parent is older, so
 * rowid order copies it first). Every value is copied as SQLite holds it:
 * carrier columns are text on both sides and are never parsed, so every
 * signed block and encrypted blob arrives byte for byte.
 */
const TABLES = [
  { name: "sessions", columns: ["id", "key_hash", "model", "parent_id", "model_config", "created_at", "updated_at"], order: "rowid" },
  {
    name: "turns",
    columns: [
      "seq",
      "id",
      "session_id",
      "position",
      "parent_turn_id",
      "model",
      "plugin",
      "provider",
      "host",
      "upstream_model",
      "prompt",
      "content",
      "tool_calls",
      "reasoning_text",
      "reasoning_details",
      "native_record",
      "usage",
      "finish_reason",
      "upstream_id",
      "created_at",
      "key_hash",
      "fingerprint",
      "call_key",
      "active",
      "depth",
      "audit",
      "prompt_head",
    ],
    order: "seq",
  },
  // the heads turns name (src/storage/prompt-heads.ts), their text as stored
  { name: "prompt_heads", columns: ["hash", "text"], order: "rowid" },
  { name: "verdicts", columns: ["provider", "host", "model", "field", "status", "message", "recorded_at"], order: "rowid" },
  {
    name: "responses",
    columns: ["id", "parent_id", "session_id", "model", "created_at", "conversation_id", "messages", "body", "input_items", "key_hash"],
    order: "rowid",
  },
  { name: "response_items", columns: ["id", "response_id", "item"], order: "rowid" },
  { name: "response_conversations", columns: ["id", "session_id", "last_response_id", "created_at", "updated_at", "key_hash"], order: "rowid" },
  {
    name: "compaction_checkpoints",
    columns: [
      "id",
      "session_id",
      "anchor_response_id",
      "head_count",
      "cut_index",
      "summary",
      "summarizer",
      "summarized_messages",
      "archived_turns",
      "archived_through",
      "tokens_before",
      "tokens_after",
      "created_at",
    ],
    order: "rowid",
  },
  {
    name: "access_keys",
    columns: [
      "name",
      "secret_hash",
      "data_scope",
      "scopes",
      "models",
      "events_of",
      "created_at",
      "expires_at",
      "revoked_at",
      "rotated_at",
      "last_used_at",
      "requests",
    ],
    order: "created_at, name",
  },
  // the deployment's envelope keys come along: encrypted_content clients hold keeps opening after the move
  { name: "envelope_keys", columns: ["generation", "key_id", "secret", "created_at"], order: "generation" },
] as const;

/** The target already holds state: a migration only fills an empty store, it never merges two. */
export class TargetNotEmptyError extends Error {
  constructor(tables: string[]) {
    super(`the PostgreSQL store already holds state (${tables.join(", ")}); migrate into an empty database or schema`);
    this.name = "TargetNotEmptyError";
  }
}

/**
 * Copies every row of an (up to date) state.db into an empty, migrated
 * PostgreSQL store, in one transaction: the store holds all of it or none.
 * Each session's turn counter is set from its turns, and the sequences
 * continue past the copied rows, so new turns are the newest.
 */
export async function copySqliteToPostgres(source: Db, target: Sql): Promise<CopiedCounts> {
  return transaction(target, async (tx) => {
    const occupied: string[] = [];
    for (const table of TABLES) if ((await run(tx, `SELECT 1 FROM ${table.name} LIMIT 1`)).length > 0) occupied.push(table.name);
    if (occupied.length > 0) throw new TargetNotEmptyError(occupied);
    const counts = {} as CopiedCounts;
    for (const table of TABLES) {
      const insert = `INSERT INTO ${table.name} (${table.columns.join(", ")}) VALUES (${table.columns.map((_, index) => `$${index + 1}`).join(", ")})`;
      let copied = 0;
      for (const row of source
        .prepare(`SELECT ${table.columns.join(", ")} FROM ${table.name} ORDER BY ${table.order}`)
        .raw()
        .iterate() as IterableIterator<unknown[]>) {
        await run(tx, insert, row);
        copied++;
      }
      counts[table.name] = copied;
    }
    await run(tx, `UPDATE sessions s SET last_position = COALESCE((SELECT MAX(position) FROM turns t WHERE t.session_id = s.id), 0)`);
    await run(tx, `SELECT setval(pg_get_serial_sequence('turns', 'seq'), GREATEST((SELECT MAX(seq) FROM turns), 1))`);
    return counts;
  });
}
