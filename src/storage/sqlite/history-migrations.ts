import type { Migration } from "./database.js";

/**
 * Session history (versions 500–599): each turn keeps what the gateway
 * decided and measured for it (TurnAudit, JSON), null for turns stored
 * before.
 */
export const SESSION_HISTORY_MIGRATIONS: readonly Migration[] = [
  { version: 500, name: "turns keep their route, timings and replay decision", sql: "ALTER TABLE turns ADD COLUMN audit TEXT;" },
];
