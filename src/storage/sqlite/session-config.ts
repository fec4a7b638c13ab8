import type { Statement } from "better-sqlite3";
import type { SessionModelConfig } from "../turns.js";
import type { Db } from "./database.js";
import { foreignWrites, ReadCache } from "./foreign-writes.js";
import { parseJson } from "./row-mapping.js";

/**
 * Per-session verdict config (`sessions.model_config`): the rejections a
 * session keeps so `--resume` keeps them. Read per request, so parsed
 * configs are kept in memory until another connection writes (ForeignWrites);
 * every own write empties them.
 */
export class SessionConfigSql {
  private readonly statements: {
    modelConfig: Statement<[string]>;
    setModelConfig: Statement<[string, string]>;
    configsWithRejections: Statement<[]>;
  };
  private readonly configs: ReadCache<SessionModelConfig>;

  constructor(
    private readonly db: Db,
    private readonly settle: () => void,
  ) {
    this.configs = new ReadCache(foreignWrites(db), 50_000);
    this.statements = {
      modelConfig: db.prepare(`SELECT model_config FROM sessions WHERE id = ?`),
      setModelConfig: db.prepare(`UPDATE sessions SET model_config = ? WHERE id = ?`),
      configsWithRejections: db.prepare(`SELECT id, model_config FROM sessions WHERE model_config LIKE '%rejected_carriers%'`),
    };
  }

  /** The session's model config; read-only for the caller (it may be shared from memory). */
  modelConfig(sessionId: string): Readonly<SessionModelConfig> {
    return this.configs.get(sessionId, () => this.read(sessionId));
  }

  /** Read-modify-write in one transaction, so two requests of one session cannot lose each other's patch. */
  patchModelConfig(sessionId: string, patch: (config: SessionModelConfig) => SessionModelConfig): void {
    this.settle();
    this.configs.clear();
    this.db.transaction(() => {
      const next = patch(this.read(sessionId));
      this.statements.setModelConfig.run(JSON.stringify(next), sessionId);
    })();
  }

  /** Removes rejected carriers matching `predicate` from every session's model config (verdict clearing). */
  removeRejections(predicate: (provider: string, host: string, model: string, field: string) => boolean): number {
    this.settle();
    this.configs.clear();
    let changed = 0;
    this.db.transaction(() => {
      for (const row of this.statements.configsWithRejections.all() as { id: string; model_config: string }[]) {
        const config = parseJson<SessionModelConfig>(row.model_config) ?? {};
        const before = JSON.stringify(config.rejected_carriers ?? []);
        config.rejected_carriers = (config.rejected_carriers ?? [])
          .map(
            ([provider, host, model, fields]) =>
              [provider, host, model, fields.filter((field) => !predicate(provider, host, model, field))] as [string, string, string, string[]],
          )
          .filter((entry) => entry[3].length > 0);
        if (JSON.stringify(config.rejected_carriers) !== before) {
          this.statements.setModelConfig.run(JSON.stringify(config), row.id);
          changed++;
        }
      }
    })();
    return changed;
  }

  /** A session's row changed outside this class (removed, or a branch made under its id): its config is read again. */
  forget(sessionId: string): void {
    this.configs.delete(sessionId);
  }

  private read(sessionId: string): SessionModelConfig {
    this.settle();
    const row = this.statements.modelConfig.get(sessionId) as { model_config: string } | undefined;
    return parseJson<SessionModelConfig>(row?.model_config) ?? {};
  }
}
