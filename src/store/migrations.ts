import type { Migration } from "./database.js";

/**
 * Migrations of the session store (versions 1–99). Other capabilities keep
 * theirs beside their code, in their own version range (responses: 100–199,
 * compaction: 200–299), and build-container passes them all to openDatabase.
 */
export const STORE_MIGRATIONS: readonly Migration[] = [
  {
    version: 1,
    name: "sessions, turns, fingerprints, verdicts",
    sql: `
      CREATE TABLE sessions (
        id           TEXT PRIMARY KEY,
        key_hash     TEXT NOT NULL,
        model        TEXT,
        parent_id    TEXT,
        -- JSON; holds "rejected_carriers" so a resumed session keeps its verdicts (SPEC §6)
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

      -- Fingerprints of what stateless clients keep (SPEC §12.6), scoped to a hash of the API key.
      CREATE TABLE fingerprints (
        key_hash    TEXT NOT NULL,
        fingerprint TEXT NOT NULL,
        turn_seq    INTEGER NOT NULL REFERENCES turns (seq) ON DELETE CASCADE,
        PRIMARY KEY (key_hash, fingerprint, turn_seq)
      ) WITHOUT ROWID;
      CREATE INDEX fingerprints_turn ON fingerprints (turn_seq);

      -- Unknown-field verdicts (SPEC §6, §12.7).
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
];
