import type { Migration } from "./database.js";

/**
 * Prompt heads stored once (versions 600–699; src/storage/prompt-heads.ts,
 * docs/performance.md#prompt-heads-stored-once): a long run of leading
 * system and developer messages is one row of `prompt_heads`, keyed by the
 * SHA-256 of its JSON, and each turn that sent it names it in
 * `prompt_head`. Turns stored before keep their whole prompt (NULL head).
 * A head no turn names any more (its sessions removed) is removed with the
 * last of them.
 */
export const PROMPT_HEAD_MIGRATIONS: readonly Migration[] = [
  {
    version: 600,
    name: "a long system prompt is stored once, by hash",
    sql: `
      CREATE TABLE prompt_heads (
        hash TEXT PRIMARY KEY,
        text TEXT NOT NULL
      );
      ALTER TABLE turns ADD COLUMN prompt_head TEXT;
      -- whether a head is still named by a turn, when a session is removed: only turns with a head have an entry
      CREATE INDEX turns_prompt_head ON turns (prompt_head) WHERE prompt_head IS NOT NULL;
    `,
  },
];
