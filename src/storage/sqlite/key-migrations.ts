import type { Migration } from "./database.js";

/**
 * Access keys (versions 300–399). `key_revision` is one row every create,
 * revoke and rotate bumps in the same transaction: each gateway polls it
 * (one indexed read) and reloads the keys only when it moved, so a
 * revocation made by another process is in force within one poll.
 * Usage counts are written apart and do not bump it.
 */
export const KEY_MIGRATIONS: readonly Migration[] = [
  {
    version: 300,
    name: "access keys",
    sql: `
      CREATE TABLE access_keys (
        name         TEXT PRIMARY KEY,
        secret_hash  TEXT NOT NULL UNIQUE,
        data_scope   TEXT NOT NULL,
        scopes       TEXT NOT NULL,
        models       TEXT NOT NULL,
        events_of    TEXT NOT NULL,
        created_at   INTEGER NOT NULL,
        expires_at   INTEGER,
        revoked_at   INTEGER,
        rotated_at   INTEGER,
        last_used_at INTEGER,
        requests     INTEGER NOT NULL DEFAULT 0
      );
      CREATE TABLE key_revision (id INTEGER PRIMARY KEY CHECK (id = 1), revision INTEGER NOT NULL);
      INSERT INTO key_revision (id, revision) VALUES (1, 0);
    `,
  },
];
