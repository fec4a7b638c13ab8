import type { PostgresMigration } from "./migrations.js";

/** Session history, numbered as SQLite's (src/storage/sqlite/history-migrations.ts): each turn's TurnAudit, JSON as text. */
export const SESSION_HISTORY_MIGRATION: PostgresMigration = {
  version: 500,
  name: "turns keep their route, timings and replay decision",
  sql: "ALTER TABLE turns ADD COLUMN audit text;",
};
