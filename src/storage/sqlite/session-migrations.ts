import type { Db, Migration } from "./database.js";
import { callKeyOf, fingerprintOf } from "../../conversation/fingerprint.js";
import type { ToolCall } from "../../providers/contract.js";
import { shown } from "../../foundation/util/shown.js";

/**
 * Migrations of sessions and turns (versions 1–99). The Responses API's
 * tables are 100–199 (responses-migrations.ts), compaction's 200–299
 * (compaction-migrations.ts); SQLITE_MIGRATIONS (migrations.ts) is them all.
 */
export const SESSION_MIGRATIONS: readonly Migration[] = [
  {
    version: 1,
    name: "sessions, turns, fingerprints, verdicts",
    sql: `
      CREATE TABLE sessions (
        id           TEXT PRIMARY KEY,
        key_hash     TEXT NOT NULL,
        model        TEXT,
        parent_id    TEXT,
        -- JSON; holds "rejected_carriers" so a resumed session keeps its verdicts
        model_config TEXT NOT NULL DEFAULT '{}',
        created_at   TEXT NOT NULL,
        updated_at   TEXT NOT NULL
      );
      CREATE INDEX sessions_updated ON sessions (updated_at DESC);

      -- One completed assistant turn with every carrier it came with, verbatim.
      CREATE TABLE turns (
        seq               INTEGER PRIMARY KEY AUTOINCREMENT,
        id                TEXT NOT NULL UNIQUE,
        session_id        TEXT NOT NULL REFERENCES sessions (id) ON DELETE CASCADE,
        position          INTEGER NOT NULL,
        parent_turn_id    TEXT,
        model             TEXT NOT NULL,
        plugin            TEXT NOT NULL,
        provider          TEXT NOT NULL,
        host              TEXT NOT NULL,
        upstream_model    TEXT NOT NULL,
        -- the messages that asked for this turn (those after the previous assistant message), JSON
        prompt            TEXT NOT NULL DEFAULT '[]',
        content           TEXT NOT NULL,
        tool_calls        TEXT,
        reasoning_text    TEXT,
        reasoning_details TEXT,
        native_record     TEXT,
        usage             TEXT,
        finish_reason     TEXT,
        upstream_id       TEXT,
        created_at        TEXT NOT NULL,
        UNIQUE (session_id, position)
      );

      -- Fingerprints of what stateless clients keep, scoped to a hash of the API key.
      CREATE TABLE fingerprints (
        key_hash    TEXT NOT NULL,
        fingerprint TEXT NOT NULL,
        turn_seq    INTEGER NOT NULL REFERENCES turns (seq) ON DELETE CASCADE,
        PRIMARY KEY (key_hash, fingerprint, turn_seq)
      ) WITHOUT ROWID;
      CREATE INDEX fingerprints_turn ON fingerprints (turn_seq);

      -- Unknown-field verdicts.
      CREATE TABLE verdicts (
        provider    TEXT NOT NULL,
        host        TEXT NOT NULL,
        model       TEXT NOT NULL,
        field       TEXT NOT NULL,
        status      INTEGER NOT NULL,
        message     TEXT NOT NULL,
        recorded_at TEXT NOT NULL,
        PRIMARY KEY (provider, host, model, field)
      );
    `,
  },
  {
    version: 2,
    // a session's last activity is read from its newest turn; the row is no longer touched per turn
    name: "sessions ordered by their newest turn",
    sql: `DROP INDEX sessions_updated;`,
  },
  {
    version: 3,
    // a commit writes one WAL frame per page it dirtied: sqlite_sequence, the fingerprints table and its index were three of ~8 per turn
    name: "turns hold their fingerprint, without AUTOINCREMENT",
    foreignKeysOff: true,
    sql: turnsWithFingerprint,
  },
  {
    version: 4,
    // the fingerprint rule revised: both ends trimmed, reasoning blocks removed, "" arguments as {}; and the ids-and-names key
    name: "fingerprints as frontends resend turns, and the tool-call ids key",
    sql: refingerprintTurns,
  },
  {
    version: 5,
    // docs/sessions-and-replay.md, "Whose a session is" and "Position matching"
    name: "sessions named per key; turns know their depth in their conversation",
    foreignKeysOff: true,
    sql: sessionsPerKey,
  },
];

/**
 * Migration 5. A session is named per key: an access key's session is
 * stored as `name~scope` (its data scope), so the same name under two keys
 * is two sessions and no key can reach another's by naming it (the owner
 * key's keep their bare name; `~` is outside what a client may send). The
 * sessions access keys made before are renamed so, with every row that
 * names them (turns, checkpoints, responses, conversations, branches); a
 * conversation named by an access key is renamed the same way. On a new
 * store (no keys yet) there is nothing to rename.
 *
 * Each turn gets its depth: the number of assistant messages before it in
 * the conversation it continued, plus one. Position matching reads the
 * turns at a depth, not at a position of the session, so a turn another
 * client stored in the same session takes no place of this conversation's.
 * A turn from before has its position as its depth, which is what position
 * matching assumed of it then.
 */
function sessionsPerKey(db: Db): string {
  const tables = new Set(db.prepare("SELECT name FROM sqlite_schema WHERE type = 'table'").pluck().all() as string[]);
  const depth = `
    ALTER TABLE turns ADD COLUMN depth INTEGER;
    UPDATE turns SET depth = position;
    -- position matching: a session's turns at a depth, newest first (entries end with seq). Only turns whose depth is
    -- not their position: the others (every turn of a session that holds one conversation) are found through
    -- UNIQUE (session_id, position), so the common commit writes no page of this index
    CREATE INDEX turns_depth ON turns (session_id, depth) WHERE depth <> position;`;
  if (!tables.has("access_keys")) return depth;
  const scoped = "(SELECT r.scoped FROM renamed_sessions r WHERE r.name = ";
  const renames = [
    `CREATE TEMP TABLE renamed_sessions AS
       SELECT id AS name, id || '~' || key_hash AS scoped FROM sessions WHERE key_hash IN (SELECT data_scope FROM access_keys);`,
    `UPDATE turns SET session_id = ${scoped}turns.session_id) WHERE session_id IN (SELECT name FROM renamed_sessions);`,
    `UPDATE sessions SET parent_id = ${scoped}sessions.parent_id) WHERE parent_id IN (SELECT name FROM renamed_sessions);`,
    `UPDATE sessions SET id = ${scoped}sessions.id) WHERE id IN (SELECT name FROM renamed_sessions);`,
  ];
  if (tables.has("compaction_checkpoints"))
    renames.push(
      `UPDATE compaction_checkpoints SET session_id = ${scoped}compaction_checkpoints.session_id) WHERE session_id IN (SELECT name FROM renamed_sessions);`,
    );
  if (tables.has("responses"))
    renames.push(
      `UPDATE responses SET session_id = ${scoped}responses.session_id) WHERE session_id IN (SELECT name FROM renamed_sessions);`,
      `UPDATE responses SET conversation_id = conversation_id || '~' || key_hash
         WHERE conversation_id IS NOT NULL AND key_hash IN (SELECT data_scope FROM access_keys);`,
      `UPDATE response_conversations SET session_id = ${scoped}response_conversations.session_id) WHERE session_id IN (SELECT name FROM renamed_sessions);`,
      `UPDATE response_conversations SET id = id || '~' || key_hash WHERE key_hash IN (SELECT data_scope FROM access_keys);`,
    );
  renames.push("DROP TABLE renamed_sessions;");
  return `${renames.join("\n")}\n${depth}`;
}

/**
 * Migration 4: every stored turn's fingerprint is computed again from its
 * own content and tool calls, with today's normalisation, so a turn stored
 * before it is found by the history a client sends now exactly as a new one
 * (the old fingerprints would match nothing). Tool-call turns with unique
 * ids get their call key, in a partial index that text turns never touch.
 * The functions are registered on the connection for this statement: SQLite
 * calls them once per turn, inside the migration's transaction.
 */
function refingerprintTurns(db: Db): string {
  const calls = (toolCalls: unknown): ToolCall[] => {
    if (typeof toolCalls !== "string") return [];
    try {
      const parsed = JSON.parse(toolCalls) as unknown;
      return Array.isArray(parsed) ? (parsed as ToolCall[]) : [];
    } catch {
      return []; // a column no writer of this store produces: the turn is fingerprinted by its text
    }
  };
  db.function("carrierd_fingerprint_v4", { deterministic: true }, (content, toolCalls) =>
    fingerprintOf(typeof content === "string" ? content : "", calls(toolCalls)),
  );
  db.function("carrierd_call_key_v4", { deterministic: true }, (toolCalls) => callKeyOf(calls(toolCalls)) ?? null);
  return `
    ALTER TABLE turns ADD COLUMN call_key TEXT;
    UPDATE turns SET fingerprint = carrierd_fingerprint_v4(content, tool_calls), call_key = carrierd_call_key_v4(tool_calls) WHERE fingerprint IS NOT NULL;
    -- the ids-and-names lookup, (key hash, call key), newest first like turns_fingerprint; only tool-call turns have an entry
    CREATE INDEX turns_call_key ON turns (key_hash, call_key) WHERE call_key IS NOT NULL;
  `;
}

/**
 * Migration 3: `turns` rebuilt (SQLite's 12 steps, lang_altertable.html#otheralter;
 * openDatabase turns foreign keys off around it and checks them before the
 * commit) with the fingerprint as two columns of the turn — each turn has
 * exactly one, written with it and copied with it to a branch — and without
 * AUTOINCREMENT. A turn is then one row in one table with three indexes,
 * written by one statement.
 *
 * Every turn keeps its `seq`, so newest-first order is unchanged. Without
 * AUTOINCREMENT a new turn takes the largest seq + 1, so deleting the newest
 * turns (`sessions rm`, a branch dropping archived copies) lets the next one
 * reuse their numbers. Nothing depends on a seq never coming back: the only
 * use of seq is ordering (newest first), and a reused seq is still larger
 * than every live turn's, so the new turn is still the newest; nothing refers
 * to a turn by seq any more (the fingerprints table did, with ON DELETE
 * CASCADE, so even then no reference outlived its turn), and the caches and
 * the CLI know turns by id.
 *
 * Columns other capabilities added to `turns` (compaction's `active`,
 * migration 200, which runs before or after this one depending on the
 * database's age) are carried over with their values and declarations, as
 * are their indexes and triggers. A turn without a fingerprint row (none is
 * ever written) keeps NULLs and is never matched, as before.
 */
function turnsWithFingerprint(db: Db): string {
  const columns = db.pragma("table_xinfo(turns)") as { name: string; type: string; notnull: number; dflt_value: string | null; hidden: number }[];
  const added = columns.filter((column) => !TURN_COLUMNS.includes(column.name));
  const addedForeignKeys = (db.pragma("foreign_key_list(turns)") as { from: string }[]).filter((key) => !TURN_COLUMNS.includes(key.from));
  if (added.some((column) => column.hidden !== 0) || addedForeignKeys.length > 0) {
    throw new Error(`migration 3 cannot carry over turns column(s) ${added.map((column) => column.name).join(", ")}: generated or with a foreign key`);
  }
  const twice = db.prepare("SELECT turn_seq FROM fingerprints GROUP BY turn_seq HAVING COUNT(*) > 1 LIMIT 1").pluck().get();
  if (twice !== undefined) throw new Error(`migration 3: turn seq ${shown(twice)} has more than one fingerprint; a turn can hold only one`);
  const kept = db
    .prepare("SELECT sql FROM sqlite_schema WHERE tbl_name = 'turns' AND type IN ('index', 'trigger') AND sql IS NOT NULL")
    .pluck()
    .all() as string[];
  const names = added.map((column) => quote(column.name));
  const declarations = added.map(
    (column) =>
      `${quote(column.name)} ${column.type}${column.notnull ? " NOT NULL" : ""}${column.dflt_value === null ? "" : ` DEFAULT (${column.dflt_value})`}`,
  );
  const copied = TURN_COLUMNS.filter((name) => name !== "key_hash" && name !== "fingerprint");
  return `
    CREATE TABLE turns_new (
      -- the rowid, no AUTOINCREMENT: newest first is seq DESC; a seq is reused only after the newest turns are deleted
      seq               INTEGER PRIMARY KEY,
      id                TEXT NOT NULL UNIQUE,
      session_id        TEXT NOT NULL REFERENCES sessions (id) ON DELETE CASCADE,
      position          INTEGER NOT NULL,
      parent_turn_id    TEXT,
      model             TEXT NOT NULL,
      plugin            TEXT NOT NULL,
      provider          TEXT NOT NULL,
      host              TEXT NOT NULL,
      upstream_model    TEXT NOT NULL,
      -- the messages that asked for this turn (those after the previous assistant message), JSON
      prompt            TEXT NOT NULL DEFAULT '[]',
      content           TEXT NOT NULL,
      tool_calls        TEXT,
      reasoning_text    TEXT,
      reasoning_details TEXT,
      native_record     TEXT,
      usage             TEXT,
      finish_reason     TEXT,
      upstream_id       TEXT,
      created_at        TEXT NOT NULL,
      -- the fingerprint of what stateless clients keep, scoped to a hash of the API key
      -- that wrote the turn (a branch copies its source's)
      key_hash          TEXT,
      fingerprint       TEXT,${declarations.map((declaration) => `\n      ${declaration},`).join("")}
      UNIQUE (session_id, position)
    );
    INSERT INTO turns_new (${[...copied, "key_hash", "fingerprint", ...names].join(", ")})
      SELECT ${[...copied.map((name) => `t.${name}`), "f.key_hash", "f.fingerprint", ...names.map((name) => `t.${name}`)].join(", ")}
        FROM turns t LEFT JOIN fingerprints f ON f.turn_seq = t.seq;
    DROP TABLE fingerprints;
    DROP TABLE turns;
    ALTER TABLE turns_new RENAME TO turns;
    -- the lookup: (key hash, fingerprint), newest first; every entry ends with the rowid (seq), so it is
    -- walked backwards without a sort and without reading the table
    CREATE INDEX turns_fingerprint ON turns (key_hash, fingerprint);
    ${kept.map((sql) => `${sql};`).join("\n    ")}
  `;
}

/** The columns of `turns` as migration 3 declares them (the fingerprint included). */
const TURN_COLUMNS: readonly string[] = [
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
];

function quote(name: string): string {
  return `"${name.replaceAll('"', '""')}"`;
}
