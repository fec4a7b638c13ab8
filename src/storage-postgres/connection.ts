import postgres from "postgres";

/** One instance's connections to PostgreSQL: the driver's client, a bounded pool. */
export type Sql = postgres.Sql;

export interface PostgresConnectionOptions {
  /** `postgres://user:password@host:port/database?…` */
  readonly url: string;
  /** Connections this instance opens at most: N instances use at most N × poolSize of the server's `max_connections`. */
  readonly poolSize: number;
  /** How long a statement may wait for a connection (and the server for a connect) before the store counts as unavailable. */
  readonly connectTimeoutSeconds: number;
}


/**
 * A bounded pool on the URL. Every statement is prepared once per
 * connection (the driver keys prepared statements by their text, and every
 * statement here is a constant), and answers bigint columns as strings,
 * which callers turn into numbers where a number is meant.
 */
export function connect(options: PostgresConnectionOptions): Sql {
  return postgres(options.url, {
    max: options.poolSize,
    prepare: true,
    connect_timeout: options.connectTimeoutSeconds,
    // an idle connection is closed after a minute, so an instance at rest holds none of the server's slots for long
    idle_timeout: 60,
    // "relation already exists, skipping" and the like: migrations are idempotent on purpose
    onnotice: () => {},
    connection: { application_name: "carrierd" },
  });
}
