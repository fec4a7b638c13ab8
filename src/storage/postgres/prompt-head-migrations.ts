import type { PostgresMigration } from "./migrations.js";

/** Prompt heads stored once, as SQLite's (src/storage/sqlite/prompt-head-migrations.ts), numbered alike. */
export const PROMPT_HEAD_MIGRATION: PostgresMigration = {
  version: 600,
  name: "a long system prompt is stored once, by hash",
  sql: `
    CREATE TABLE prompt_heads (
      hash text PRIMARY KEY,
      text text NOT NULL
    );
    ALTER TABLE turns ADD COLUMN prompt_head text;
    CREATE INDEX turns_prompt_head ON turns (prompt_head) WHERE prompt_head IS NOT NULL;
  `,
};
