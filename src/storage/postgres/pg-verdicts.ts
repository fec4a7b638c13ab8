import type { CarrierField } from "../../providers/contract.js";
import type { VerdictStorage } from "../storage.js";
import type { Verdict } from "../verdicts.js";
import type { Sql } from "./connection.js";
import { run, transaction } from "./run.js";

const FIELDS = `SELECT field FROM verdicts WHERE provider = $1 AND host = $2 AND model = $3`;
const UPSERT = `
  INSERT INTO verdicts (provider, host, model, field, status, message, recorded_at) VALUES ($1, $2, $3, $4, $5, $6, $7)
  ON CONFLICT (provider, host, model, field) DO UPDATE SET status = excluded.status, message = excluded.message, recorded_at = excluded.recorded_at`;
const ALL = `SELECT provider, host, model, field, status, message, recorded_at FROM verdicts ORDER BY recorded_at, provider, model, field`;
const ALL_FOR_UPDATE = `${ALL} FOR UPDATE`;
const DELETE_ONE = `DELETE FROM verdicts WHERE provider = $1 AND host = $2 AND model = $3 AND field = $4`;

/**
 * Verdicts, read from PostgreSQL per request (one indexed primary-key
 * probe): a verdict recorded on any instance is in force on every instance
 * for its next request, with no cache to go stale.
 */
export class PgVerdicts implements VerdictStorage {
  constructor(private readonly sql: Sql) {}

  async fieldsFor(provider: string, host: string, model: string): Promise<readonly CarrierField[]> {
    return (await run<{ field: CarrierField }>(this.sql, FIELDS, [provider, host, model])).map((row) => row.field);
  }

  async record(verdict: Omit<Verdict, "recorded_at">): Promise<Verdict> {
    const full: Verdict = { ...verdict, recorded_at: new Date().toISOString() };
    await run(this.sql, UPSERT, [full.provider, full.host, full.model, full.field, full.status, full.message, full.recorded_at]);
    return full;
  }

  async list(): Promise<Verdict[]> {
    return [...(await run<Verdict>(this.sql, ALL))];
  }

  async clear(predicate: (verdict: Verdict) => boolean): Promise<Verdict[]> {
    return transaction(this.sql, async (tx) => {
      const cleared = [...(await run<Verdict>(tx, ALL_FOR_UPDATE))].filter(predicate);
      for (const verdict of cleared) await run(tx, DELETE_ONE, [verdict.provider, verdict.host, verdict.model, verdict.field]);
      return cleared;
    });
  }
}
