import type { Sql } from "./connection.js";
import { ENVELOPE_KEY_MIGRATION } from "./envelope-key-migrations.js";
import { SESSION_HISTORY_MIGRATION } from "./history-migrations.js";
import { PROMPT_HEAD_MIGRATION } from "./prompt-head-migrations.js";
import { transaction } from "./run.js";

export interface PostgresMigration {
  readonly version: number;
  readonly name: string;
  readonly sql: string;
}

/**
 * The PostgreSQL schema, one table per thing carrierd keeps, as SQLite's
 * (src/storage/sqlite) after all its migrations. Every carrier column is
 * `text`, never `jsonb`: jsonb re-orders keys, drops duplicates and
 * rewrites numbers and escapes, and a signed thinking block or an
 * encrypted blob must come back byte for byte as the provider sent it.
 * Timestamps are ISO strings as in SQLite, so both backends answer alike.
 */
export const POSTGRES_MIGRATIONS: readonly PostgresMigration[] = [
  {
    version: 1,
    name: "sessions, turns, verdicts, responses, checkpoints",
    sql: `
      CREATE TABLE sessions (
        id            text PRIMARY KEY,
        -- insertion order: the tie-break SQLite's rowid gives
        ord           bigserial NOT NULL,
        key_hash      text NOT NULL,
        model         text,
        parent_id     text,
        -- JSON; holds "rejected_carriers" so a resumed session keeps its verdicts
        model_config  text NOT NULL DEFAULT '{}',
        -- the position of the session's newest turn: a new turn takes the next one in the same statement that
        -- locks the row, so two instances writing to one session never race for a position
        last_position integer NOT NULL DEFAULT 0,
        created_at    text NOT NULL,
        updated_at    text NOT NULL
      );

      -- One completed assistant turn with every carrier it came with, verbatim.
      CREATE TABLE turns (
        seq               bigserial PRIMARY KEY,
        id                text NOT NULL UNIQUE,
        session_id        text NOT NULL REFERENCES sessions (id) ON DELETE CASCADE,
        position          integer NOT NULL,
        parent_turn_id    text,
        model             text NOT NULL,
        plugin            text NOT NULL,
        provider          text NOT NULL,
        host              text NOT NULL,
        upstream_model    text NOT NULL,
        prompt            text NOT NULL DEFAULT '[]',
        content           text NOT NULL,
        tool_calls        text,
        reasoning_text    text,
        reasoning_details text,
        native_record     text,
        usage             text,
        finish_reason     text,
        upstream_id       text,
        created_at        text NOT NULL,
        -- the fingerprint and call key that stateless clients are matched by, under the API key's hash
        key_hash          text,
        fingerprint       text,
        call_key          text,
        -- 0 once a compaction checkpoint summarises the turn; its carriers stay
        active            smallint NOT NULL DEFAULT 1,
        UNIQUE (session_id, position)
      );
      -- the replay lookup: per key one index probe, newest first without a sort
      CREATE INDEX turns_fingerprint ON turns (key_hash, fingerprint, seq DESC);
      CREATE INDEX turns_call_key ON turns (key_hash, call_key, seq DESC) WHERE call_key IS NOT NULL;

      -- Unknown-field verdicts.
      CREATE TABLE verdicts (
        provider    text NOT NULL,
        host        text NOT NULL,
        model       text NOT NULL,
        field       text NOT NULL,
        status      integer NOT NULL,
        message     text NOT NULL,
        recorded_at text NOT NULL,
        PRIMARY KEY (provider, host, model, field)
      );

      -- The Responses API: each response holds what it added and a link to the one it continued.
      CREATE TABLE responses (
        id              text PRIMARY KEY,
        parent_id       text REFERENCES responses (id),
        session_id      text NOT NULL,
        model           text NOT NULL,
        created_at      bigint NOT NULL,
        conversation_id text,
        messages        text NOT NULL,
        body            text,
        input_items     text
      );
      CREATE INDEX responses_parent ON responses (parent_id);
      CREATE TABLE response_items (
        id          text PRIMARY KEY,
        response_id text NOT NULL REFERENCES responses (id),
        item        text NOT NULL
      );
      CREATE INDEX response_items_by_response ON response_items (response_id);
      CREATE TABLE response_conversations (
        id               text PRIMARY KEY,
        session_id       text NOT NULL,
        last_response_id text NOT NULL REFERENCES responses (id),
        created_at       bigint NOT NULL,
        updated_at       bigint NOT NULL
      );
      CREATE INDEX response_conversations_last ON response_conversations (last_response_id);

      -- Compaction checkpoints.
      CREATE TABLE compaction_checkpoints (
        id                  text PRIMARY KEY,
        ord                 bigserial NOT NULL,
        session_id          text NOT NULL REFERENCES sessions (id) ON DELETE CASCADE,
        anchor_response_id  text,
        head_count          integer NOT NULL,
        cut_index           integer NOT NULL,
        summary             text NOT NULL,
        summarizer          text NOT NULL,
        summarized_messages integer NOT NULL,
        archived_turns      integer NOT NULL,
        archived_through    integer,
        tokens_before       integer NOT NULL,
        tokens_after        integer NOT NULL,
        created_at          text NOT NULL
      );
      CREATE INDEX compaction_checkpoints_session ON compaction_checkpoints (session_id, created_at);
      CREATE INDEX compaction_checkpoints_anchor ON compaction_checkpoints (anchor_response_id);
    `,
  },
  {
    version: 2,
    name: "access keys; responses and conversations belong to the key that created them",
    sql: `
      -- only a hash of each secret; times in epoch milliseconds. key_revision is bumped by every create, revoke and
      -- rotate, and polled by every gateway (usage counts do not bump it)
      CREATE TABLE access_keys (
        name         text PRIMARY KEY,
        secret_hash  text NOT NULL UNIQUE,
        data_scope   text NOT NULL,
        scopes       text NOT NULL,
        models       text NOT NULL,
        events_of    text NOT NULL,
        created_at   bigint NOT NULL,
        expires_at   bigint,
        revoked_at   bigint,
        rotated_at   bigint,
        last_used_at bigint,
        requests     bigint NOT NULL DEFAULT 0
      );
      CREATE TABLE key_revision (id integer PRIMARY KEY CHECK (id = 1), revision bigint NOT NULL);
      INSERT INTO key_revision (id, revision) VALUES (1, 0);
      -- the data scope of the creating key; NULL on rows from before: the owner key's
      ALTER TABLE responses ADD COLUMN key_hash text;
      ALTER TABLE response_conversations ADD COLUMN key_hash text;
    `,
  },
  {
    version: 3,
    // docs/sessions-and-replay.md, "Whose a session is" and "Position matching"; docs/scale-out.md, "Plans"
    name: "sessions named per key; turns know their depth in their conversation; statistics kept fresh",
    sql: `
      -- an access key's session is stored as name~scope (the owner key's keep their bare name): renamed with every
      -- row that names it, through ON UPDATE CASCADE where a foreign key holds the name
      ALTER TABLE turns DROP CONSTRAINT turns_session_id_fkey,
        ADD CONSTRAINT turns_session_id_fkey FOREIGN KEY (session_id) REFERENCES sessions (id) ON DELETE CASCADE ON UPDATE CASCADE;
      ALTER TABLE compaction_checkpoints DROP CONSTRAINT compaction_checkpoints_session_id_fkey,
        ADD CONSTRAINT compaction_checkpoints_session_id_fkey FOREIGN KEY (session_id) REFERENCES sessions (id) ON DELETE CASCADE ON UPDATE CASCADE;
      CREATE TEMP TABLE renamed_sessions ON COMMIT DROP AS
        SELECT id AS name, id || '~' || key_hash AS scoped FROM sessions WHERE key_hash IN (SELECT data_scope FROM access_keys);
      UPDATE sessions s SET parent_id = r.scoped FROM renamed_sessions r WHERE s.parent_id = r.name;
      UPDATE sessions s SET id = r.scoped FROM renamed_sessions r WHERE s.id = r.name;
      UPDATE responses t SET session_id = r.scoped FROM renamed_sessions r WHERE t.session_id = r.name;
      UPDATE response_conversations t SET session_id = r.scoped FROM renamed_sessions r WHERE t.session_id = r.name;
      UPDATE responses SET conversation_id = conversation_id || '~' || key_hash
        WHERE conversation_id IS NOT NULL AND key_hash IN (SELECT data_scope FROM access_keys);
      UPDATE response_conversations SET id = id || '~' || key_hash WHERE key_hash IN (SELECT data_scope FROM access_keys);
      -- position matching reads a session's turns at a depth, newest first; a turn from before has its position as depth
      ALTER TABLE turns ADD COLUMN depth integer;
      UPDATE turns SET depth = position;
      -- only turns whose depth is not their position; the others are found through UNIQUE (session_id, position)
      CREATE INDEX turns_depth ON turns (session_id, depth, seq DESC) WHERE depth <> position;
      -- autoanalyze after 2 % of a table changed rather than 10 %: the plans are fixed by the statements' shape, and
      -- fresh statistics keep the cost estimates of everything else honest as the store grows
      ALTER TABLE turns SET (autovacuum_analyze_scale_factor = 0.02, autovacuum_analyze_threshold = 1000);
      ALTER TABLE sessions SET (autovacuum_analyze_scale_factor = 0.02, autovacuum_analyze_threshold = 1000);
    `,
  },
  ENVELOPE_KEY_MIGRATION,
  SESSION_HISTORY_MIGRATION,
  PROMPT_HEAD_MIGRATION,
];

// any constant both sides agree on: pg_advisory_xact_lock takes a bigint key; this one is "carrierd" in ASCII
const MIGRATION_LOCK = 7161674946551230052n; // 0x6361727269657264

/**
 * Brings the schema up to date, once however many instances start at the
 * same moment: the migrations run in one transaction holding an advisory
 * lock, so the second instance waits for the first to commit and then
 * finds nothing left to do. DDL in PostgreSQL is transactional: a failed
 * migration leaves the schema as it was.
 */
export async function migrate(sql: Sql, migrations: readonly PostgresMigration[] = POSTGRES_MIGRATIONS): Promise<number[]> {
  return transaction(sql, async (tx) => {
    await tx.query(`SELECT pg_advisory_xact_lock(${MIGRATION_LOCK})`);
    await tx.query(
      `CREATE TABLE IF NOT EXISTS carrierd_migrations (version integer PRIMARY KEY, name text NOT NULL, applied_at timestamptz NOT NULL DEFAULT now())`,
    );
    const applied = new Set((await tx.query<{ version: number }>(`SELECT version FROM carrierd_migrations`)).rows.map((row) => row.version));
    const ran: number[] = [];
    for (const migration of migrations) {
      if (applied.has(migration.version)) continue;
      // several statements in one string: the simple query protocol, without parameters
      await tx.query(migration.sql);
      await tx.query(`INSERT INTO carrierd_migrations (version, name) VALUES ($1, $2)`, [migration.version, migration.name]);
      ran.push(migration.version);
    }
    return ran;
  });
}
