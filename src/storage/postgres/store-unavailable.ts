import { GatewayError } from "../../foundation/errors/gateway-error.js";

/**
 * PostgreSQL could not answer: the server is unreachable, refused the
 * connection, or dropped it mid-statement. The client gets an OpenAI-shaped
 * 503 `store_unavailable`; a statement that failed this way wrote nothing
 * (each write is one statement or one transaction, committed or not at all).
 */
export class StoreUnavailableError extends GatewayError {
  constructor(cause: unknown) {
    super("store_unavailable", "the state store (PostgreSQL) is unavailable; try again, or another instance", null, { cause });
    this.name = "StoreUnavailableError";
  }
}

// errors of the connection, not of the statement: the socket's codes, and SQLSTATE classes 08 (connection exception),
// 57P (operator intervention: the backend was terminated, the server shuts down) and 53 (insufficient resources:
// too many connections)
const CONNECTION_CODES = new Set(["ECONNREFUSED", "ECONNRESET", "ETIMEDOUT", "EHOSTUNREACH", "ENETUNREACH", "ENOTFOUND", "EAI_AGAIN", "EPIPE"]);
// node-postgres says these in words only (no code): a connect that timed out, a connection that ended under a query
const CONNECTION_MESSAGES = /timeout exceeded when trying to connect|Connection terminated|not queryable|Client was closed|Connection ended/i;

/** Whether a driver error means the store is unreachable rather than that the statement was wrong. */
export function isConnectionFailure(error: unknown): boolean {
  if (!(error instanceof Error) || error instanceof StoreUnavailableError) return false;
  const code = (error as { code?: unknown }).code;
  if (typeof code === "string" && (CONNECTION_CODES.has(code) || code.startsWith("08") || code.startsWith("57P") || code.startsWith("53"))) return true;
  return CONNECTION_MESSAGES.test(error.message);
}

/** Runs one store operation; a connection failure surfaces as StoreUnavailableError, anything else as it was. */
export async function guarded<T>(operation: () => Promise<T>): Promise<T> {
  try {
    return await operation();
  } catch (error) {
    throw isConnectionFailure(error) ? new StoreUnavailableError(error) : error;
  }
}
