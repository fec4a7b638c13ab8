import { COMPACTION_MIGRATIONS } from "./compaction-migrations.js";
import type { Migration } from "./database.js";
import { ENVELOPE_KEY_MIGRATIONS } from "./envelope-key-migrations.js";
import { KEY_MIGRATIONS } from "./key-migrations.js";
import { PROMPT_HEAD_MIGRATIONS } from "./prompt-head-migrations.js";
import { RESPONSES_MIGRATIONS } from "./responses-migrations.js";
import { SESSION_HISTORY_MIGRATIONS } from "./history-migrations.js";
import { SESSION_MIGRATIONS } from "./session-migrations.js";

/**
 * Every migration of state.db, in one list: the gateway and every CLI
 * command open it through openSqliteStorage with all of them, so no process
 * ever reads a schema another has not finished.
 */
export const SQLITE_MIGRATIONS: readonly Migration[] = [
  ...SESSION_MIGRATIONS,
  ...RESPONSES_MIGRATIONS,
  ...COMPACTION_MIGRATIONS,
  ...KEY_MIGRATIONS,
  ...ENVELOPE_KEY_MIGRATIONS,
  ...SESSION_HISTORY_MIGRATIONS,
  ...PROMPT_HEAD_MIGRATIONS,
];
