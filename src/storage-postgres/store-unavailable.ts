/**
 * PostgreSQL could not answer: the server is unreachable, refused the
 * connection, or dropped it mid-statement. The gateway answers 503
 * `store_unavailable` for it; a statement that failed this way wrote
 * nothing (each write is one statement or one transaction).
 */
export class StoreUnavailableError extends Error {
  readonly code = "store_unavailable";

  constructor(cause: unknown) {
    super(`the PostgreSQL store is unavailable: ${cause instanceof Error ? cause.message : String(cause)}`, { cause });
    this.name = "StoreUnavailableError";
  }
}

// errors of the connection, not of the statement (https://github.com/porsager/postgres#connection-details, and
// SQLSTATE classes 08 connection exception, 57P operator intervention, 53 insufficient resources)
const CONNECTION_CODES = new Set(["CONNECT_TIMEOUT", "CONNECTION_CLOSED", "CONNECTION_DESTROYED", "CONNECTION_ENDED", "ECONNREFUSED", "ECONNRESET", "ETIMEDOUT", "EHOSTUNREACH", "ENOTFOUND", "EPIPE"]);

/** Whether a driver error means the store is unreachable rather than that the statement was wrong. */
export function isConnectionFailure(error: unknown): boolean {
  if (!(error instanceof Error)) return false;
  const code = (error as { code?: unknown }).code;
  if (typeof code !== "string") return false;
  return CONNECTION_CODES.has(code) || code.startsWith("08") || code.startsWith("57P") || code.startsWith("53");
}

/** Runs one store operation; a connection failure surfaces as StoreUnavailableError, anything else as it was. */
export async function guarded<T>(operation: () => Promise<T>): Promise<T> {
  try {
    return await operation();
  } catch (error) {
    throw isConnectionFailure(error) ? new StoreUnavailableError(error) : error;
  }
}
