import type { Migration } from "./database.js";

/**
 * The Responses API store (versions 100–199).
 *
 * A response row holds only what it added to its conversation (its input
 * and its output, as canonical chat messages) and a link to the response it
 * continued, so a long chain costs linear space; the history is one
 * recursive query up the links. A row stays as a link when its body is gone
 * (`store: false` inside a named conversation, or deleted), so deleting one
 * response never breaks a later one. Output items are kept apart so
 * `item_reference` inputs resolve by id.
 *
 * Version 100 was a development schema (whole conversation per row) that
 * never shipped; 101 replaces it.
 */
export const RESPONSES_MIGRATIONS: readonly Migration[] = [
  {
    version: 101,
    name: "responses, chained",
    sql: `
      DROP TABLE IF EXISTS response_items;
      DROP TABLE IF EXISTS responses;
      DROP TABLE IF EXISTS response_conversations;
      CREATE TABLE responses (
        id TEXT PRIMARY KEY,
        parent_id TEXT REFERENCES responses(id),
        session_id TEXT NOT NULL,
        model TEXT NOT NULL,
        created_at INTEGER NOT NULL,
        conversation_id TEXT,
        messages TEXT NOT NULL,
        body TEXT
      );
      CREATE TABLE response_items (
        id TEXT PRIMARY KEY,
        response_id TEXT NOT NULL REFERENCES responses(id),
        item TEXT NOT NULL
      );
      CREATE INDEX response_items_by_response ON response_items(response_id);
      CREATE TABLE response_conversations (
        id TEXT PRIMARY KEY,
        session_id TEXT NOT NULL,
        last_response_id TEXT NOT NULL REFERENCES responses(id),
        created_at INTEGER NOT NULL,
        updated_at INTEGER NOT NULL
      );
    `,
  },
  {
    version: 102,
    name: "responses keep their input items",
    // GET /v1/responses/{id}/input_items lists the items as the request gave them; rows from before stay without (an empty list)
    sql: "ALTER TABLE responses ADD COLUMN input_items TEXT;",
  },
  {
    version: 103,
    name: "responses and conversations belong to the key that created them",
    // the data scope of the access key (NULL on rows from before: the owner key's, which made every one of them)
    sql: "ALTER TABLE responses ADD COLUMN key_hash TEXT; ALTER TABLE response_conversations ADD COLUMN key_hash TEXT;",
  },
];
