import type { VerdictStorage } from "../storage.js";
import type { SessionModelConfig } from "../turns.js";
import type { Rejection, Verdict, VerdictField } from "../verdicts.js";
import { parseJson, withoutRejections, withRejection } from "../rows.js";
import type { Sql } from "./connection.js";
import { run, transaction } from "./run.js";

const UPSERT = `
  INSERT INTO verdicts (provider, host, model, field, status, message, recorded_at) VALUES ($1, $2, $3, $4, $5, $6, $7)
  ON CONFLICT (provider, host, model, field) DO UPDATE SET status = excluded.status, message = excluded.message, recorded_at = excluded.recorded_at`;
const ALL = `SELECT provider, host, model, field, status, message, recorded_at FROM verdicts ORDER BY recorded_at, provider, model, field`;
const ALL_FOR_UPDATE = `${ALL} FOR UPDATE`;
const DELETE_ONE = `DELETE FROM verdicts WHERE provider = $1 AND host = $2 AND model = $3 AND field = $4`;
const ENSURE_SESSION = `INSERT INTO sessions (id, key_hash, model, parent_id, model_config, created_at, updated_at) VALUES ($1, $2, $3, NULL, '{}', $4, $4) ON CONFLICT (id) DO NOTHING`;
// the row stays locked until the patch is written: two instances patching one session take turns
const MODEL_CONFIG_FOR_UPDATE = `SELECT model_config FROM sessions WHERE id = $1 FOR UPDATE`;
const SET_MODEL_CONFIG = `UPDATE sessions SET model_config = $1 WHERE id = $2`;
const WITH_REJECTIONS = `SELECT id, model_config FROM sessions WHERE model_config LIKE '%rejected_carriers%' FOR UPDATE`;

/**
 * Verdicts and the sessions' own rejections (their model config), read
 * from PostgreSQL per request through the lookup (one indexed primary-key
 * probe): a verdict recorded on any instance is in force on every instance
 * for its next request, with no cache to go stale.
 */
export class PgVerdicts implements VerdictStorage {
  constructor(private readonly sql: Sql) {}

  async record(rejection: Rejection): Promise<Verdict[]> {
    const { provider, host, model, status, message } = rejection;
    const recorded: Verdict[] = [];
    for (const field of rejection.fields) {
      const verdict: Verdict = { provider, host, model, field, status, message, recorded_at: new Date().toISOString() };
      await run(this.sql, UPSERT, [provider, host, model, field, status, message, verdict.recorded_at]);
      recorded.push(verdict);
    }
    await run(this.sql, ENSURE_SESSION, [rejection.sessionId, rejection.keyHash, rejection.clientModel, new Date().toISOString()]);
    await transaction(this.sql, async (tx) => {
      const [row] = await run<{ model_config: string }>(tx, MODEL_CONFIG_FOR_UPDATE, [rejection.sessionId]);
      const next = withRejection(parseJson<SessionModelConfig>(row?.model_config) ?? {}, rejection);
      await run(tx, SET_MODEL_CONFIG, [JSON.stringify(next), rejection.sessionId]);
    });
    return recorded;
  }

  async list(): Promise<Verdict[]> {
    return [...(await run<Verdict>(this.sql, ALL))];
  }

  async clear(predicate: (verdict: VerdictField) => boolean): Promise<{ verdicts: Verdict[]; sessions: number }> {
    const verdicts = await transaction(this.sql, async (tx) => {
      const cleared = [...(await run<Verdict>(tx, ALL_FOR_UPDATE))].filter(predicate);
      for (const verdict of cleared) await run(tx, DELETE_ONE, [verdict.provider, verdict.host, verdict.model, verdict.field]);
      return cleared;
    });
    const sessions = await transaction(this.sql, async (tx) => {
      let changed = 0;
      for (const row of await run<{ id: string; model_config: string }>(tx, WITH_REJECTIONS)) {
        const config = withoutRejections(row.model_config, predicate);
        if (!config) continue;
        await run(tx, SET_MODEL_CONFIG, [JSON.stringify(config), row.id]);
        changed++;
      }
      return changed;
    });
    return { verdicts, sessions };
  }
}
