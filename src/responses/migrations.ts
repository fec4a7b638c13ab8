import type { Migration } from "../store/database.js";

/**
 * The Responses API store (versions 100–199). A response row keeps the whole
 * conversation it ended (canonical chat messages), so continuing from it
 * never walks a chain and deleting one response never breaks another.
 * Output items are kept apart so `item_reference` inputs resolve by id.
 */
export const RESPONSES_MIGRATIONS: readonly Migration[] = [
  {
    version: 100,
    name: "responses",
    sql: `
      CREATE TABLE responses (
        id TEXT PRIMARY KEY,
        session_id TEXT NOT NULL,
        model TEXT NOT NULL,
        created_at INTEGER NOT NULL,
        previous_response_id TEXT,
        conversation_id TEXT,
        messages TEXT NOT NULL,
        body TEXT NOT NULL
      );
      CREATE TABLE response_items (
        id TEXT PRIMARY KEY,
        response_id TEXT NOT NULL REFERENCES responses(id) ON DELETE CASCADE,
        item TEXT NOT NULL
      );
      CREATE INDEX response_items_by_response ON response_items(response_id);
      CREATE TABLE response_conversations (
        id TEXT PRIMARY KEY,
        session_id TEXT NOT NULL,
        messages TEXT NOT NULL,
        last_response_id TEXT,
        created_at INTEGER NOT NULL,
        updated_at INTEGER NOT NULL
      );
    `,
  },
];
