import type { SessionConfigStorage } from "../storage.js";
import type { SessionModelConfig } from "../turns.js";
import type { Sql } from "./connection.js";
import { parseJson } from "./row-mapping.js";
import { run, transaction } from "./run.js";

const MODEL_CONFIG = `SELECT model_config FROM sessions WHERE id = $1`;
// the row stays locked until the patch is written: two instances patching one session take turns
const MODEL_CONFIG_FOR_UPDATE = `SELECT model_config FROM sessions WHERE id = $1 FOR UPDATE`;
const SET_MODEL_CONFIG = `UPDATE sessions SET model_config = $1 WHERE id = $2`;
const WITH_REJECTIONS = `SELECT id, model_config FROM sessions WHERE model_config LIKE '%rejected_carriers%' FOR UPDATE`;

/** Per-session verdict config, read from PostgreSQL each time: a patch on any instance is what the next read anywhere sees. */
export class PgSessionConfig implements SessionConfigStorage {
  constructor(private readonly sql: Sql) {}

  async modelConfig(sessionId: string): Promise<Readonly<SessionModelConfig>> {
    const [row] = await run<{ model_config: string }>(this.sql, MODEL_CONFIG, [sessionId]);
    return parseJson<SessionModelConfig>(row?.model_config) ?? {};
  }

  async patchModelConfig(sessionId: string, patch: (config: SessionModelConfig) => SessionModelConfig): Promise<void> {
    await transaction(this.sql, async (tx) => {
      const [row] = await run<{ model_config: string }>(tx, MODEL_CONFIG_FOR_UPDATE, [sessionId]);
      const next = patch(parseJson<SessionModelConfig>(row?.model_config) ?? {});
      await run(tx, SET_MODEL_CONFIG, [JSON.stringify(next), sessionId]);
    });
  }

  async removeRejections(predicate: (provider: string, host: string, model: string, field: string) => boolean): Promise<number> {
    return transaction(this.sql, async (tx) => {
      let changed = 0;
      for (const row of await run<{ id: string; model_config: string }>(tx, WITH_REJECTIONS)) {
        const config = parseJson<SessionModelConfig>(row.model_config) ?? {};
        const before = JSON.stringify(config.rejected_carriers ?? []);
        config.rejected_carriers = (config.rejected_carriers ?? [])
          .map(
            ([provider, host, model, fields]) =>
              [provider, host, model, fields.filter((field) => !predicate(provider, host, model, field))] as [string, string, string, string[]],
          )
          .filter((entry) => entry[3].length > 0);
        if (JSON.stringify(config.rejected_carriers) !== before) {
          await run(tx, SET_MODEL_CONFIG, [JSON.stringify(config), row.id]);
          changed++;
        }
      }
      return changed;
    });
  }
}
