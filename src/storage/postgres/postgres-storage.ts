import type { CheckpointStorage, EnvelopeKeyStorage, KeyStorage, ResponseStorage, SessionStorage, Storage, TurnStorage, VerdictStorage } from "../storage.js";
import { DEFAULT_STORE_POOL_SIZE, redactStoreUrl } from "../../foundation/config/store-choice.js";
import { connect, type Sql } from "./connection.js";
import { migrate } from "./migrations.js";
import { PgCheckpoints } from "./pg-checkpoints.js";
import { PgEnvelopeKeys } from "./pg-envelope-keys.js";
import { PgKeys } from "./pg-keys.js";
import { PgResponses } from "./pg-responses.js";
import { PgSessions } from "./pg-sessions.js";
import { PgTurns } from "./pg-turns.js";
import { PgVerdicts } from "./pg-verdicts.js";
import { run } from "./run.js";
import { SourceCache } from "./source-cache.js";
import { isConnectionFailure, StoreUnavailableError } from "./store-unavailable.js";

export interface PostgresStorageOptions {
  readonly url: string;
  /** Connections this process opens at most (DEFAULT_STORE_POOL_SIZE when unset). */
  readonly poolSize?: number;
  /** Seconds a connect may take before the store counts as unavailable (5 when unset). */
  readonly connectTimeoutSeconds?: number;
}

/** PostgreSQL could not be reached (or refused us) at start: one line says which server and why. */
export class StoreUnreachableError extends Error {
  constructor(url: string, cause: unknown) {
    super(`cannot reach the PostgreSQL store at ${redactStoreUrl(url)}: ${cause instanceof Error ? cause.message : String(cause)}`, { cause });
    this.name = "StoreUnreachableError";
  }
}

/**
 * The Storage port over PostgreSQL: every instance of the gateway and
 * every CLI command, on any machine, reads and writes the same rows. A
 * write resolves once it is committed (one statement, or one transaction),
 * so read-your-writes holds across instances with nothing to wait for, and
 * `committed()` has nothing left to do.
 */
export class PostgresStorage implements Storage {
  readonly turns: TurnStorage;
  readonly sessions: SessionStorage;
  readonly verdicts: VerdictStorage;
  readonly responses: ResponseStorage;
  readonly checkpoints: CheckpointStorage;
  readonly keys: KeyStorage;
  readonly envelopeKeys: EnvelopeKeyStorage;
  private closed = false;

  /** The carriers of turns read before, as the objects built for them then (see SourceCache: never stale). */
  private readonly sources = new SourceCache();

  /** `listSql`: a pool of its own for session lists (one connection), so a search never holds a connection a turn waits for. */
  constructor(
    readonly sql: Sql,
    private readonly listSql?: Sql,
  ) {
    this.turns = new PgTurns(sql, this.sources);
    this.sessions = new PgSessions(sql, listSql);
    this.verdicts = new PgVerdicts(sql);
    this.responses = new PgResponses(sql);
    this.checkpoints = new PgCheckpoints(sql);
    this.keys = new PgKeys(sql);
    this.envelopeKeys = new PgEnvelopeKeys(sql);
  }

  async committed(): Promise<void> {}

  /** Whether the server answers now (for /health): one trivial statement, bounded by the connect timeout. */
  async reachable(): Promise<boolean> {
    try {
      await run(this.sql, "SELECT 1");
      return true;
    } catch {
      return false;
    }
  }

  async close(): Promise<void> {
    if (this.closed) return;
    this.closed = true;
    await Promise.all([this.sql.end(), this.listSql?.end()]);
  }
}

/** Connects, migrates (once across instances starting together, see migrate) and returns the storage. */
export async function openPostgresStorage(options: PostgresStorageOptions): Promise<PostgresStorage> {
  const sql = connect({ url: options.url, poolSize: options.poolSize ?? DEFAULT_STORE_POOL_SIZE, connectTimeoutSeconds: options.connectTimeoutSeconds ?? 5 });
  try {
    await migrate(sql);
  } catch (error) {
    await sql.end().catch(() => {});
    if (error instanceof StoreUnavailableError) throw new StoreUnreachableError(options.url, error.cause);
    if (isConnectionFailure(error) || isAuthOrMissingDatabase(error)) throw new StoreUnreachableError(options.url, error);
    throw error;
  }
  return new PostgresStorage(sql, connect({ url: options.url, poolSize: 1, connectTimeoutSeconds: options.connectTimeoutSeconds ?? 5 }));
}

// 28xxx: invalid authorization; 3D000: the database does not exist
function isAuthOrMissingDatabase(error: unknown): boolean {
  const code = (error as { code?: unknown } | undefined)?.code;
  return typeof code === "string" && (code.startsWith("28") || code === "3D000");
}
