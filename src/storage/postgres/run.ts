import { createHash } from "node:crypto";
import type pg from "pg";
import type { Sql } from "./connection.js";
import { escapeParameter } from "./nul-escape.js";
import { guarded, isConnectionFailure, StoreUnavailableError } from "./store-unavailable.js";

/** The pool, or one connection holding a transaction: what a statement runs on. */
export type Runner = Sql | pg.PoolClient;

/** A statement's rows, and how many rows it wrote (for INSERT, UPDATE, DELETE). */
export type Rows<Row> = Row[] & { readonly count: number };

/**
 * The longest a statement may go unanswered. A server that went away
 * without a word (a network that drops packets, no reset) would otherwise
 * hold the request until TCP gives up, minutes later: past this the client
 * gets its 503. Every statement here takes milliseconds.
 */
export const STATEMENT_DEADLINE_MS = 10_000;

/** Statement names by text: computed once per statement, not per call. */
const names = new Map<string, string>();

/** The name a statement is prepared under on every connection (what `EXECUTE` and `EXPLAIN EXECUTE` call it by). */
export function statementName(text: string): string {
  let name = names.get(text);
  if (!name) {
    name = `carrierd_${createHash("sha1").update(text).digest("hex").slice(0, 16)}`;
    names.set(text, name);
  }
  return name;
}

/**
 * One statement, prepared once per connection (a named statement: its text
 * is a constant, the values go as parameters), its connection failures and
 * a deadline passed as StoreUnavailableError. String values are escaped so
 * a NUL can be stored (see nul-escape.ts); the pool's text parser undoes it.
 */
export function run<Row extends object = object>(on: Runner, text: string, values: readonly unknown[] = []): Promise<Rows<Row>> {
  return guarded(async () => {
    const result = await withDeadline(on.query<Row & pg.QueryResultRow>({ name: statementName(text), text, values: values.map(escapeParameter) }));
    return Object.assign(result.rows, { count: result.rowCount ?? 0 });
  });
}

/**
 * Statements as one transaction on one connection: all or none of their
 * writes are committed. A connection that failed is destroyed, not given
 * back to the pool.
 */
export async function transaction<T>(sql: Sql, body: (tx: pg.PoolClient) => Promise<T>): Promise<T> {
  const client = await guarded(() => withDeadline(sql.connect()));
  let broken: Error | undefined;
  // a checked-out connection whose server goes away emits "error" beside failing its query; the pool listens only
  // while a connection is idle, so without this listener a lost database would end the process instead of a 503
  const lost = (error: Error) => (broken ??= error);
  client.on("error", lost);
  try {
    await guarded(() => withDeadline(client.query("BEGIN")));
    const result = await body(client);
    await guarded(() => withDeadline(client.query("COMMIT")));
    return result;
  } catch (error) {
    if (error instanceof StoreUnavailableError || isConnectionFailure(error)) broken = error as Error;
    else await client.query("ROLLBACK").catch((rollback: Error) => (broken = rollback));
    throw error;
  } finally {
    client.off("error", lost);
    client.release(broken);
  }
}

function withDeadline<T>(answer: Promise<T>): Promise<T> {
  let timer: NodeJS.Timeout | undefined;
  const late = new Promise<never>((_, reject) => {
    timer = setTimeout(() => reject(new StoreUnavailableError(new Error(`no answer within ${STATEMENT_DEADLINE_MS} ms`))), STATEMENT_DEADLINE_MS);
  });
  return Promise.race([answer, late]).finally(() => clearTimeout(timer));
}
