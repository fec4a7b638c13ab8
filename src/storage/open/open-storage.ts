import type { Logger } from "../../foundation/logging/logger.js";
import type { StoreChoice } from "../../foundation/config/store-choice.js";
import type { Storage } from "../storage.js";
import { openPostgresStorage } from "../postgres/postgres-storage.js";
import { openSqliteStorage } from "../sqlite/open-sqlite-storage.js";

export { StoreUnreachableError } from "../postgres/postgres-storage.js";

export interface OpenStorageOptions {
  /** `$CARRIERD_HOME` (state.db and the journal live there with the SQLite store). */
  readonly home: string;
  /** The gateway's storage (see SqliteStorageOptions.gateway); CLI commands leave it out. */
  readonly gateway?: {
    readonly log: Logger;
    readonly walCheckpointMs?: number;
    readonly walLimitBytes?: number;
    /** How many requests the gateway has open upstream now (SqliteStorageOptions.gateway). */
    readonly upstreamOpen?: () => number;
  };
}

/**
 * The one place a process (the gateway, any CLI command) opens its state,
 * from the configured store: SQLite in `$CARRIERD_HOME`, or PostgreSQL at
 * its URL (migrated under the advisory lock, a pool of `poolSize`). A
 * PostgreSQL that cannot be reached throws StoreUnreachableError.
 */
export async function openStorage(choice: StoreChoice | undefined, options: OpenStorageOptions): Promise<Storage> {
  if (choice?.kind === "postgres") return openPostgresStorage({ url: choice.url, poolSize: choice.poolSize });
  return openSqliteStorage({ home: options.home, gateway: options.gateway });
}
