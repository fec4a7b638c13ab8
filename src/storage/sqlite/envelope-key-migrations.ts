import type { Migration } from "./database.js";

/**
 * Envelope keys (versions 400–499): the keys that seal encrypted_content
 * envelopes, one row per generation, written once and never updated. The
 * generation is the primary key, so two instances that create the first
 * key (or rotate) at the same moment keep one row and agree on it.
 */
export const ENVELOPE_KEY_MIGRATIONS: readonly Migration[] = [
  {
    version: 400,
    name: "envelope keys",
    sql: `
      CREATE TABLE envelope_keys (
        generation INTEGER PRIMARY KEY,
        key_id     TEXT NOT NULL UNIQUE,
        secret     BLOB NOT NULL,
        created_at INTEGER NOT NULL
      );
    `,
  },
];
