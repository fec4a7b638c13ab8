import type { PostgresMigration } from "./migrations.js";

/**
 * Envelope keys, as SQLite's (src/storage/sqlite/envelope-key-migrations.ts),
 * numbered alike: one row per generation, written once, never updated; the
 * generation as primary key lets instances that add the same generation at
 * the same moment agree on one row.
 */
export const ENVELOPE_KEY_MIGRATION: PostgresMigration = {
  version: 400,
  name: "envelope keys",
  sql: `
    CREATE TABLE envelope_keys (
      generation integer PRIMARY KEY,
      key_id     text NOT NULL UNIQUE,
      secret     bytea NOT NULL,
      created_at bigint NOT NULL
    );
  `,
};
