import pg from "pg";
import { unescapeNul } from "./nul-escape.js";

// the OID of `text`: every string column carrierd keeps
const TEXT_OID = 25;

/** A column's parser: the driver's, except that `text` columns are unescaped (see nul-escape.ts). Queries here use the text format. */
function parserFor(oid: number): (value: string) => unknown {
  if (oid === TEXT_OID) return unescapeNul;
  return pg.types.getTypeParser(oid, "text") as (value: string) => unknown;
}

/** The driver's parsers with parserFor's change, for this pool only (the driver's global table is left alone). */
const types: pg.CustomTypesConfig = { getTypeParser: parserFor };

/** One instance's connections to PostgreSQL: a bounded pool. */
export type Sql = pg.Pool;

export interface PostgresConnectionOptions {
  /** `postgres://user:password@host:port/database?…` (libpq's URL form, `options=-c search_path=…` included) */
  readonly url: string;
  /** Connections this instance opens at most: N instances use at most N × poolSize of the server's `max_connections`. */
  readonly poolSize: number;
  /** How long a statement may wait for a connection to be made before the store counts as unavailable. */
  readonly connectTimeoutSeconds: number;
}

/**
 * A bounded pool on the URL. Each statement is prepared once per
 * connection under a name derived from its text (see run.ts). bigint
 * columns come back as strings; callers turn them into numbers where a
 * number is meant. `text` columns are read through unescapeNul, the
 * inverse of what run() does to every string it sends.
 */
export function connect(options: PostgresConnectionOptions): Sql {
  const pool = new pg.Pool({
    connectionString: options.url,
    max: options.poolSize,
    connectionTimeoutMillis: options.connectTimeoutSeconds * 1000,
    // an idle connection is closed after a minute, so an instance at rest holds few of the server's slots
    idleTimeoutMillis: 60_000,
    keepAlive: true,
    application_name: "carrierd",
    types,
  });
  // an idle connection the server or the network dropped: the pool discards it and opens a new one when next needed;
  // the statements that needed it get their own error (StoreUnavailableError)
  pool.on("error", () => {});
  // Never a sequential scan where an index serves. Every statement on the request path reads by an index, and a
  // prepared statement keeps the plan it was first given: one made while the store was nearly empty (a new store,
  // before autovacuum's first ANALYZE) would read turns and sessions by sequential scans that grow with every turn
  // stored. With this setting the first plan is the index plan and stays right at any size, so it can be kept (the
  // default plan_cache_mode): planning the request's read anew for each request costs the server more than running
  // it. Statements that no index serves (operator listings) still scan: the setting adds a cost, it forbids nothing.
  // Queued on the connection, so it runs before the statement that opened it; a failure surfaces there.
  pool.on("connect", (client) => void client.query("SET enable_seqscan = off").catch(() => {}));
  return pool;
}
