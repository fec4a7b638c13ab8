import type postgres from "postgres";
import type { Sql } from "./connection.js";
import { guarded } from "./store-unavailable.js";

/** A connection or a transaction: what a statement runs on. */
export type Runner = Sql | postgres.TransactionSql;

/**
 * One statement, prepared once per connection (its text is a constant, the
 * values go as parameters), its connection failures as StoreUnavailableError.
 */
export function run<Row extends object = object>(on: Runner, text: string, values: readonly unknown[] = []): Promise<Rows<Row>> {
  return guarded(() => on.unsafe(text, values as postgres.ParameterOrJSON<never>[], { prepare: true }) as unknown as Promise<Rows<Row>>);
}

/** A statement's rows, and how many rows it wrote (for INSERT, UPDATE, DELETE). */
export type Rows<Row> = Row[] & { readonly count: number };

/** Statements as one transaction: all or none of their writes are committed; connection failures as StoreUnavailableError. */
export function transaction<T>(sql: Sql, body: (tx: postgres.TransactionSql) => Promise<T>): Promise<T> {
  return guarded(() => sql.begin(body) as Promise<T>);
}
