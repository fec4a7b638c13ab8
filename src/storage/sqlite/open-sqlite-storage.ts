import { join } from "node:path";
import type { Logger } from "../../foundation/logging/logger.js";
import { BackgroundCheckpoint } from "./background-checkpoint.js";
import { openDatabase } from "./database.js";
import { SQLITE_MIGRATIONS } from "./migrations.js";
import { SqliteStorage } from "./sqlite-storage.js";
import { JOURNAL_FILE, TurnJournal } from "./turn-journal.js";

export interface SqliteStorageOptions {
  /** `$CARRIERD_HOME`: state.db and the turn journal live there. */
  readonly home: string;
  /** The database file instead of `home`/state.db (`:memory:` for a scratch store); then there is no journal. */
  readonly file?: string;
  /**
   * The gateway's storage: a turn completing alone is durable in the
   * journal before its commit, what a previous process journaled is
   * committed first, and WAL checkpoints run off the request path. Without
   * it (CLI commands) a turn is durable at its commit. `upstreamOpen`: see
   * JournaledTurns (the gateway's transport counts its open requests).
   */
  readonly gateway?: {
    readonly log: Logger;
    readonly walCheckpointMs?: number;
    readonly walLimitBytes?: number;
    readonly optimizeMs?: number;
    readonly upstreamOpen?: () => number;
  };
}

/**
 * The one way any process opens state.db: every migration (SQLITE_MIGRATIONS),
 * WAL mode, and the same durability rule for every write (durable when its
 * promise resolves), so the gateway and the CLI read and write it alike.
 */
export function openSqliteStorage(options: SqliteStorageOptions): SqliteStorage {
  const file = options.file ?? join(options.home, "state.db");
  const db = openDatabase(file, SQLITE_MIGRATIONS);
  const gateway = options.gateway;
  if (!gateway || file === ":memory:") return new SqliteStorage(db, undefined);
  try {
    const background = new BackgroundCheckpoint(db, file, gateway.log, {
      intervalMs: gateway.walCheckpointMs,
      walLimitBytes: gateway.walLimitBytes,
      optimizeMs: gateway.optimizeMs,
    });
    const storage = new SqliteStorage(db, background, {
      journal: new TurnJournal(join(options.home, JOURNAL_FILE)),
      log: gateway.log,
      upstreamOpen: gateway.upstreamOpen,
    });
    storage.writes.recoverJournal();
    storage.sessions.listOffThread(file, gateway.log);
    return storage;
  } catch (error) {
    db.close();
    throw error;
  }
}
