import type { Statement } from "better-sqlite3";
import type { CarrierField } from "../../providers/contract.js";
import type { VerdictStorage } from "../storage.js";
import type { Rejection, Verdict, VerdictField } from "../verdicts.js";
import type { Db } from "./database.js";
import { foreignWrites, ReadCache } from "./foreign-writes.js";
import type { SessionConfigSql } from "./session-config.js";

/**
 * Unknown-field verdicts: (provider, host, model, field) that an upstream
 * rejected. Read per request, from memory while no other process has
 * written the database (ForeignWrites), so `carrierd verdicts clear` in
 * another process still takes effect on the next request without any
 * signal to the daemon. A session's own rejections are its config's
 * (SessionConfigSql).
 */
export class VerdictStore implements VerdictStorage {
  private readonly fieldsStatement: Statement<[string, string, string]>;
  private readonly upsert: Statement<[string, string, string, string, number, string, string]>;
  private readonly all: Statement<[]>;
  private readonly deleteOne: Statement<[string, string, string, string]>;
  /** Fields per `provider\0host\0model` (glob routes take any model name a client sends: bounded). */
  private readonly cached: ReadCache<CarrierField[]>;

  constructor(
    private readonly db: Db,
    private readonly configs: SessionConfigSql,
  ) {
    this.cached = new ReadCache(foreignWrites(db), 10_000);
    this.fieldsStatement = db.prepare(`SELECT field FROM verdicts WHERE provider = ? AND host = ? AND model = ?`);
    this.upsert = db.prepare(
      `INSERT INTO verdicts (provider, host, model, field, status, message, recorded_at) VALUES (?, ?, ?, ?, ?, ?, ?)
       ON CONFLICT (provider, host, model, field) DO UPDATE SET status = excluded.status, message = excluded.message, recorded_at = excluded.recorded_at`,
    );
    this.all = db.prepare(`SELECT provider, host, model, field, status, message, recorded_at FROM verdicts ORDER BY recorded_at, provider, model, field`);
    this.deleteOne = db.prepare(`DELETE FROM verdicts WHERE provider = ? AND host = ? AND model = ? AND field = ?`);
  }

  /** The fields rejected for this (provider, host, model). */
  fieldsFor(provider: string, host: string, model: string): readonly CarrierField[] {
    return this.cached.get(`${provider}\u0000${host}\u0000${model}`, () =>
      (this.fieldsStatement.all(provider, host, model) as { field: CarrierField }[]).map((row) => row.field),
    );
  }

  async record(rejection: Rejection): Promise<Verdict[]> {
    const recorded: Verdict[] = [];
    const { provider, host, model, status, message } = rejection;
    for (const field of rejection.fields) {
      const verdict = { provider, host, model, field, status, message, recorded_at: new Date().toISOString() };
      this.upsert.run(provider, host, model, field, status, message, verdict.recorded_at);
      recorded.push(verdict);
    }
    this.cached.clear();
    this.configs.addRejection(rejection);
    return recorded;
  }

  async list(): Promise<Verdict[]> {
    return this.listNow();
  }

  async clear(predicate: (verdict: VerdictField) => boolean): Promise<{ verdicts: Verdict[]; sessions: number }> {
    const verdicts = this.db.transaction(() => {
      const cleared = this.listNow().filter(predicate);
      for (const verdict of cleared) this.deleteOne.run(verdict.provider, verdict.host, verdict.model, verdict.field);
      this.cached.clear();
      return cleared;
    })();
    return { verdicts, sessions: this.configs.removeRejections(predicate) };
  }

  private listNow(): Verdict[] {
    return this.all.all() as Verdict[];
  }
}
