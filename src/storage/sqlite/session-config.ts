import type { Statement } from "better-sqlite3";
import type { SessionModelConfig } from "../turns.js";
import type { Rejection, VerdictField } from "../verdicts.js";
import type { Db } from "./database.js";
import { foreignWrites, ReadCache } from "./foreign-writes.js";
import { parseJson, withoutRejections, withRejection } from "../rows.js";

/**
 * Per-session verdict config (`sessions.model_config`): the rejections a
 * session keeps so `--resume` keeps them. Read per request, so parsed
 * configs are kept in memory until another connection writes (ForeignWrites);
 * every own write empties them.
 */
export class SessionConfigSql {
  private readonly statements: {
    modelConfig: Statement<[string]>;
    insertSession: Statement<[string, string, string, string, string]>;
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
      insertSession: db.prepare(
        `INSERT OR IGNORE INTO sessions (id, key_hash, model, parent_id, model_config, created_at, updated_at) VALUES (?, ?, ?, NULL, '{}', ?, ?)`,
      ),
      setModelConfig: db.prepare(`UPDATE sessions SET model_config = ? WHERE id = ?`),
      configsWithRejections: db.prepare(`SELECT id, model_config FROM sessions WHERE model_config LIKE '%rejected_carriers%'`),
    };
  }

  /** The session's model config; read-only for the caller (it may be shared from memory). */
  modelConfig(sessionId: string): Readonly<SessionModelConfig> {
    return this.configs.get(sessionId, () => this.read(sessionId));
  }

  /**
   * The rejection's fields added to its session's config, the session made
   * first when it has no row yet (a rejection before its first turn):
   * read-modify-write in one transaction, so two requests of one session
   * cannot lose each other's fields.
   */
  addRejection(rejection: Rejection): void {
    this.settle();
    this.configs.clear();
    const now = new Date().toISOString();
    this.db.transaction(() => {
      this.statements.insertSession.run(rejection.sessionId, rejection.keyHash, rejection.clientModel, now, now);
      this.statements.setModelConfig.run(JSON.stringify(withRejection(this.read(rejection.sessionId), rejection)), rejection.sessionId);
    })();
  }

  /** Removes the rejected carriers `predicate` selects from every session's model config; returns how many sessions changed. */
  removeRejections(predicate: (verdict: VerdictField) => boolean): number {
    this.settle();
    this.configs.clear();
    let changed = 0;
    this.db.transaction(() => {
      for (const row of this.statements.configsWithRejections.all() as { id: string; model_config: string }[]) {
        const config = withoutRejections(row.model_config, predicate);
        if (!config) continue;
        this.statements.setModelConfig.run(JSON.stringify(config), row.id);
        changed++;
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
